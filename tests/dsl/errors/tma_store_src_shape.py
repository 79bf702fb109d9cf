# expect: 6:15: error: tma_store source must be a shared global f32[64,32] view, found shared f32[64,64]
@kernel(threads=128, arch="sm_90a")
def k(C: Tensor[f32, "M", "N"]):
    grid(1)
    sC = shared(f32, (64, 64))
    tma_store(sC, C.tile((64, 32), (0, 0)))
