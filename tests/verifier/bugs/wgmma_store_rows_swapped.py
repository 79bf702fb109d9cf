# verifier-bug: the epilogue stores each accumulator tile into its neighbour's rows (bm ^ 1): in bounds, every element written once, all in the wrong place
# seeded into examples/gemm_wgmma.py
# expect: tag_flow line 53
# cex: of 'acc' to C(
# cex: but the wgmma operand tags put it at C(
# dims: M=4096,N=4096,K=4096
"""C = A @ B on Hopper (bf16 in, f32 out): a warp-specialized pipeline. Warp group 0 is the
producer: one thread streams (BM, 64) A tiles and (64, 64) B blocks into a STAGES-deep ring of
128-byte-swizzled shared buffers with TMA, each stage completing on its `full` mbarrier. Warp
groups 1 and 2 are consumers: each multiplies its 64-row half of the tile with wgmma
(m64nBNk16) straight from shared memory, keeps one wgmma group in flight, and releases the
previous stage on its `empty` mbarrier. The tag assertions state which A and B tiles each wgmma
consumes."""


@kernel(threads=384, arch="sm_90a")
def gemm_wgmma(A: Tensor[bf16, "M", "K"], B: Tensor[bf16, "K", "N"], C: Tensor[f32, "M", "N"],
               BM: const = 128, BN: const = 256, BK: const = 64, STAGES: const = 4):
    grid(cdiv(M, BM), cdiv(N, BN))
    bm, bn = block_id(0), block_id(1)
    sA = shared(bf16, (STAGES, BM, BK), swizzle=Swizzle(3, 3, 3))
    sB = shared(bf16, (STAGES, BN // 64, BK, 64), swizzle=Swizzle(3, 3, 3))
    full = mbarrier(STAGES)
    empty = mbarrier(STAGES, arrivals=2)
    acc = fragment(f32, (BM, BN), mma="wgmma_bf16", warpgroups=(2, 1),
                   first_warpgroup=1)
    KT = cdiv(K, BK)
    if warpgroup_id() == 0:
        setmaxnreg(40)
        if thread_id() == 0:
            for k in range(KT):
                s = k % STAGES
                mbarrier_wait(empty[s], (k // STAGES + 1) % 2)
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
            wgmma_wait(1)
            if k > 0 and thread_id() % 128 == 0:
                mbarrier_arrive(empty[(k - 1) % STAGES])
        wgmma_wait(0)
        store(acc, C.tile((BM, BN), (bm ^ 1, bn)))
