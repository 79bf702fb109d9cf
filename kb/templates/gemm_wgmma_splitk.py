"""C = A @ B on Hopper (bf16 in, f32 out): gemm_wgmma_tma_store.py with a split-K tail, two
launches (KB template gemm_wgmma_splitk, a pipeline: gemm_splitk_dp, then gemm_splitk_tail).

Wave quantization: 128 x 256 tiles of 4096 x 14336 are 1792 = 13 waves of 132 blocks and 76
tiles, a 14th wave that leaves 56 SMs idle. Here the first DP = TILES // SMS * SMS tiles (13 full
waves) run as in gemm_wgmma_tma_store (gemm_splitk_dp); the TILES - DP tail tiles are split along
K into SPLITK units of KT / SPLITK k-steps each (unit u: tile DP + u // SPLITK, k-steps from
(u % SPLITK) * KT / SPLITK), dealt round-robin to up to SMS blocks of the second launch
(gemm_splitk_tail), which adds its f32 partial tile into C with the copy engine's reduction
(tma_store(..., reduce="add")). SPLITK = 4 turns the 76-tile tail into 304 units of 16 k-steps:
3 rounds of 1/4 tile, 0.75 tile times instead of 1.

Measured on the H200 (docs/perf.md "SK"), it does not pay at 4096 x 14336 x 4096: the launch
boundary costs ~8 us and each round of reduce-add epilogues (128 KB of f32 partials per block)
~4 us, more than the 0.25-0.4 tile times (11-18 us) the finer tail saves; at 8192^3 it is at
parity with the single-launch kernel.

The adds need zeros under them: the producer warp group's idle warps 2 and 3 of gemm_splitk_dp
zero the tail tiles (plain stores, each block its share), and the launch boundary orders those
zeros before every add of gemm_splitk_tail. The verifier checks each launch's data flow (the
tags of the operands, the stored tile, the pipeline); that the units of a tail tile cover its K
range exactly once and that the tail was zeroed first is global-memory reasoning it does not do
(docs/verifier.md), the interpreter test and the runner's check do.

N must be a multiple of BN (no shifted last column tile: its overlap would be added twice) and
KT = K / BK a multiple of SPLITK (every unit has the same trip count)."""


