#!/usr/bin/env python3
"""Microbenchmark (device, needs PyTorch + Triton): the SFU throughput of ex2.approx.ftz.f32 vs
ex2.approx.f16x2, counted in exponentials (an f16x2 op does two), from a dependent chain of
ITERS exps per element over 132 * 64 blocks. usage: python3 bench/experiments/ex2_f16x2_rate.py
"""
import torch, triton, triton.language as tl, subprocess, sys, os
ITERS = 512

@triton.jit
def k32(X, Y, N: tl.constexpr, IT: tl.constexpr):
    i = tl.program_id(0) * N + tl.arange(0, N)
    x = tl.load(X + i)
    a = x
    for _ in range(IT):
        a = tl.inline_asm_elementwise("ex2.approx.ftz.f32 $0, $1;", "=r,r", [a], dtype=tl.float32, is_pure=True, pack=1)
        a = a * -0.5
    tl.store(Y + i, a)

@triton.jit
def k16(X, Y, N: tl.constexpr, IT: tl.constexpr):
    i = tl.program_id(0) * N + tl.arange(0, N)
    x = tl.load(X + i)
    a = x
    for _ in range(IT):
        a = tl.inline_asm_elementwise("ex2.approx.f16x2 $0, $1;", "=r,r", [a], dtype=tl.float16, is_pure=True, pack=2)
        a = a * -0.5
    tl.store(Y + i, a)

N = 1024
blocks = 132 * 64
for name, k, dt in (("f32", k32, torch.float32), ("f16x2", k16, torch.float16)):
    x = torch.rand(blocks * N, device="cuda", dtype=dt) * -1
    y = torch.empty_like(x)
    c = k[(blocks,)](x, y, N=N, IT=ITERS, num_warps=8)
    ms = triton.testing.do_bench(lambda: k[(blocks,)](x, y, N=N, IT=ITERS, num_warps=8), warmup=50, rep=300)
    n = blocks * N * ITERS
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    clk = 1.98e9
    print(f"{name:6} {ms:.3f} ms  {n/ms/1e9:.1f} Gexp/s  {n/(ms*1e-3)/sms/clk:.2f} exp/clk/SM", flush=True)
    try:
        sass = c.asm.get("sass") or ""
    except Exception as e:
        sass = str(e)
    mufu = [l.strip() for l in sass.splitlines() if "MUFU" in l]
    print("   MUFU lines:", len(mufu), "e.g.", mufu[:2])
    open(os.path.join(os.environ.get("OUT", "/tmp"), f"sass_{name}.txt"), "w").write(sass)
