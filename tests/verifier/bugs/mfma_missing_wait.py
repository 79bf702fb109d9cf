# verifier-bug: AMD LDS-direct copies read before their wait
# seeded into examples/gemm_mfma.py
# expect: read_before_wait line 24
# cex: written at
# dims: M=4096,N=4096,K=4096
"""C = A @ B on AMD matrix cores (gfx942): v_mfma_f32_32x32x8bf16_1k and, in the second kernel,
v_mfma_f32_16x16x16bf16_1k. Four 64-lane waves per block."""


@kernel(threads=256, arch="gfx942")
def gemm_mfma32(A: Tensor[bf16, "M", "K"], B: Tensor[bf16, "K", "N"], C: Tensor[f32, "M", "N"],
                BM: const = 64, BN: const = 64, BK: const = 16):
    grid(cdiv(M, BM), cdiv(N, BN))
    bm, bn = block_id(0), block_id(1)
    sA = shared(bf16, (BM, BK))
    sB = shared(bf16, (BK, BN))
    acc = fragment(f32, (BM, BN), mma="mfma_f32_32x32x8_bf16", warps=(2, 2))
    for k in range(cdiv(K, BK)):
        copy_async(A.tile((BM, BK), (bm, k)), sA, thread_layout((64, 4), vec=4))
        copy_async(B.tile((BK, BN), (k, bn)), sB, thread_layout((16, 16), vec=4))
        commit_group()
        s_waitcnt(vmcnt=0)
        barrier()
        a = load_fragment(sA, acc, operand="A")
        b = load_fragment(sB, acc, operand="B")
        assert_tag(a, lambda i, j: A(bm * BM + i, k * BK + j))
        sched_group_barrier(8, 1, 0)
        mfma_f32_32x32x8_bf16(acc, a, b)
        barrier()
    store(acc, C.tile((BM, BN), (bm, bn)))


@kernel(threads=256, arch="gfx942")
def gemm_mfma16(A: Tensor[bf16, "M", "K"], B: Tensor[bf16, "K", "N"], C: Tensor[bf16, "M", "N"],
                BM: const = 32, BN: const = 64, BK: const = 32):
    grid(cdiv(M, BM), cdiv(N, BN))
    bm, bn = block_id(0), block_id(1)
    sA = shared(bf16, (BM, BK))
    sB = shared(bf16, (BK, BN))
    acc = fragment(f32, (BM, BN), mma="mfma_f32_16x16x16_bf16", warps=(1, 4))
    s_setprio(1)
    for k in range(cdiv(K, BK)):
        copy(A.tile((BM, BK), (bm, k)), sA, thread_layout((32, 8)))
        copy(B.tile((BK, BN), (k, bn)), sB, thread_layout((4, 64)))
        barrier()
        a = load_fragment(sA, acc, operand="A")
        b = load_fragment(sB, acc, operand="B")
        mfma_f32_16x16x16_bf16(acc, a, b)
        barrier()
    store(acc, C.tile((BM, BN), (bm, bn)))
