# expect: 5:10: error: list literal / comprehension is not in the DSL subset
@kernel(threads=64)
def k(A: Tensor[f32, "M", "K"], B: Tensor[bf16, "K", "N"], BM: const = 32):
    grid(cdiv(M, BM))
    xs = [i for i in range(4)]
