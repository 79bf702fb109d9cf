# expect: 6:7: error: index 16 out of bounds for dim 0 of extent 16
@kernel(threads=64)
def k(A: Tensor[f32, "M", "K"], B: Tensor[bf16, "K", "N"], BM: const = 32):
    grid(cdiv(M, BM))
    s = shared(f32, (16, 16))
    s[16, 0] = 1.0
