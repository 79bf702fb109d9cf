# expect: 5:16: error: setmaxnreg takes 24..256 in steps of 8, got 100
@kernel(threads=256, arch="sm_90a")
def k(C: Tensor[f32, "N"]):
    grid(1)
    setmaxnreg(100)
