# expect: 6:8: error: if condition must be bool, found i32
@kernel(threads=64)
def k(A: Tensor[f32, "M", "K"], B: Tensor[bf16, "K", "N"], BM: const = 32):
    grid(cdiv(M, BM))
    x = thread_id()
    if x:
        A[0, 0] = 1.0
