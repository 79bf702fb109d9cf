# expect: 7:13: error: '+' on fragments of different shapes
@kernel(threads=64)
def k(A: Tensor[bf16, "M", "K"]):
    grid(1)
    s = fragment(f32, (32, 32), mma="mma_sync_m16n8k16_bf16", warps=(2, 1))
    o = fragment(f32, (32, 64), mma="mma_sync_m16n8k16_bf16", warps=(2, 1))
    x = s + o
