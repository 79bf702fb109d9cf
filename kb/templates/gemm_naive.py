"""C = op(A) @ op(B), one output element per thread: the family's baseline template."""


@kernel(threads=T * T)
def gemm_naive(A: Tensor[${dtype}, ${A_DIMS}], B: Tensor[${dtype}, ${B_DIMS}],
               C: Tensor[f32, "M", "N"], T: const = 16):
    grid(cdiv(M, T), cdiv(N, T))
    i = block_id(0) * T + thread_id() // T
    j = block_id(1) * T + thread_id() % T
    if i < M and j < N:
        acc = 0.0
        for k in range(K):
            acc += f32(A[i, k]) * f32(B[k, j])
        C[i, j] = acc
