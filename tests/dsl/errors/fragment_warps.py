# expect: 5:71: error: warps 2x4 of 32 lanes is 256 threads, the block has 128
@kernel(threads=128)
def k(C: Tensor[f32, "M", "N"]):
    grid(1)
    acc = fragment(f32, (64, 64), mma="mma_sync_m16n8k16_bf16", warps=(2, 4))
