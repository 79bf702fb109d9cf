# verifier-bug: the epilogue stores each 32-column sub-tile into its neighbour's columns (j ^ 1): in bounds, every element written once, all in the wrong place
# seeded into kb/templates/gemm_wgmma_linear.py (bf16; B stored [N, K], read transposed)
# expect: tag_flow line 77
# cex: but the wgmma operand tags put it at C(
# dims: M=1000,N=1500,K=2000
"""nn.Linear's layout with a misplaced epilogue store."""


@kernel(threads=384, arch="sm_90a")
def gemm_wgmma_linear(A: Tensor[bf16, "M", "K"], B: Tensor[bf16, "N", "K"],
                      C: Tensor[f32, "M", "N"], BM: const = 128, BN: const = 256,
                      BK: const = 64, STAGES: const = 4, SMS: const = 132, GROUP: const = 16,
                      EBUFS: const = 2):
    grid(min(cdiv(M, BM) * cdiv(N, BN), SMS))
    sA = shared(bf16, (STAGES, BM, BK), swizzle=Swizzle(3, 3, 3))
    sB = shared(bf16, (STAGES, BN, BK), swizzle=Swizzle(3, 3, 3))
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
                for k in range(KT):
                    it = i * KT + k
                    s = it % STAGES
                    mbarrier_wait(empty[s], (it // STAGES + 1) % 2)
                    mbarrier_arrive_expect_tx(full[s], (BM * BK + BN * BK) * 2)
                    tma_load(A.tile((BM, BK), (bm, k)), sA[s], full[s])
                    tma_load(B.tile((BN, BK), (bn, k)), sB[s], full[s])
    else:
        setmaxnreg(232)
        wg = warpgroup_id() - 1
        for i in range(ntiles):
            t = block_id(0) + i * grid_dim(0)
            first = t // (GROUP * TN) * GROUP
            rows = min(TM - first, GROUP)
            bm = first + t % (GROUP * TN) % rows
            bn = t % (GROUP * TN) // rows
            acc = fragment(f32, (BM, BN), mma="wgmma_bf16", warpgroups=(2, 1),
                           first_warpgroup=1)
            for k in range(KT):
                it = i * KT + k
                s = it % STAGES
                mbarrier_wait(full[s], (it // STAGES) % 2)
                a = wgmma_operand(sA[s], acc, operand="A")
                b = wgmma_operand(sB[s].T, acc, operand="B")
                assert_tag(a, lambda r, c: A(bm * BM + r, k * BK + c))
                assert_tag(b, lambda r, c: B(bn * BN + c, k * BK + r))
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
                    tma_store(sC[wg, e % EBUFS], C.tile((64, 32), (bm * 2 + wg, bn * EN + (j ^ 1))))
                    tma_store_commit()
        if thread_id() % 128 == 0:
            tma_store_wait(0)
