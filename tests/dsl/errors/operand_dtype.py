# expect: 6:23: error: mma_sync_m16n8k16_bf16 takes bf16 operands, the source holds f32
@kernel(threads=128)
def k(A: Tensor[f32, "M", "K"], C: Tensor[f32, "M", "N"]):
    grid(1)
    acc = fragment(f32, (64, 64), mma="mma_sync_m16n8k16_bf16", warps=(2, 2))
    a = load_fragment(A.tile((64, 32), (0, 0)), acc, operand="A")
