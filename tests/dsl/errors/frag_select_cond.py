# expect: 6:16: error: select() condition must be bool
@kernel(threads=64)
def k(A: Tensor[bf16, "M", "K"]):
    grid(1)
    s = fragment(f32, (32, 32), mma="mma_sync_m16n8k16_bf16", warps=(2, 1))
    p = select(col_index(s), 0.0, s)
