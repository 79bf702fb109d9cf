#!/usr/bin/env python3
"""Writes candidate payloads (gpu_worker/candidate.h) for the GEMM suite: the Hopper DSL GEMMs
(wgmma + TMA, examples/gemm_wgmma*.py) against cuBLAS (cublasGemmEx) in the same runner process.

usage: lib/gemm_cases.py OUT_DIR [CASE,CASE...]   (--list: the case names)
Each case: NAME -> (file, kernel, consts, dims, timing). Small shapes are checked in full
against the f64 reference; the perf shapes (4096^3, 8192^3, 4096x14336x4096) by sampled rows.
Environment: GEMM_EXTRA_CASES="NAME=FILE:KERNEL:K=V,K=V:SHAPE;..." adds cases (SHAPE: small,
4k, 8k or 4kx14k).
"""
import json
import os
import sys

import caselist

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GEMM = {"op": "gemm", "a": "A", "b": "B", "c": "C", "b_layout": "kn"}
SMALL = {"M": 256, "N": 512, "K": 384}
SHAPES = {"4k": {"M": 4096, "N": 4096, "K": 4096}, "8k": {"M": 8192, "N": 8192, "K": 8192},
          "4kx14k": {"M": 4096, "N": 14336, "K": 4096}}
# K scan at M = N = 4096: time(K) = per-tile fixed cost (prologue + epilogue) + K * slope;
# comparing the fixed cost with cuBLAS's tells what the epilogue costs us.
KSCAN = {f"4k-k{k // 1024}k": {"M": 4096, "N": 4096, "K": k} for k in (1024, 2048, 8192, 16384)}
QUICK = {"warmup": 3, "reps": 5}
PERF = {"warmup": 10, "reps": 30}
ROUNDS = dict(PERF, rounds=5)  # ours and cuBLAS timed alternately, 5 times each (runner_core.h)
SPLITK_GEMM = ("kb/templates/gemm_wgmma_splitk.py", "gemm_splitk_tail")
# Sources whose kernels run as a pipeline over one set of tensors (the payload's "pipeline").
PIPELINES = {SPLITK_GEMM[0]: ["gemm_splitk_dp", "gemm_splitk_tail"]}


