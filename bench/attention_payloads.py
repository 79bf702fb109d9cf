#!/usr/bin/env python3
"""Writes candidate payloads for the tensor-core flash attention (examples/flash_attention_mma.py)
against PyTorch SDPA (the runner's torch_sdpa baseline) at the issue-7 shapes.

usage: bench/attention_payloads.py OUT_DIR [CASE,CASE...]
"""
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
QUICK = {"warmup": 3, "reps": 5}
PERF = {"warmup": 5, "reps": 20}


def cases():
    out = {}  # name -> (consts, dims, causal, timing)
    for hd in ("64", "128"):
        for causal in (False, True):
            out[f"small-d{hd}-{'c' if causal else 'n'}"] = (
                {"HD": hd}, {"BH": 2, "S": 256}, causal, QUICK)
    big = {"BH": 128, "S": 4096}
    for causal in (False, True):
        cn = "c" if causal else "n"
        out[f"d128-bq128-{cn}"] = ({"HD": "128", "BQ": "128"}, big, causal, PERF)
        out[f"d128-bq64-{cn}"] = ({"HD": "128", "BQ": "64"}, big, causal, PERF)
    out["d128-kv32-n"] = ({"HD": "128", "BQ": "128", "BKV": "32"}, big, False, PERF)
    out["d128-kc64-n"] = ({"HD": "128", "BQ": "128", "KC": "64"}, big, False, PERF)
    for bq, bkv in (("128", "64"), ("128", "32"), ("128", "128"), ("64", "64")):
        out[f"d64-bq{bq}-kv{bkv}-n"] = ({"HD": "64", "BQ": bq, "BKV": bkv},
                                         {"BH": 128, "S": 8192}, False, PERF)
    return out


def main():
    dst = sys.argv[1]
    os.makedirs(dst, exist_ok=True)
    only = set(sys.argv[2].split(",")) if len(sys.argv) > 2 else None
    with open(os.path.join(ROOT, "examples/flash_attention_mma.py")) as fh:
        src = fh.read()
    for name, (consts, dims, causal, timing) in cases().items():
        if only and name not in only:
            continue
        c = dict(consts, CAUSAL="True" if causal else "False")
        # P is rounded to bf16 before P V (as in FA2 and cuDNN): the f32 output carries that
        # rounding, so the tolerance is bf16's, not the runner's f32 default.
        check = {"op": "attention", "a": "Q", "b": "K", "d": "V", "c": "O", "causal": causal,
                 "rtol": 1e-2, "atol": 2e-3}
        p = {"source": src, "kernel": "flash_attention_mma", "target": "sm_90a", "check": check,
             "constants": c, "dims": dims, "baseline": "torch_sdpa", "timeout_s": 20,
             "timing": timing}
        with open(os.path.join(dst, name + ".json"), "w") as fh:
            json.dump(p, fh, indent=1)


if __name__ == "__main__":
    main()
