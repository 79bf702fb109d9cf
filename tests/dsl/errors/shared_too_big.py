# expect: 5:9: error: shared memory use 262144 bytes exceeds 232448 on sm_90a
@kernel(threads=64)
def k(A: Tensor[f32, "M", "K"], B: Tensor[bf16, "K", "N"], BM: const = 32):
    grid(cdiv(M, BM))
    s = shared(f32, (256, 256))
