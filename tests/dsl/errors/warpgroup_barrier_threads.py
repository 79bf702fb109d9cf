# expect: 5:5: error: warpgroup_barrier() needs whole warp groups: threads=64 is not a multiple of 128
@kernel(threads=64, arch="sm_90a")
def k(C: Tensor[f32, "M", "N"]):
    grid(1)
    warpgroup_barrier()
