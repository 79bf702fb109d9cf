# expect: 6:52: error: unknown tma_store reduction 'max'
@kernel(threads=128, arch="sm_90a")
def k(C: Tensor[f32, "M", "N"]):
    grid(1)
    sC = shared(f32, (64, 32))
    tma_store(sC, C.tile((64, 32), (0, 0)), reduce="max")