def cases():
    out = {}
    per_tile = ("examples/gemm_wgmma.py", "gemm_wgmma")
    coop = ("kb/templates/gemm_wgmma_persistent.py", "gemm_wgmma_persistent")
    ping = ("examples/gemm_wgmma_pingpong.py", "gemm_wgmma_pingpong")
    variants = {  # short name -> (file, kernel, consts); "w" at the small shape only
        "w": per_tile + ({},),
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
    # the persistent kernel's raster group and tile shape
    for short, consts in {"g4": {"GROUP": "4"}, "g16": {"GROUP": "16"},
                          "bn192": {"BN": "192", "STAGES": "5"},
                          "bm256": {"BM": "256", "BN": "128"}}.items():
        out[f"p{short}-small"] = coop + (consts, SMALL, QUICK)
        for s, dims in SHAPES.items():
            out[f"p{short}-{s}"] = coop + (consts, dims, PERF)
    for s, dims in KSCAN.items():
        out[f"p-{s}"] = coop + ({}, dims, PERF)
    out["pbm256g16-8k"] = coop + ({"BM": "256", "BN": "128", "GROUP": "16"}, SHAPES["8k"], PERF)
    # The TMA-store epilogue (kb/templates/gemm_wgmma_tma_store.py): EBUFS shared sub-tile
    # buffers per consumer warp group; 4 stages fit with 2 buffers, 3 stages with 4.
    tstore = ("kb/templates/gemm_wgmma_tma_store.py", "gemm_wgmma_tma_store")
    for short, consts in {"t": {}, "te4s3": {"EBUFS": "4", "STAGES": "3"},
                          "tg8": {"GROUP": "8"}, "tg32": {"GROUP": "32"},
                          "ts128": {"SMS": "128"},
                          "te4s3g32": {"EBUFS": "4", "STAGES": "3", "GROUP": "32"}}.items():
        out[f"{short}-small"] = tstore + (consts, SMALL, QUICK)
        for s, dims in SHAPES.items():
            out[f"{short}-{s}"] = tstore + (consts, dims, PERF)
    for s, dims in KSCAN.items():
        out[f"t-{s}"] = tstore + ({}, dims, PERF)
    # The best verified configuration per shape so far (docs/perf.md, "knobs per shape"), for
    # the target rows (lib/rows.py): bench/gemm.sh best-4k,best-8k,best-4kx14k.
    best = {"4k": {"SMS": "128"}, "8k": {"EBUFS": "4", "STAGES": "3", "SMS": "128"},
            "4kx14k": {"EBUFS": "4", "STAGES": "3", "SMS": "128"}}
    for s, consts in best.items():
        out[f"best-{s}"] = tstore + (consts, SHAPES[s], ROUNDS)
    # The TMA-store kernel's knobs per shape, each case timed in ROUNDS rounds alternating
    # with cuBLAS in its runner process (run with PASSES=N for N processes per case). s128 = a
    # grid of 128 persistent blocks: 512, 2048 and 1792 tiles of 128 x 256 are exactly 4, 16 and
    # 14 waves of 128 (of 132: 3.9, 15.5, 13.6 — the same number of tile times, on fewer SMs).
    for short, consts in {"t": {}, "ts128": {"SMS": "128"},
                          "te4s3": {"EBUFS": "4", "STAGES": "3"},
                          "te4s3s128": {"EBUFS": "4", "STAGES": "3", "SMS": "128"},
                          "ts128g8": {"SMS": "128", "GROUP": "8"},
                          # 320-wide tiles (five n64 wgmma tiles per warp group; the last column
                          # tile shifted to end at N): 4096 x 14336 in 1440 tiles, 10.9 waves
                          "tn320": {"BN": "320", "STAGES": "3"},
                          # 192-wide (one n192 tile): 8192^2 in 64 x 43 = 2752 tiles, 20.85
                          # waves of 132 (128 x 256: 2048 = 15.5): 1.6 % less critical-path work
                          "tn192": {"BN": "192", "EBUFS": "4"}}.items():
        for s, dims in SHAPES.items():
            out[f"r{short}-{s}"] = tstore + (consts, dims, ROUNDS)
    # The split-K tail (kb/templates/gemm_wgmma_splitk.py, a pipeline of two launches): the
    # TILES // 132 * 132 data-parallel tiles as in te4s3, then the tail tiles in SPLITK units of
    # K / 64 / SPLITK k-steps each, added into C with TMA reduce-add stores. Critical path in tile
    # times (128 x 256 tiles): 4096 x 14336: 13 + 76 * SPLITK units over 132 blocks (SPLITK 4:
    # 13.75, 8: 13.625) against 14; 8192^3: 15 + 68 * SPLITK units (8: 15.625, 16: 15.5625)
    # against 16; 4096^3: 3 + 116 * SPLITK units (16: 3.94) against 4.
    for split in (4, 8, 16):
        # e4s3s128: SMS = 128 divides 4096 x 14336's 1792 tiles: no tail, the second launch
        # has nothing to do; against best-4kx14k it prices the launch boundary.
        for short, consts in {"": {}, "e4s3": {"EBUFS": "4", "STAGES": "3"},
                              "e4s3s128": {"EBUFS": "4", "STAGES": "3", "SMS": "128"}}.items():
            for s, dims in SHAPES.items():
                out[f"sk{split}{short}-{s}"] = SPLITK_GEMM + (dict(consts, SPLITK=str(split)),
                                                              dims, ROUNDS)
    out["sk2-small"] = SPLITK_GEMM + ({"SPLITK": "2", "SMS": "3"}, SMALL, QUICK)
    out.update(sweep_cases())
    extra = os.environ.get("GEMM_EXTRA_CASES", "")
    for spec in filter(None, extra.split(";")):  # name=file:kernel:K=V,K=V:shape
        name, rest = spec.split("=", 1)
        f, k, consts, shape = rest.split(":")
        cd = dict(kv.split("=") for kv in filter(None, consts.split(",")))
        dims = SMALL if shape == "small" else SHAPES[shape]
        out[name] = (f, k, cd, dims, QUICK if shape == "small" else PERF)
    return out


# The nn.Linear sweep (bench/gemm.sh sweep): real models' linear layers, W stored [N, K] (N, K),
# at decode and prefill batch sizes, plus irregular shapes; bf16 in, f32 out; cuBLAS with the same
# layout and output dtype. Case names: sw-LAYER-mM.KERNEL (KERNEL: swap, the swap-AB decode kernel;
# swap12 / swap128, its knobs; lin / lin128, the persistent TMA-store kernel at BN 256 / 128); the
# table (lib/tables.py sweep) keeps the fastest per shape.
LAYERS = {
    "qwen7b-qkv": (4608, 3584), "qwen7b-down": (3584, 18944),        # Qwen2.5-7B
    "gemma9b-qkv": (8192, 3584), "gemma9b-o": (3584, 4096),          # Gemma-2-9B
    "phi3-gateup": (16384, 3072), "phi3-down": (3072, 8192),         # Phi-3-mini
    "llama13b-o": (5120, 5120), "llama13b-up": (13824, 5120),        # Llama-2-13B
    "dsv2-kva": (576, 5120), "dsv2-down": (5120, 12288),             # DeepSeek-V2 dense
}
SWEEP_M = (1, 16, 64, 256, 2048, 8192)
IRREGULAR = {"irr-1000": (1000, 1000, 1000), "irr-37x5000x3000": (37, 5000, 3000),
             "irr-3001x2500x1240": (3001, 2500, 1240), "irr-127x130x4096": (127, 130, 4096),
             "irr-8190x7x512": (8190, 7, 512), "irr-5x50000x1000": (5, 50000, 1000)}
LINEAR = ("kb/templates/gemm_wgmma_linear.py", "gemm_wgmma_linear")
SWAP = ("kb/templates/gemm_wgmma_linear_swap.py", "gemm_wgmma_linear_swap")
NK = dict(GEMM, b_layout="nk")
SWEEP_TIMING = {"warmup": 5, "reps": 20}




def swap_consts(m):
    return {"BX": str(8 if m <= 8 else 16 if m <= 16 else 32 if m <= 32 else 64), "STAGES": "8"}


def decode_cases(m, n, k, dims):
    """The swap-AB kernel ("swap"), with a deeper ring at M = 1 ("swap12") and 128-row tiles of A
    at M = 256 ("swap128")."""
    consts = swap_consts(m)
    out = {"swap": SWAP + (consts, dims, SWEEP_TIMING)}
    if m == 1:  # a deeper ring: more of the weight in flight per SM
        out["swap12"] = SWAP + (dict(consts, STAGES="12"), dims, SWEEP_TIMING)
    if m == 256:  # 128-row tiles of A: half the blocks of BX = 64, A read half as often
        out["swap128"] = SWAP + ({"BX": "128", "STAGES": "6"}, dims, SWEEP_TIMING)
    return out


def sweep_cases():
    out = {}
    shapes = {f"{n}-m{m}": (m, nk[0], nk[1]) for n, nk in LAYERS.items() for m in SWEEP_M}
    shapes.update(IRREGULAR)
    for name, (m, n, k) in shapes.items():
        dims = {"M": m, "N": n, "K": k}
        if m <= 256:
            for kern, case in decode_cases(m, n, k, dims).items():
                out[f"sw-{name}.{kern}"] = case
        if m >= 256 and n % 4 == 0:
            bn = "256" if n >= 1024 else "128"
            out[f"sw-{name}.lin"] = LINEAR + ({"BN": bn}, dims, SWEEP_TIMING)
            if m == 256 and bn == "256":  # twice the tiles: fills more of the 132 SMs
                out[f"sw-{name}.lin128"] = LINEAR + ({"BN": "128"}, dims, SWEEP_TIMING)
        if m > 256 and n % 4:
            out[f"sw-{name}.swap"] = SWAP + (swap_consts(m), dims, SWEEP_TIMING)
    return out


def payload(name, case):
    f, k, consts, dims, timing = case
    with open(os.path.join(ROOT, f)) as fh:
        src = fh.read().replace("${dtype}", "bf16")
    check = NK if name.startswith("sw-") else GEMM
    p = {"source": src, "kernel": k, "target": "sm_90a", "check": check, "constants": consts,
         "dims": dims, "baseline": "cublas", "timeout_s": 10, "timing": timing}
    if f in PIPELINES:
        p["pipeline"] = PIPELINES[f]
    return p


if __name__ == "__main__":
    if sys.argv[1:2] == ["--sweep"]:  # the sweep's case names, comma-separated
        print(",".join(sweep_cases()))
    elif sys.argv[1:2] == ["--sweep-shapes"]:  # {shape: [M, N, K]}, for gemm_torch.py
        print(json.dumps({c.partition(".")[0]: [d["M"], d["N"], d["K"]]
                          for c, (_, _, _, d, _) in sweep_cases().items()}))
    else:
        caselist.main(cases(), payload)
