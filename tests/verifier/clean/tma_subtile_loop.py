# dims: M=4096,N=4096,K=4096
"""gemm_wgmma_ws.py with A loaded in 64-row TMA boxes by a loop, each box into its own sub-tile
of the stage (`sA[s].tile((64, BK), (r, 0))`): the fills of one stage come from the iterations of
the r loop, and the verifier must find, for each element the wgmma reads, the iteration that
filled it (the writer's sub-tile offset 64 r names the loop variable it solves for)."""


@kernel(threads=384, arch="sm_90a")
def gemm_wgmma_ws(A: Tensor[bf16, "M", "K"], B: Tensor[bf16, "K", "N"], C: Tensor[f32, "M", "N"],
                  BM: const = 128, BN: const = 256, BK: const = 64, STAGES: const = 4):
    grid(cdiv(M, BM), cdiv(N, BN))
    bm, bn = block_id(0), block_id(1)
    sA = shared(bf16, (STAGES, BM, BK), swizzle=Swizzle(3, 3, 3))
    sB = shared(bf16, (STAGES, BN // 64, BK, 64), swizzle=Swizzle(3, 3, 3))
    full = mbarrier(STAGES)
    empty = mbarrier(STAGES, arrivals=2)
    acc = fragment(f32, (BM, BN), mma="wgmma_m64n256k16_bf16", warpgroups=(2, 1),
                   first_warpgroup=1)
    KT = cdiv(K, BK)
    if warpgroup_id() == 0:
        setmaxnreg(40)
        if thread_id() == 0:
            for k in range(KT):
                s = k % STAGES
                if k >= STAGES:
                    mbarrier_wait(empty[s], (k // STAGES - 1) % 2)
                mbarrier_arrive_expect_tx(full[s], (BM * BK + BK * BN) * 2)
                for r in range(BM // 64):  # A in 64-row boxes, one sub-tile of the stage each
                    tma_load(A.tile((64, BK), (bm * (BM // 64) + r, k)),
                             sA[s].tile((64, BK), (r, 0)), full[s])
                for j in range(BN // 64):
                    tma_load(B.tile((BK, 64), (k, bn * (BN // 64) + j)), sB[s, j], full[s])
    else:
        setmaxnreg(232)
        for k in range(KT):
            s = k % STAGES
            mbarrier_wait(full[s], (k // STAGES) % 2)
            a = wgmma_operand(sA[s], acc, operand="A")
            b = wgmma_operand(sB[s], acc, operand="B")
            assert_tag(a, lambda i, j: A(bm * BM + i, k * BK + j))
            assert_tag(b, lambda i, j: B(k * BK + i, bn * BN + j))
            wgmma(acc, a, b)
            wgmma_commit()
            wgmma_wait(0)
            if thread_id() % 128 == 0:
                mbarrier_arrive(empty[s])
        store(acc, C.tile((BM, BN), (bm, bn)))
