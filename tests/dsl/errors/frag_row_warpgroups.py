# expect: 6:17: error: row_max() argument: a row of this accumulator spans 2 warp groups (warpgroups=(1, 2))
@kernel(threads=384, arch="sm_90a")
def k(C: Tensor[f32, "M", "N"]):
    grid(1)
    s = fragment(f32, (64, 128), mma="wgmma_bf16", warpgroups=(1, 2), first_warpgroup=1)
    m = row_max(s)
