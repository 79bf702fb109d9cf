# verifier-bug: guard i <= M lets row M through
# seeded into examples/gemm_naive.py
# expect: oob line 17
# cex: out-of-bounds access to tensor A
"""C = A @ B, one output element per thread, f32."""


@kernel(threads=256)
def gemm_naive(A: Tensor[f32, "M", "K"], B: Tensor[f32, "K", "N"], C: Tensor[f32, "M", "N"],
               T: const = 16):
    grid(cdiv(M, T), cdiv(N, T))
    i = block_id(0) * T + thread_id() // T
    j = block_id(1) * T + thread_id() % T
    if i <= M and j < N:
        acc = 0.0
        for k in range(K):
            acc += A[i, k] * B[k, j]
        C[i, j] = acc
