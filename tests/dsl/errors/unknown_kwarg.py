# expect: 5:31: error: shared() has no parameter 'swizle'
@kernel(threads=64)
def k(A: Tensor[f32, "M", "K"], B: Tensor[bf16, "K", "N"], BM: const = 32):
    grid(cdiv(M, BM))
    s = shared(f32, (32, 32), swizle=Swizzle(3, 3, 3))
