# verifier-bug: a split-K unit loads A from k-step k instead of its offset kb + k: every unit adds the first KU k-steps of A against its own B rows
# seeded into kb/templates/gemm_wgmma_splitk.py (gemm_splitk_tail)
# expect: tag_assert line 61
# cex: A(
# dims: M=4096,N=14336,K=4096
@kernel(threads=384, arch="sm_90a")
def gemm_splitk_tail(A: Tensor[bf16, "M", "K"], B: Tensor[bf16, "K", "N"],
                     C: Tensor[f32, "M", "N"], BM: const = 128, BN: const = 256, BK: const = 64,
                     STAGES: const = 4, SMS: const = 132, GROUP: const = 16, EBUFS: const = 2,
                     SPLITK: const = 8):
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
                    tma_load(A.tile((BM, BK), (bm, k)), sA[s], full[s])
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
