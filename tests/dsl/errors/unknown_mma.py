# expect: 5:39: error: unknown MMA instruction 'mma_sync_m16n8k8_tf32'
@kernel(threads=128)
def k(C: Tensor[f32, "M", "N"]):
    grid(1)
    acc = fragment(f32, (64, 64), mma="mma_sync_m16n8k8_tf32", warps=(2, 2))
