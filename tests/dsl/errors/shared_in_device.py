# expect: 4:9: error: shared() is only allowed in a @kernel, not in a @device function
@device
def helper(x: f32) -> f32:
    s = shared(f32, (32,))
    return x

@kernel(threads=64)
def k(A: Tensor[f32, "M", "K"], B: Tensor[bf16, "K", "N"], BM: const = 32):
    grid(cdiv(M, BM))
    A[0, 0] = helper(A[0, 0])
