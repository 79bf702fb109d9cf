# expect: 6:17: error: row_max() argument: a row of this accumulator spans 2 warps
@kernel(threads=128)
def k(C: Tensor[f32, "M", "N"]):
    grid(1)
    acc = fragment(f32, (64, 64), mma="mma_sync_m16n8k16_bf16", warps=(2, 2))
    m = row_max(acc)
