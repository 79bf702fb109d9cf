#!/usr/bin/env python3
"""Prepares the five-launch tensor-core MoE (kb/templates/moe_wgmma.py) for the runner: each
kernel is compiled by the worker's own PrepareGpuRun (argus-candidate --prepare) at its dims,
then their specs are merged into one multi-launch spec (runner_core.h "launches") over one set of
tensors: the problem's X, Ids, Wt, Wg, Wu, Wd, Y (checked by the runner's moe reference, with the
PyTorch loop over experts timed in the same run) and the scratch buffers between the launches.

usage: bench/moe_pipeline.py BUILD_DIR OUT_DIR [CASE,CASE...]
  writes OUT_DIR/CASE/{spec.json, k0..k4/*.cubin}
"""
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KERNELS = ["moe_route", "moe_gather", "moe_gateup", "moe_down", "moe_reduce"]
CHECK = {"op": "moe", "a": "X", "b": "Wg", "u": "Wu", "d": "Wd", "c": "Y", "ids": "Ids",
         "weights": "Wt"}
BM = 128  # the row tile of the route and of both GEMMs


def cases():
    small = {"T": 64, "D": 256, "F": 128, "E": 8, "TOPK": 2}
    e64 = {"T": 4096, "D": 2048, "F": 1408, "E": 64, "TOPK": 6}
    e8 = {"T": 4096, "D": 4096, "F": 14336, "E": 8, "TOPK": 2}
    timing = {"warmup": 5, "reps": 20, "flush_l2": True}
    return {"small-wgmma": (small, {"warmup": 3, "reps": 10}, 30),
            "e64-wgmma": (e64, timing, 120),
            "e8-wgmma": (e8, timing, 120)}


def chain_dims(p):
    mt = (p["T"] * p["TOPK"] + BM - 1) // BM + p["E"]
    d = dict(p)
    d.update({"MT": mt, "R": mt * BM, "ED": p["E"] * p["D"], "EF": p["E"] * p["F"]})
    return d


def tensors(p, dims):
    """The tensors of the whole chain, in the order that seeds their random fill."""
    T, D, F, E, K, R, MT = (p["T"], p["D"], p["F"], p["E"], p["TOPK"], dims["R"], dims["MT"])
    return [
        {"name": "X", "dtype": "bf16", "shape": [T, D], "init": "random"},
        {"name": "Ids", "dtype": "i32", "shape": [T, K], "init": "topk", "low": 0, "high": E},
        {"name": "Wt", "dtype": "f32", "shape": [T, K], "init": "random", "low": 0,
         "high": 1.0 / K},
        {"name": "Wg", "dtype": "bf16", "shape": [E, D, F], "init": "random"},
        {"name": "Wu", "dtype": "bf16", "shape": [E, D, F], "init": "random"},
        {"name": "Wd", "dtype": "bf16", "shape": [E, F, D], "init": "random"},
        {"name": "Y", "dtype": "f32", "shape": [T, D], "init": "poison"},
        {"name": "Cnt", "dtype": "i32", "shape": [E], "init": "poison", "scratch": True},
        {"name": "TileE", "dtype": "i32", "shape": [MT], "init": "poison", "scratch": True},
        {"name": "RowTok", "dtype": "i32", "shape": [R], "init": "poison", "scratch": True},
        {"name": "SlotRow", "dtype": "i32", "shape": [T, K], "init": "poison", "scratch": True},
        {"name": "Xg", "dtype": "bf16", "shape": [R, D], "init": "poison", "scratch": True},
        {"name": "H", "dtype": "bf16", "shape": [R, F], "init": "poison", "scratch": True},
        {"name": "P", "dtype": "f32", "shape": [R, D], "init": "poison", "scratch": True},
    ]


def prepare(build, out, name, p, timing, timeout):
    with open(os.path.join(ROOT, "kb/templates/moe_wgmma.py")) as fh:
        src = fh.read().replace("${dtype}", "bf16")
    dims = chain_dims(p)
    case = os.path.join(out, name)
    os.makedirs(case, exist_ok=True)
    launches = []
    for i, k in enumerate(KERNELS):
        payload = {"source": src, "kernel": k, "target": "sm_90a", "dims": dims,
                   "check": {"op": "none"}, "baseline": {"name": "none"}, "timeout_s": timeout}
        ppath = os.path.join(case, f"k{i}.payload.json")
        with open(ppath, "w") as fh:
            json.dump(payload, fh)
        kdir = os.path.join(case, f"k{i}")
        subprocess.run([os.path.join(build, "bin/argus-candidate"), "--payload", ppath,
                        "--backend", "gpu", "--prepare", kdir], check=True,
                       stdout=subprocess.DEVNULL)
        os.unlink(ppath)
        with open(os.path.join(kdir, "spec.json")) as fh:
            ks = json.load(fh)
        kern = ks["kernel"]
        kern["artifact"] = f"k{i}/" + kern["artifact"]
        launches.append({"kernel": kern, "args": ks["args"]})
        os.unlink(os.path.join(kdir, "spec.json"))
    check = dict(CHECK, m=p["T"], n=p["D"], k=p["F"])
    spec = {"tensors": tensors(p, dims), "launches": launches, "check": check,
            "baseline": "torch_moe_loop", "timing": timing, "timeout_s": timeout, "seed": 1,
            "flops": 6.0 * p["T"] * p["TOPK"] * p["D"] * p["F"]}
    with open(os.path.join(case, "spec.json"), "w") as fh:
        json.dump(spec, fh, indent=1)


def main():
    build, out = sys.argv[1], sys.argv[2]
    only = set(sys.argv[3].split(",")) if len(sys.argv) > 3 else None
    for name, (p, timing, timeout) in cases().items():
        if only and name not in only:
            continue
        prepare(build, out, name, p, timing, timeout)


if __name__ == "__main__":
    main()
