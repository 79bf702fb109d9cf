# expect: 5:5: error: with statement is not in the DSL subset
@kernel(threads=64)
def k(A: Tensor[f32, "M", "K"], B: Tensor[bf16, "K", "N"], BM: const = 32):
    grid(cdiv(M, BM))
    with open('f') as f:
        pass
