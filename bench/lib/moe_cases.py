#!/usr/bin/env python3
"""Writes candidate payloads for the MoE suite (SwiGLU experts, top-k routing) against what a
PyTorch user runs (the runner's torch_moe_loop baseline: the loop over experts and a sort +
torch._grouped_mm pipeline, the faster one ranked) at the target shapes (T4096 H2048 I1408 E64
top-6, T4096 H4096 I14336 E8 top-2) and three more (E128 top-8 H2048 I768 at T4096 and T512,
E16 top-2 H4096 I6400).

Kernels: the KB template kb/templates/moe_mlp.py (one block per token, SIMT) and, cases
*-wgmma, the six-launch tensor-core pipeline kb/templates/moe_wgmma.py (count, place, gather,
wgmma gate/up + SiLU, wgmma down, reduce): a payload with "pipeline", which the worker's
PrepareGpuRun turns into one multi-launch runner spec over one set of tensors.
usage: lib/moe_cases.py OUT_DIR [CASE,CASE...]   (--list: the case names)
Environment: MOE_WGMMA_SRC, another source file for the moe_wgmma cases (an older version of
the template, to race it against the current one: bench/moe.sh --race).
"""
import os

import caselist

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CHECK = {"op": "moe", "a": "X", "b": "Wg", "u": "Wu", "d": "Wd", "c": "Y", "ids": "Ids",
         "weights": "Wt"}


def cases():
    # name -> (template, consts, dims, timing, timeout_s)
    small = {"T": 64, "D": 64, "F": 128, "E": 8, "TOPK": 2}
    e64 = {"T": 4096, "D": 2048, "F": 1408, "E": 64, "TOPK": 6}
    e8 = {"T": 4096, "D": 4096, "F": 14336, "E": 8, "TOPK": 2}
    # Three more routings: 128 experts top-8 (Qwen3-30B-A3B's FFN) at 4096 tokens and at 512
    # (32 rows per expert), and 16 experts top-2 (Phi-3.5-MoE's).
    e128 = {"T": 4096, "D": 2048, "F": 768, "E": 128, "TOPK": 8}
    e128_t512 = dict(e128, T=512)
    e16 = {"T": 4096, "D": 4096, "F": 6400, "E": 16, "TOPK": 2}
    slow = {"warmup": 1, "reps": 3, "flush_l2": True}
    timed = {"warmup": 5, "reps": 20, "flush_l2": True}
    return {
        "small-mlp": ("moe_mlp", {"NT": "64", "FT": "16"}, small, {"warmup": 3, "reps": 10}, 20),
        "e64-mlp": ("moe_mlp", {"NT": "128", "FT": "64"}, e64, slow, 60),
        "e8-mlp": ("moe_mlp", {"NT": "128", "FT": "64"}, e8, slow, 60),
        "small-wgmma": ("moe_wgmma", {"GW": "256"}, dict(small, D=256), {"warmup": 3, "reps": 10}, 30),
        "e64-wgmma": ("moe_wgmma", {}, e64, timed, 120),
        "e8-wgmma": ("moe_wgmma", {}, e8, timed, 120),
        "e128-wgmma": ("moe_wgmma", {}, e128, timed, 120),
        "e128-t512-wgmma": ("moe_wgmma", {}, e128_t512, timed, 120),
        "e16-wgmma": ("moe_wgmma", {}, e16, timed, 120),
        # Knob variants, timed without the loop (the case above times it in the same run).
        "e8-wgmma-g16": ("moe_wgmma", {"GROUP": "16"}, e8, dict(timed, baseline=False), 120),
        "e8-wgmma-s3": ("moe_wgmma", {"STAGES": "3"}, e8, dict(timed, baseline=False), 120),
        # Tile orders: gate/up (GU_TAIL) or down (DN_TAIL) walk the half tiles last.
        "e8-wgmma-gu1": ("moe_wgmma", {"GU_TAIL": "1"}, e8, dict(timed, baseline=False), 120),
        "e8-wgmma-dn1": ("moe_wgmma", {"DN_TAIL": "1"}, e8, dict(timed, baseline=False), 120),
        "e64-wgmma-dn1": ("moe_wgmma", {"DN_TAIL": "1"}, e64, dict(timed, baseline=False), 120),
        # gate/up's H stored from registers (EPI=0) instead of through shared memory and TMA.
        "e8-wgmma-epi0": ("moe_wgmma", {"EPI": "0"}, e8, dict(timed, baseline=False), 120),
        "e64-wgmma-epi0": ("moe_wgmma", {"EPI": "0"}, e64, dict(timed, baseline=False), 120),
    }


PIPELINE = ["moe_count", "moe_place", "moe_gather", "moe_gateup", "moe_down", "moe_reduce"]
BM = 128  # the row tile of the route and of both grouped GEMMs


def pipeline_dims(p):
    """moe_wgmma's dims: MT tiles of BM padded rows (each expert's rows start a tile)."""
    mt = (p["T"] * p["TOPK"] + BM - 1) // BM + p["E"]
    return dict(p, MT=mt, R=mt * BM, ED=p["E"] * p["D"], EF=p["E"] * p["F"])


def payload(name, case):
    tpl, consts, dims, timing, timeout = case
    path = os.path.join(ROOT, "kb/templates", tpl + ".py")
    if tpl == "moe_wgmma" and os.environ.get("MOE_WGMMA_SRC"):
        path = os.environ["MOE_WGMMA_SRC"]
    with open(path) as fh:
        src = fh.read().replace("${dtype}", "bf16")
    flops = 6.0 * dims["T"] * dims["TOPK"] * dims["D"] * dims["F"]
    timing = dict(timing)
    baseline = "torch_moe_loop" if timing.pop("baseline", True) else "none"
    p = {"source": src, "kernel": tpl, "target": "sm_90a", "check": CHECK,
         "constants": consts, "dims": dims, "baseline": baseline,
         "timeout_s": timeout, "timing": timing, "flops": flops}
    if tpl == "moe_wgmma":
        E, D, F = dims["E"], dims["D"], dims["F"]
        p.update(kernel=PIPELINE[-1], pipeline=PIPELINE, dims=pipeline_dims(dims),
                 shapes={"Wg": [E, D, F], "Wu": [E, D, F], "Wd": [E, F, D]})
    return p


if __name__ == "__main__":
    caselist.main(cases(), payload)
