# expect: 7:23: error: operand A must be the (128, 64) tile (128-byte rows, K-major), found shared bf16[128,32]
@kernel(threads=384, arch="sm_90a")
def k(C: Tensor[f32, "M", "N"]):
    grid(1)
    sA = shared(bf16, (128, 32), swizzle=Swizzle(3, 3, 3))
    acc = fragment(f32, (128, 128), mma="wgmma_bf16", warpgroups=(2, 1), first_warpgroup=1)
    a = wgmma_operand(sA, acc, operand="A")
