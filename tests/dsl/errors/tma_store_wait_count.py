# expect: 5:20: error: tma_store_wait count must be 0..63, got 64
@kernel(threads=128, arch="sm_90a")
def k(C: Tensor[f32, "M", "N"]):
    grid(1)
    tma_store_wait(64)
