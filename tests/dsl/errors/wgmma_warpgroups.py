# expect: 5:66: error: warp groups 1..2 need 384 threads, the block has 256
@kernel(threads=256, arch="sm_90a")
def k(C: Tensor[f32, "M", "N"]):
    grid(1)
    acc = fragment(f32, (128, 128), mma="wgmma_bf16", warpgroups=(2, 1), first_warpgroup=1)
