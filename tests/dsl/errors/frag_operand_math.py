# expect: 8:9: error: '*' on an A operand fragment; operand fragments are opaque
@kernel(threads=64)
def k(A: Tensor[bf16, "M", "K"]):
    grid(1)
    sA = shared(bf16, (32, 16))
    acc = fragment(f32, (32, 32), mma="mma_sync_m16n8k16_bf16", warps=(2, 1))
    a = load_fragment(sA, acc, operand="A")
    b = a * 2.0
