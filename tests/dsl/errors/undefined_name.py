# expect: 5:15: error: undefined name 'C'
@kernel(threads=64)
def k(A: Tensor[f32, "M", "K"], B: Tensor[bf16, "K", "N"], BM: const = 32):
    grid(cdiv(M, BM))
    A[0, 0] = C[0, 0]
