# expect: 7:19: error: tma_store's destination must be T.tile((rows, cols), (i, j)) of a tensor parameter
@kernel(threads=128, arch="sm_90a")
def k(C: Tensor[f32, "M", "N"]):
    grid(1)
    sC = shared(f32, (64, 32), swizzle=Swizzle(3, 2, 3))
    t = C.tile((64, 32), (0, 0))
    tma_store(sC, t)
    tma_store_commit()
    tma_store_wait(0)
