"""C = op(A) @ op(B) with shared-memory tiles; each thread computes R outputs of a column."""


@kernel(threads=256)
def gemm_smem(A: Tensor[${dtype}, ${A_DIMS}], B: Tensor[${dtype}, ${B_DIMS}],
              C: Tensor[f32, "M", "N"], BM: const = 32, BN: const = 32, BK: const = 32):
    grid(cdiv(M, BM), cdiv(N, BN))
    bm, bn = block_id(0), block_id(1)
    sA = shared(${dtype}, (BM, BK))
    sB = shared(${dtype}, (BK, BN + 1))  # padded: no bank conflicts on column reads
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
        assert_tag(sA, lambda i, j: A(bm * BM + i, k * BK + j))
        for kk in range(BK):
            b = f32(sB[kk, col])
            for r in range(R):
                acc[r] += f32(sA[row0 + r, kk]) * b
        barrier()
    c = C.tile((BM, BN), (bm, bn))
    for r in range(R):
        c[row0 + r, col] = acc[r]
