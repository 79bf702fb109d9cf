# expect: 5:39: error: mma_sync_m16n8k16_bf16 is a sm_90a instruction; this kernel targets gfx942
@kernel(threads=256, arch="gfx942")
def k(C: Tensor[f32, "M", "N"]):
    grid(1)
    acc = fragment(f32, (64, 64), mma="mma_sync_m16n8k16_bf16", warps=(2, 2))
