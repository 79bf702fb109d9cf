"""C = op(A) @ op(B) with register tiling: each thread computes a TMxTN block of C, loading TM
values of A and TN values of B per k step and reusing each TN (resp. TM) times."""


@kernel(threads=(BM // TM) * (BN // TN))
def gemm_regtile(A: Tensor[${dtype}, ${A_DIMS}], B: Tensor[${dtype}, ${B_DIMS}],
                 C: Tensor[f32, "M", "N"], BM: const = 32, BN: const = 32, TM: const = 2,
                 TN: const = 2):
    grid(cdiv(M, BM), cdiv(N, BN))
    tr = thread_id() // (BN // TN)
    tc = thread_id() % (BN // TN)
    i0 = block_id(0) * BM + tr * TM
    j0 = block_id(1) * BN + tc * TN
    acc = local(f32, (TM, TN))
    a = local(f32, (TM,))
    b = local(f32, (TN,))
    for x in range(TM):
        for y in range(TN):
            acc[x, y] = 0.0
    for k in range(K):
        for x in range(TM):
            a[x] = f32(A[i0 + x, k])
        for y in range(TN):
            b[y] = f32(B[k, j0 + y])
        for x in range(TM):
            for y in range(TN):
                acc[x, y] += a[x] * b[y]
    for x in range(TM):
        for y in range(TN):
            C[i0 + x, j0 + y] = acc[x, y]
