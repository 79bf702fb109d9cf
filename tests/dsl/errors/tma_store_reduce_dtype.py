# expect: 6:19: error: tma_store(reduce="add") adds into f32 tensors only, found global bf16[64,64]
@kernel(threads=128, arch="sm_90a")
def k(C: Tensor[bf16, "M", "N"]):
    grid(1)
    sC = shared(bf16, (64, 64))
    tma_store(sC, C.tile((64, 64), (0, 0)), reduce="add")
