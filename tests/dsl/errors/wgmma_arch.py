# expect: 5:41: error: wgmma_m64n128k16_bf16 is a sm_90a instruction; this kernel targets gfx942
@kernel(threads=384, arch="gfx942")
def k(C: Tensor[f32, "M", "N"]):
    grid(1)
    acc = fragment(f32, (128, 128), mma="wgmma_m64n128k16_bf16", warpgroups=(2, 1))
