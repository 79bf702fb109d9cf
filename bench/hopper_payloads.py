#!/usr/bin/env python3
"""Writes candidate payloads (gpu_worker/candidate.h) for the Hopper GEMM sweep.

usage: bench/hopper_payloads.py OUT_DIR
Each case: NAME -> (file, kernel, consts, dims, timing). Small shapes are checked in full
against the f64 reference; the perf shapes (4096^3, 8192^3, 4096x14336x4096) by sampled rows.
"""
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GEMM = {"op": "gemm", "a": "A", "b": "B", "c": "C", "b_layout": "kn"}
SMALL = {"M": 256, "N": 512, "K": 384}
SHAPES = {"4k": {"M": 4096, "N": 4096, "K": 4096}, "8k": {"M": 8192, "N": 8192, "K": 8192},
          "4kx14k": {"M": 4096, "N": 14336, "K": 4096}}
QUICK = {"warmup": 3, "reps": 5}
PERF = {"warmup": 10, "reps": 30}


def cases():
    out = {}
    per_tile = ("examples/gemm_wgmma.py", "gemm_wgmma")
    coop = ("examples/gemm_wgmma_persistent.py", "gemm_wgmma_persistent")
    ping = ("examples/gemm_wgmma_pingpong.py", "gemm_wgmma_pingpong")
    variants = {  # short name -> (file, kernel, consts)
        "p": coop + ({},),
        "pp": ping + ({},),
        "pp128": ping + ({"BM": "128", "BN": "128", "STAGES": "6"},),
    }
    for short, (f, k, consts) in variants.items():
        out[f"{short}-small"] = (f, k, consts, SMALL, QUICK)
        if short != "w":
            for s, dims in SHAPES.items():
                out[f"{short}-{s}"] = (f, k, consts, dims, PERF)
    out["pp-g16-4kx14k"] = ping + ({"GROUP": "16"}, SHAPES["4kx14k"], PERF)
    extra = os.environ.get("ARGUS_HOPPER_EXTRA", "")
    for spec in filter(None, extra.split(";")):  # name=file:kernel:K=V,K=V:shape
        name, rest = spec.split("=", 1)
        f, k, consts, shape = rest.split(":")
        cd = dict(kv.split("=") for kv in filter(None, consts.split(",")))
        dims = SMALL if shape == "small" else SHAPES[shape]
        out[name] = (f, k, cd, dims, QUICK if shape == "small" else PERF)
    return out


def main():
    dst = sys.argv[1]
    os.makedirs(dst, exist_ok=True)
    only = set(sys.argv[2].split(",")) if len(sys.argv) > 2 else None
    for name, (f, k, consts, dims, timing) in cases().items():
        if only and name not in only:
            continue
        with open(os.path.join(ROOT, f)) as fh:
            src = fh.read()
        p = {"source": src, "kernel": k, "target": "sm_90a", "check": GEMM, "consts": consts,
             "dims": dims, "baseline": "cublas", "timeout_s": 10, "timing": timing}
        with open(os.path.join(dst, name + ".json"), "w") as fh:
            json.dump(p, fh, indent=1)


if __name__ == "__main__":
    main()
