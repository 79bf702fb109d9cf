"""C = A @ B on Hopper (bf16 in, f32 out): gemm_wgmma_persistent.py with a TMA-store epilogue.
Each consumer warp group writes its 64 x BN part of the accumulator, 64 x 32 at a time, into one
of EBUFS shared sub-tile buffers (128-byte swizzle: Swizzle(3, 2, 3) for f32), fences the
writes for the async proxy, and one elected thread stores the buffer with the copy engine
(tma_store into its bulk async-group). Before a buffer is rewritten the elected thread waits
until at most EBUFS - 1 of its stores still read shared memory (tma_store_wait), and a
warp-group barrier passes that on. The last stores of a tile overlap the next tile's main loop;
the global writes of all of them do.

Any M, N, K with 16-byte rows (N % 8 == 0, K % 8 == 0): boxes past the tensors' edges are
zero-filled by the copy engine (the K tail, the last row tile) and the TMA stores are clipped at M
and N. Where N >= BN the last column tile starts at cdiv(N, 64) * 64 - BN, so it overlaps the one
before it when BN does not divide N and both write the same values there (the same dot products
in the same order). BN = 320 (five n64 wgmma tiles per warp group, 3 stages) so
makes 4096 x 14336 45 column tiles: 1440 tiles = 10.9 waves of 132, where 128 x 256 gives 1792 =
13.6 waves (the same tail that cuBLAS's 320-wide tiles avoid at that shape)."""


@kernel(threads=384, arch="sm_90a")
def gemm_wgmma_tma_store(A: Tensor[bf16, "M", "K"], B: Tensor[bf16, "K", "N"],
                         C: Tensor[f32, "M", "N"], BM: const = 128, BN: const = 256,
                         BK: const = 64, STAGES: const = 4, SMS: const = 132, GROUP: const = 16,
                         EBUFS: const = 2):
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
    ntiles = cdiv(TM * TN - block_id(0), grid_dim(0))
    if warpgroup_id() == 0:
        setmaxnreg(40)
        if thread_id() == 0:
            for i in range(ntiles):
                t = block_id(0) + i * grid_dim(0)
                first = t // (GROUP * TN) * GROUP
                rows = min(TM - first, GROUP)
                bm = first + t % (GROUP * TN) % rows
                bn = t % (GROUP * TN) // rows
                bc = max(min(bn * (BN // 64), cdiv(N, 64) - BN // 64), 0)
                for k in range(KT):
                    it = i * KT + k
                    s = it % STAGES
                    mbarrier_wait(empty[s], (it // STAGES + 1) % 2)
                    mbarrier_arrive_expect_tx(full[s], (BM * BK + BK * BN) * 2)
                    tma_load(A.tile((BM, BK), (bm, k)), sA[s], full[s])
                    for j in range(BN // 64):
                        tma_load(B.tile((BK, 64), (k, bc + j)), sB[s, j], full[s])
    else:
        setmaxnreg(232)
        wg = warpgroup_id() - 1
        for i in range(ntiles):
            t = block_id(0) + i * grid_dim(0)
            first = t // (GROUP * TN) * GROUP
            rows = min(TM - first, GROUP)
            bm = first + t % (GROUP * TN) % rows
            bn = t % (GROUP * TN) // rows
            bc = max(min(bn * (BN // 64), cdiv(N, 64) - BN // 64), 0)
            acc = fragment(f32, (BM, BN), mma="wgmma_bf16", warpgroups=(2, 1), first_warpgroup=1)
            for k in range(KT):
                it = i * KT + k
                s = it % STAGES
                mbarrier_wait(full[s], (it // STAGES) % 2)
                a = wgmma_operand(sA[s], acc, operand="A")
                b = wgmma_operand(sB[s], acc, operand="B")
                assert_tag(a, lambda r, c: A(bm * BM + r, k * BK + c))
                assert_tag(b, lambda r, c: B(k * BK + r, bc * 64 + c))
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
                    tma_store(sC[wg, e % EBUFS], C.tile((64, 32), (bm * 2 + wg, bc * 2 + j)))
                    tma_store_commit()
        if thread_id() % 128 == 0:
            tma_store_wait(0)
