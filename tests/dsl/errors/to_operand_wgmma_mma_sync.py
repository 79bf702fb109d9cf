# expect: 7:9: error: to_operand(): frag<wgmma_m64n64k16_bf16,acc,f32[64,64],warpgroups=1x1> and frag<mma_sync_m16n8k16_bf16,acc,f32[64,64],warps=4x1> differ in instruction, rows or warps
@kernel(threads=128, arch="sm_90a")
def k(C: Tensor[f32, "M", "N"]):
    grid(1)
    s = fragment(f32, (64, 64), mma="wgmma_bf16", warpgroups=(1, 1))
    o = fragment(f32, (64, 64), mma="mma_sync_m16n8k16_bf16", warps=(4, 1))
    a = to_operand(s, o)
