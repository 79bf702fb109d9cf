"""C[b] = A[b] @ B[b] with shared-memory tiles, one batch per grid z."""


@kernel(threads=256)
def batched_gemm_smem(A: Tensor[${dtype}, "BATCH", "M", "K"], B: Tensor[${dtype}, "BATCH", "K", "N"],
                      C: Tensor[f32, "BATCH", "M", "N"], BM: const = 32, BN: const = 32,
                      BK: const = 32):
    grid(cdiv(M, BM), cdiv(N, BN), BATCH)
    bm, bn, b = block_id(0), block_id(1), block_id(2)
    sA = shared(${dtype}, (BM, BK))
    sB = shared(${dtype}, (BK, BN + 1))
    R = BM * BN // 256
    col = thread_id() % BN
    row0 = (thread_id() // BN) * R
    acc = local(f32, (R,))
    for r in range(R):
        acc[r] = 0.0
    tl = thread_layout((8, 32))
    for k in range(K // BK):
        copy(A[b].tile((BM, BK), (bm, k)), sA, tl)
        copy(B[b].tile((BK, BN), (k, bn)), sB[:, 0:BN], tl)
        barrier()
        for kk in range(BK):
            v = f32(sB[kk, col])
            for r in range(R):
                acc[r] += f32(sA[row0 + r, kk]) * v
        barrier()
    c = C[b].tile((BM, BN), (bm, bn))
    for r in range(R):
        c[row0 + r, col] = acc[r]
