# expect: 6:16: error: mbarrier() must be called at the kernel's top level
@kernel(threads=128, arch="sm_90a")
def k(C: Tensor[f32, "N"]):
    grid(1)
    if thread_id() == 0:
        full = mbarrier(2)
