# expect: 8:20: error: store destination shared f32[32,32] is not a sub-tile of the 128x256 accumulator aligned to its warp groups' 64x256 parts
@kernel(threads=384, arch="sm_90a")
def k(C: Tensor[f32, "M", "N"]):
    grid(1)
    sC = shared(f32, (32, 32))
    acc = fragment(f32, (128, 256), mma="wgmma_bf16", warpgroups=(2, 1), first_warpgroup=1)
    if warpgroup_id() > 0:
        store(acc, sC, at=(0, 0))
