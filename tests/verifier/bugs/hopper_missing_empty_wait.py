# verifier-bug: the producer refills a stage without waiting on its empty barrier
# seeded into tests/verifier/clean/gemm_wgmma_ws.py
# expect: stage_overwrite line 31
# cex: before its consumers released it
# cex: read at line
# dims: M=4096,N=4096,K=4096
"""Warp-specialized Hopper GEMM, the plain form: warp group 0's thread 0 streams A and B tiles
into a STAGES-deep ring with TMA (each stage completing on its `full` mbarrier, skipping the
`empty` wait on the first pass); warp groups 1 and 2 wait on `full`, multiply with wgmma, wait
for the wgmma and release the stage on `empty` (one arrival per warp group)."""


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
                mbarrier_arrive_expect_tx(full[s], (BM * BK + BK * BN) * 2)
                tma_load(A.tile((BM, BK), (bm, k)), sA[s], full[s])
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
