# expect: 5:16: error: tile shape has 1 dims, the view has 2
@kernel(threads=64)
def k(A: Tensor[f32, "M", "K"], B: Tensor[bf16, "K", "N"], BM: const = 32):
    grid(cdiv(M, BM))
    t = A.tile((BM,), (0,))
