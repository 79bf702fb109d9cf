# verifier-bug: no barrier at the end of the loop: the next copy races with this iteration's reads
# seeded into examples/gemm_smem.py
# expect: shared_race line 31
# cex: racing
# cex: in iteration k=
# dims: M=4096,N=4096,K=4096
"""C = A @ B with shared-memory tiles; each thread computes R outputs of a column."""


@kernel(threads=256)
def gemm_smem(A: Tensor[f32, "M", "K"], B: Tensor[f32, "K", "N"], C: Tensor[f32, "M", "N"],
              BM: const = 32, BN: const = 32, BK: const = 32):
    grid(cdiv(M, BM), cdiv(N, BN))
    bm, bn = block_id(0), block_id(1)
    sA = shared(f32, (BM, BK))
    sB = shared(f32, (BK, BN + 1))  # padded: no bank conflicts on column reads
    R = BM * BN // 256
    col = thread_id() % BN
    row0 = (thread_id() // BN) * R
    acc = local(f32, (R,))
    for r in range(R):
        acc[r] = 0.0
    tl = thread_layout((8, 32))
    for k in range(K // BK):
        copy(A.tile((BM, BK), (bm, k)), sA, tl)
        copy(B.tile((BK, BN), (k, bn)), sB[:, 0:BN], tl)
        barrier()
        for kk in range(BK):
            b = sB[kk, col]
            for r in range(R):
                acc[r] += sA[row0 + r, kk] * b
    c = C.tile((BM, BN), (bm, bn))
    for r in range(R):
        c[row0 + r, col] = acc[r]
