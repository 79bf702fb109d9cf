# expect: 5:25: error: chained comparison is not in the DSL subset
@kernel(threads=64)
def k(A: Tensor[f32, "M", "K"], B: Tensor[bf16, "K", "N"], BM: const = 32):
    grid(cdiv(M, BM))
    x = 0 < thread_id() < 4
