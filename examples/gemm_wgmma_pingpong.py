"""C = A @ B on Hopper (bf16 in, f32 out), "ping-pong" warp specialization: like
gemm_wgmma_persistent.py, but each consumer warp group owns whole (BM, BN) output tiles —
warp group 1 the block's even tiles, warp group 2 its odd ones. The producer fills the stage ring
tile after tile, so the two consumers' main loops take turns on the tensor cores and each one's
epilogue (the f32 stores) overlaps the other's main loop. Each stage is used by one warp group,
so its `empty` barrier expects one arrival. The `turn` barriers order the main loops: a warp
group starts waiting on its tile's stages only after the other one has waited on all of its own,
so that no consumer waits on a `full` phase more than one ahead of the barrier (a parity wait on a
phase two ahead passes at once — the interpreter reports the stale read this causes)."""


@kernel(threads=384, arch="sm_90a")
def gemm_wgmma_pingpong(A: Tensor[bf16, "M", "K"], B: Tensor[bf16, "K", "N"],
                        C: Tensor[f32, "M", "N"], BM: const = 64, BN: const = 256,
                        BK: const = 64, STAGES: const = 5, SMS: const = 132, GROUP: const = 8):
    grid(min(cdiv(M, BM) * cdiv(N, BN), SMS))
    sA = shared(bf16, (STAGES, BM, BK), swizzle=Swizzle(3, 3, 3))
    sB = shared(bf16, (STAGES, BN // 64, BK, 64), swizzle=Swizzle(3, 3, 3))
    full = mbarrier(STAGES)
    empty = mbarrier(STAGES)
    turn = mbarrier(2)
    TM = cdiv(M, BM)
    TN = cdiv(N, BN)
    KT = cdiv(K, BK)
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
                for k in range(KT):
                    it = i * KT + k
                    s = it % STAGES
                    mbarrier_wait(empty[s], (it // STAGES + 1) % 2)
                    mbarrier_arrive_expect_tx(full[s], (BM * BK + BK * BN) * 2)
                    tma_load(A.tile((BM, BK), (bm, k)), sA[s], full[s])
                    for j in range(BN // 64):
                        tma_load(B.tile((BK, 64), (k, bn * (BN // 64) + j)), sB[s, j], full[s])
    else:
        setmaxnreg(232)
        if warpgroup_id() == 1:
            for i in range(0, ntiles, 2):
                t = block_id(0) + i * grid_dim(0)
                first = t // (GROUP * TN) * GROUP
                rows = min(TM - first, GROUP)
                bm = first + t % (GROUP * TN) % rows
                bn = t % (GROUP * TN) // rows
                acc = fragment(f32, (BM, BN), mma="wgmma_bf16", warpgroups=(1, 1),
                               first_warpgroup=1)
                if i > 0:
                    mbarrier_wait(turn[0], (i // 2 - 1) % 2)
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
                if thread_id() % 128 == 0:
                    mbarrier_arrive(turn[1])
                wgmma_wait(0)
                if thread_id() % 128 == 0:
                    mbarrier_arrive(empty[(i * KT + KT - 1) % STAGES])
                store(acc, C.tile((BM, BN), (bm, bn)))
        else:
            for i in range(1, ntiles, 2):
                t = block_id(0) + i * grid_dim(0)
                first = t // (GROUP * TN) * GROUP
                rows = min(TM - first, GROUP)
                bm = first + t % (GROUP * TN) % rows
                bn = t % (GROUP * TN) // rows
                acc2 = fragment(f32, (BM, BN), mma="wgmma_bf16", warpgroups=(1, 1),
                                first_warpgroup=2)
                mbarrier_wait(turn[1], (i // 2) % 2)
                for k in range(KT):
                    it = i * KT + k
                    s = it % STAGES
                    mbarrier_wait(full[s], (it // STAGES) % 2)
                    a2 = wgmma_operand(sA[s], acc2, operand="A")
                    b2 = wgmma_operand(sB[s], acc2, operand="B")
                    assert_tag(a2, lambda r, c: A(bm * BM + r, k * BK + c))
                    assert_tag(b2, lambda r, c: B(k * BK + r, bn * BN + c))
                    wgmma(acc2, a2, b2)
                    wgmma_commit()
                    wgmma_wait(1)
                    if k > 0 and thread_id() % 128 == 0:
                        mbarrier_arrive(empty[(it - 1) % STAGES])
                if thread_id() % 128 == 0:
                    mbarrier_arrive(turn[0])
                wgmma_wait(0)
                if thread_id() % 128 == 0:
                    mbarrier_arrive(empty[(i * KT + KT - 1) % STAGES])
                store(acc2, C.tile((BM, BN), (bm, bn)))
