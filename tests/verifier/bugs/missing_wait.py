# verifier-bug: no wait_group before reading the stage an async copy fills
# seeded into kb/templates/gemm_mma.py
# expect: read_before_wait line 34
# cex: written at
# cex: cp_async
# dims: M=4096,N=4096,K=4096
"""C = A @ B on tensor cores: a two-stage cp.async pipeline feeding mma.sync.m16n8k16 (bf16 in,
f32 accumulate). The tag assertion states which A tile each MMA consumes; the verifier proves it
for every thread, element and iteration."""


@kernel(threads=256)
def gemm_mma(A: Tensor[bf16, "M", "K"], B: Tensor[bf16, "K", "N"], C: Tensor[f32, "M", "N"],
             BM: const = 128, BN: const = 128, BK: const = 32, STAGES: const = 2):
    grid(cdiv(M, BM), cdiv(N, BN))
    bm, bn = block_id(0), block_id(1)
    sA = shared(bf16, (STAGES, BM, BK), swizzle=Swizzle(2, 3, 3))
    sB = shared(bf16, (STAGES, BK, BN))
    acc = fragment(f32, (BM, BN), mma="mma_sync_m16n8k16_bf16", warps=(2, 4))
    copy_a = thread_layout((64, 4), vec=8)
    copy_b = thread_layout((16, 16), vec=8)
    KT = cdiv(K, BK)
    for s in range(STAGES - 1):
        cp_async(A.tile((BM, BK), (bm, s)), sA[s], copy_a)
        cp_async(B.tile((BK, BN), (s, bn)), sB[s], copy_b)
        commit_group()
    for k in range(KT):
        barrier()
        nxt = k + STAGES - 1
        if nxt < KT:
            cp_async(A.tile((BM, BK), (bm, nxt)), sA[nxt % STAGES], copy_a)
            cp_async(B.tile((BK, BN), (nxt, bn)), sB[nxt % STAGES], copy_b)
        commit_group()
        a = ldmatrix(sA[k % STAGES], acc, operand="A")
        b = load_fragment(sB[k % STAGES], acc, operand="B")
        assert_tag(a, lambda i, j: A(bm * BM + i, k * BK + j))
        assert_tag(b, lambda i, j: B(k * BK + i, bn * BN + j))
        mma(acc, a, b)
    store(acc, C.tile((BM, BN), (bm, bn)))
