# expect: 5:5: error: s_setprio is an AMD instruction; this kernel targets sm_90a
@kernel(threads=64)
def k(A: Tensor[f32, "M", "K"], B: Tensor[bf16, "K", "N"], BM: const = 32):
    grid(cdiv(M, BM))
    s_setprio(2)
