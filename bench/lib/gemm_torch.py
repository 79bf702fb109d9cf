#!/usr/bin/env python3
"""PyTorch's own nn.Linear call on the GEMM sweep's shapes (bench/gemm.sh sweep), the cross-check
beside the runner's cuBLAS baseline: F.linear(x, w) with x [M, K], w [N, K], bf16 in and out (what
a model runs), timed like the runner (warm-up, then CUDA events around each rep with the L2
flushed between reps, median).

usage: gemm_torch.py SHAPES_JSON OUT_JSONL   (SHAPES_JSON: {shape: [M, N, K]})
"""
import json
import statistics
import sys

import torch
import torch.nn.functional as F


def time_ms(fn, flush, warmup=5, reps=20):
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(reps):
        flush.zero_()
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b))
    return statistics.median(times)


def main():
    with open(sys.argv[1]) as fh:
        shapes = json.load(fh)
    flush = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")
    torch.manual_seed(1)
    with open(sys.argv[2], "w") as out:
        for name, (m, n, k) in sorted(shapes.items()):
            x = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
            w = torch.randn(n, k, device="cuda", dtype=torch.bfloat16)
            ms = time_ms(lambda: F.linear(x, w), flush)
            out.write(json.dumps({"shape": name, "m": m, "n": n, "k": k, "flinear_ms": ms}) + "\n")
            del x, w


if __name__ == "__main__":
    main()
