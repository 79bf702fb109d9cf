# expect: 6:9: error: exp() of a fragment
@kernel(threads=64)
def k(A: Tensor[bf16, "M", "K"]):
    grid(1)
    s = fragment(f32, (32, 32), mma="mma_sync_m16n8k16_bf16", warps=(2, 1))
    p = exp(s)
