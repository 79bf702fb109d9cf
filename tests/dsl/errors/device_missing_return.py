# expect: 3:1: error: device function 'f' may end without returning a f32
@device
def f(x: f32) -> f32:
    if x > 0.0:
        return x

@kernel(threads=64)
def k(A: Tensor[f32, "M", "K"], B: Tensor[bf16, "K", "N"], BM: const = 32):
    grid(cdiv(M, BM))
    A[0, 0] = f(A[0, 0])
