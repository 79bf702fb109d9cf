#!/usr/bin/env python3
"""Writes candidate payloads (gpu_worker/candidate.h) for the GEMM suite: the Hopper DSL GEMMs
(wgmma + TMA, examples/gemm_wgmma*.py) against cuBLAS (cublasGemmEx) in the same runner process.

usage: lib/gemm_cases.py OUT_DIR [CASE,CASE...]   (--list: the case names)
Each case: NAME -> (file, kernel, consts, dims, timing). Small shapes are checked in full
against the f64 reference; the perf shapes (4096^3, 8192^3, 4096x14336x4096) by sampled rows.
Environment: GEMM_EXTRA_CASES="NAME=FILE:KERNEL:K=V,K=V:SHAPE;..." adds cases (SHAPE: small,
4k, 8k or 4kx14k).
"""
import os

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
    extra = os.environ.get("GEMM_EXTRA_CASES", "")
    for spec in filter(None, extra.split(";")):  # name=file:kernel:K=V,K=V:shape
        name, rest = spec.split("=", 1)
        f, k, consts, shape = rest.split(":")
        cd = dict(kv.split("=") for kv in filter(None, consts.split(",")))
        dims = SMALL if shape == "small" else SHAPES[shape]
        out[name] = (f, k, cd, dims, QUICK if shape == "small" else PERF)
    return out


def payload(name, case):
    f, k, consts, dims, timing = case
    with open(os.path.join(ROOT, f)) as fh:
        src = fh.read()
    p = {"source": src, "kernel": k, "target": "sm_90a", "check": GEMM, "constants": consts,
         "dims": dims, "baseline": "cublas", "timeout_s": 10, "timing": timing}
    if f in PIPELINES:
        p["pipeline"] = PIPELINES[f]
    return p


if __name__ == "__main__":
    caselist.main(cases(), payload)
