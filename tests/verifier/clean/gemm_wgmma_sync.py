# dims: M=4096,N=4096,K=4096
"""Hopper GEMM without TMA: all 256 threads copy the A and B tiles into shared memory with
ordinary (generic-proxy) copies, fence them for the async proxy, synchronize, and the two warp
groups multiply with wgmma straight from shared memory."""


@kernel(threads=256, arch="sm_90a")
def gemm_wgmma_sync(A: Tensor[bf16, "M", "K"], B: Tensor[bf16, "K", "N"],
                    C: Tensor[f32, "M", "N"], BM: const = 128, BN: const = 64,
                    BK: const = 64):
    grid(cdiv(M, BM), cdiv(N, BN))
    bm, bn = block_id(0), block_id(1)
    sA = shared(bf16, (BM, BK), swizzle=Swizzle(3, 3, 3))
    sB = shared(bf16, (1, BK, BN), swizzle=Swizzle(3, 3, 3))
    acc = fragment(f32, (BM, BN), mma="wgmma_m64n64k16_bf16", warpgroups=(2, 1),
                   first_warpgroup=0)
    tl = thread_layout((32, 8), vec=8)
    for k in range(cdiv(K, BK)):
        copy(A.tile((BM, BK), (bm, k)), sA, tl)
        copy(B.tile((BK, BN), (k, bn)), sB[0], tl)
        fence_proxy_async()
        barrier()
        a = wgmma_operand(sA, acc, operand="A")
        b = wgmma_operand(sB, acc, operand="B")
        assert_tag(a, lambda i, j: A(bm * BM + i, k * BK + j))
        assert_tag(b, lambda i, j: B(k * BK + i, bn * BN + j))
        wgmma(acc, a, b)
        wgmma_commit()
        wgmma_wait(0)
        barrier()
    store(acc, C.tile((BM, BN), (bm, bn)))
