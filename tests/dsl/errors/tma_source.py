# expect: 8:14: error: tma_load's source must be T.tile((rows, cols), (i, j)) of a tensor parameter
@kernel(threads=128, arch="sm_90a")
def k(A: Tensor[bf16, "M", "K"]):
    grid(1)
    sA = shared(bf16, (64, 64), swizzle=Swizzle(3, 3, 3))
    full = mbarrier(1)
    t = A.tile((64, 64), (0, 0))
    tma_load(t, sA, full[0])
