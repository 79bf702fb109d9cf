# expect: 7:23: error: operand B must be (2, BK, 64): BN/64 column blocks of 64 (N-major), or the (64, 128) transpose of a (128, 64) tile (K-major), found shared bf16[128,128]
@kernel(threads=384, arch="sm_90a")
def k(C: Tensor[f32, "M", "N"]):
    grid(1)
    sK = shared(bf16, (128, 128), swizzle=Swizzle(3, 3, 3))
    acc = fragment(f32, (128, 128), mma="wgmma_bf16", warpgroups=(2, 1), first_warpgroup=1)
    b = wgmma_operand(sK.T, acc, operand="B")