@kernel(threads=384, arch="sm_90a")
def gemm_splitk_dp(A: Tensor[bf16, "M", "K"], B: Tensor[bf16, "K", "N"], C: Tensor[f32, "M", "N"],
                   BM: const = 128, BN: const = 256, BK: const = 64, STAGES: const = 4,
                   SMS: const = 132, GROUP: const = 16, EBUFS: const = 2, SPLITK: const = 4):
    grid(min(cdiv(M, BM) * cdiv(N, BN), SMS))
    sA = shared(bf16, (STAGES, BM, BK), swizzle=Swizzle(3, 3, 3))
    sB = shared(bf16, (STAGES, BN // 64, BK, 64), swizzle=Swizzle(3, 3, 3))
    sC = shared(f32, (2, EBUFS, 64, 32), swizzle=Swizzle(3, 2, 3))
    full = mbarrier(STAGES)
    empty = mbarrier(STAGES, arrivals=2)
    TM = cdiv(M, BM)
    TN = cdiv(N, BN)
    KT = cdiv(K, BK)
    EN = BN // 32
    DP = TM * TN // SMS * SMS
    ntiles = cdiv(DP - block_id(0), grid_dim(0))
    if warpgroup_id() == 0:
        setmaxnreg(40)
        if thread_id() == 0:
            for i in range(ntiles):
                t = block_id(0) + i * grid_dim(0)
                first = t // (GROUP * TN) * GROUP
                rows = min(TM - first, GROUP)
                bm = first + t % (GROUP * TN) % rows
                bn = t % (GROUP * TN) // rows
                for k in range(KT):
                    it = i * KT + k
                    s = it % STAGES
                    mbarrier_wait(empty[s], (it // STAGES + 1) % 2)
                    mbarrier_arrive_expect_tx(full[s], (BM * BK + BK * BN) * 2)
                    tma_load(A.tile((BM, BK), (bm, k)), sA[s], full[s])
                    for j in range(BN // 64):
                        tma_load(B.tile((BK, 64), (k, bn * (BN // 64) + j)), sB[s, j], full[s])
        elif thread_id() >= 64:
            # Zero this block's share of the tail tiles for gemm_splitk_tail's adds.
            z = thread_id() - 64
            nz = cdiv(TM * TN - DP - block_id(0), grid_dim(0))
            for q in range(nz):
                t = DP + block_id(0) + q * grid_dim(0)
                first = t // (GROUP * TN) * GROUP
                rows = min(TM - first, GROUP)
                bm = first + t % (GROUP * TN) % rows
                bn = t % (GROUP * TN) // rows
                for e in range(BM * BN // 64):
                    C[bm * BM + e // (BN // 64), bn * BN + e % (BN // 64) * 64 + z] = 0.0
    else:
        setmaxnreg(232)
        wg = warpgroup_id() - 1
        for i in range(ntiles):
            t = block_id(0) + i * grid_dim(0)
            first = t // (GROUP * TN) * GROUP
            rows = min(TM - first, GROUP)
            bm = first + t % (GROUP * TN) % rows
            bn = t % (GROUP * TN) // rows
            acc = fragment(f32, (BM, BN), mma="wgmma_bf16", warpgroups=(2, 1), first_warpgroup=1)
            for k in range(KT):
                it = i * KT + k
                s = it % STAGES
                mbarrier_wait(full[s], (it // STAGES) % 2)
                a = wgmma_operand(sA[s], acc, operand="A")
                b = wgmma_operand(sB[s], acc, operand="B")
                assert_tag(a, lambda r, c: A(bm * BM + r, k * BK + c))
                assert_tag(b, lambda r, c: B(k * BK + r, bn * BN + c))
                wgmma(acc, a, b)
                wgmma_commit()
                wgmma_wait(1)
                if k > 0 and thread_id() % 128 == 0:
                    mbarrier_arrive(empty[(it - 1) % STAGES])
            wgmma_wait(0)
            if thread_id() % 128 == 0:
                mbarrier_arrive(empty[(i * KT + KT - 1) % STAGES])
            for j in range(EN):
                e = i * EN + j
                if thread_id() % 128 == 0:
                    tma_store_wait(EBUFS - 1)
                warpgroup_barrier()
                store(acc, sC[wg, e % EBUFS], at=(wg, j))
                fence_proxy_async()
                warpgroup_barrier()
                if thread_id() % 128 == 0:
                    tma_store(sC[wg, e % EBUFS], C.tile((64, 32), (bm * 2 + wg, bn * EN + j)))
                    tma_store_commit()
        if thread_id() % 128 == 0:
            tma_store_wait(0)


@kernel(threads=384, arch="sm_90a")
def gemm_splitk_tail(A: Tensor[bf16, "M", "K"], B: Tensor[bf16, "K", "N"],
                     C: Tensor[f32, "M", "N"], BM: const = 128, BN: const = 256, BK: const = 64,
                     STAGES: const = 4, SMS: const = 132, GROUP: const = 16, EBUFS: const = 2,
                     SPLITK: const = 4):
    grid(max(min(cdiv(M, BM) * cdiv(N, BN) % SMS * SPLITK, SMS), 1))
    sA = shared(bf16, (STAGES, BM, BK), swizzle=Swizzle(3, 3, 3))
    sB = shared(bf16, (STAGES, BN // 64, BK, 64), swizzle=Swizzle(3, 3, 3))
    sC = shared(f32, (2, EBUFS, 64, 32), swizzle=Swizzle(3, 2, 3))
    full = mbarrier(STAGES)
    empty = mbarrier(STAGES, arrivals=2)
    TM = cdiv(M, BM)
    TN = cdiv(N, BN)
    KU = cdiv(K, BK) // SPLITK
    EN = BN // 32
    DP = TM * TN // SMS * SMS
    nunits = cdiv((TM * TN - DP) * SPLITK - block_id(0), grid_dim(0))
    if warpgroup_id() == 0:
        setmaxnreg(40)
        if thread_id() == 0:
            for i in range(nunits):
                u = block_id(0) + i * grid_dim(0)
                t = DP + u // SPLITK
                kb = u % SPLITK * KU
                first = t // (GROUP * TN) * GROUP
                rows = min(TM - first, GROUP)
                bm = first + t % (GROUP * TN) % rows
                bn = t % (GROUP * TN) // rows
                for k in range(KU):
                    it = i * KU + k
                    s = it % STAGES
                    mbarrier_wait(empty[s], (it // STAGES + 1) % 2)
                    mbarrier_arrive_expect_tx(full[s], (BM * BK + BK * BN) * 2)
                    tma_load(A.tile((BM, BK), (bm, kb + k)), sA[s], full[s])
                    for j in range(BN // 64):
                        tma_load(B.tile((BK, 64), (kb + k, bn * (BN // 64) + j)), sB[s, j],
                                 full[s])
    else:
        setmaxnreg(232)
        wg = warpgroup_id() - 1
        for i in range(nunits):
            u = block_id(0) + i * grid_dim(0)
            t = DP + u // SPLITK
            kb = u % SPLITK * KU
            first = t // (GROUP * TN) * GROUP
            rows = min(TM - first, GROUP)
            bm = first + t % (GROUP * TN) % rows
            bn = t % (GROUP * TN) // rows
            acc = fragment(f32, (BM, BN), mma="wgmma_bf16", warpgroups=(2, 1), first_warpgroup=1)
            for k in range(KU):
                it = i * KU + k
                s = it % STAGES
                mbarrier_wait(full[s], (it // STAGES) % 2)
                a = wgmma_operand(sA[s], acc, operand="A")
                b = wgmma_operand(sB[s], acc, operand="B")
                assert_tag(a, lambda r, c: A(bm * BM + r, (kb + k) * BK + c))
                assert_tag(b, lambda r, c: B((kb + k) * BK + r, bn * BN + c))
                wgmma(acc, a, b)
                wgmma_commit()
                wgmma_wait(1)
                if k > 0 and thread_id() % 128 == 0:
                    mbarrier_arrive(empty[(it - 1) % STAGES])
            wgmma_wait(0)
            if thread_id() % 128 == 0:
                mbarrier_arrive(empty[(i * KU + KU - 1) % STAGES])
            for j in range(EN):
                e = i * EN + j
                if thread_id() % 128 == 0:
                    tma_store_wait(EBUFS - 1)
                warpgroup_barrier()
                store(acc, sC[wg, e % EBUFS], at=(wg, j))
                fence_proxy_async()
                warpgroup_barrier()
                if thread_id() % 128 == 0:
                    tma_store(sC[wg, e % EBUFS], C.tile((64, 32), (bm * 2 + wg, bn * EN + j)),
                              reduce="add")
                    tma_store_commit()
        if thread_id() % 128 == 0:
            tma_store_wait(0)
