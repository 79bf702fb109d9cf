"""C = A @ B (bf16 in, f32 out), the tuned variant of kb/templates/gemm_mma.py: three cp.async stages
and a swizzled B buffer so that ldmatrix.trans reads are bank-conflict free (Swizzle(3, 3, 4) XORs
the 16-byte chunk index with the row mod 8)."""


@kernel(threads=256)
def gemm_mma_tuned(A: Tensor[bf16, "M", "K"], B: Tensor[bf16, "K", "N"], C: Tensor[f32, "M", "N"],
             BM: const = 128, BN: const = 128, BK: const = 32, STAGES: const = 3):
    grid(cdiv(M, BM), cdiv(N, BN))
    bm, bn = block_id(0), block_id(1)
    sA = shared(bf16, (STAGES, BM, BK), swizzle=Swizzle(2, 3, 3))
    sB = shared(bf16, (STAGES, BK, BN), swizzle=Swizzle(3, 3, 4))
    acc = fragment(f32, (BM, BN), mma="mma_sync_m16n8k16_bf16", warps=(2, 4))
    copy_a = thread_layout((64, 4), vec=8)
    copy_b = thread_layout((16, 16), vec=8)
    KT = cdiv(K, BK)
    for s in range(STAGES - 1):
        cp_async(A.tile((BM, BK), (bm, s)), sA[s], copy_a)
        cp_async(B.tile((BK, BN), (s, bn)), sB[s], copy_b)
        commit_group()
    for k in range(KT):
        wait_group(STAGES - 2)
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
