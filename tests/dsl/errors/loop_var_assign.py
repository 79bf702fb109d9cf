# expect: 6:9: error: cannot assign to loop variable 'i' inside its loop
@kernel(threads=64)
def k(A: Tensor[f32, "M", "K"], B: Tensor[bf16, "K", "N"], BM: const = 32):
    grid(cdiv(M, BM))
    for i in range(4):
        i = i + 1
