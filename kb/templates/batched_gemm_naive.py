"""C[b] = A[b] @ B[b] for every batch b, one output element per thread: the baseline."""


@kernel(threads=T * T)
def batched_gemm_naive(A: Tensor[${dtype}, "BATCH", "M", "K"], B: Tensor[${dtype}, "BATCH", "K", "N"],
                       C: Tensor[f32, "BATCH", "M", "N"], T: const = 16):
    grid(cdiv(M, T), cdiv(N, T), BATCH)
    b = block_id(2)
    i = block_id(0) * T + thread_id() // T
    j = block_id(1) * T + thread_id() % T
    if i < M and j < N:
        acc = 0.0
        for k in range(K):
            acc += f32(A[b, i, k]) * f32(B[b, k, j])
        C[b, i, j] = acc
