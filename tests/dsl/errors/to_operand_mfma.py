# expect: 7:9: error: to_operand(): on mfma_f32_32x32x8_bf16 the accumulator layout is not the A operand layout
@kernel(threads=64, arch="gfx942")
def k(A: Tensor[bf16, "M", "K"]):
    grid(1)
    s = fragment(f32, (32, 32), mma="mfma_f32_32x32x8_bf16", warps=(1, 1))
    o = fragment(f32, (32, 32), mma="mfma_f32_32x32x8_bf16", warps=(1, 1))
    a = to_operand(s, o)
