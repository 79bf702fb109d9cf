#!/usr/bin/env python3
"""Writes candidate payloads for the attention suite: the flash attentions against PyTorch SDPA
(the runner's torch_sdpa baseline: the fastest correct backend, cuDNN on the H200) at the target
shapes (B4 H32 S4096 D128, causal or not; B8 H16 S8192 D64): examples/flash_attention_mma.py (mma.sync,
FA2 style; cases without a prefix) and kb/templates/flash_attention_wgmma.py (wgmma + TMA, FA3
style; cases "w-..." for the overlapped kernel, "ws-..." for flash_attention_wgmma_serial, "p-..."
for flash_attention_wgmma_pingpong: the overlapped kernel with its two consumer warp groups
taking turns on the tensor cores through named barriers; "pl-..." the same with O rescaled
after the wait, EARLY=False; "p3-..." the same with three consumer warp groups (CWG=3, BM=192,
FA3's D64 configuration); "ps-..." examples/flash_attention_wgmma_persistent.py, the
ping-pong kernel on a persistent grid of 132 blocks); "simt-..." examples/flash_attention.py
(no tensor cores; D64 only: at HD=128 its thread_layout vec = HD // 4 = 32 > 16 does not compile);
"m-MODEL-bB-sS-c|n" the attention of real models (GQA, MQA, MHA; prefill at S 512-8192), the
`models` set of bench/attention.sh, summarized by geomean and worst row.

usage: lib/attention_cases.py OUT_DIR [CASE,CASE...]   (--list: the case names)
"""
import os
import sys

import caselist

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
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


def wgmma_cases():
    """name -> (kernel, consts, dims, causal, timing) for flash_attention_wgmma.py."""
    def dims(bh, s):  # Q/K/V are [heads * S, D] (2-D TMA boxes), O is [BH, S, D]
        return {"RQ": bh * s, "RKV": bh * s, "BH": bh, "S": s}
    out = {}
    for pre, kernel, extra in (("w", "flash_attention_wgmma", {}),
                               ("ws", "flash_attention_wgmma_serial", {}),
                               ("p", "flash_attention_wgmma_pingpong", {}),
                               ("pl", "flash_attention_wgmma_pingpong", {"EARLY": "False"}),
                               ("p3", "flash_attention_wgmma_pingpong", {"CWG": "3"}),
                               ("ps", "flash_attention_wgmma_persistent", {})):
        for hd in ("64", "128"):
            for causal in (False, True):
                out[f"{pre}-small-d{hd}-{'c' if causal else 'n'}"] = (
                    kernel, dict(extra, HD=hd), dims(2, 256), causal, QUICK)
        for causal in (False, True):
            cn = "c" if causal else "n"
            for bn, st in (("128", "2"), ("64", "4"), ("128", "3")):
                out[f"{pre}-d128-bn{bn}-s{st}-{cn}"] = (
                    kernel, dict(extra, HD="128", BN=bn, STAGES=st), dims(128, 4096), causal,
                    PERF)
        for bn, st in (("128", "2"), ("128", "3"), ("128", "4"), ("64", "4")):
            out[f"{pre}-d64-bn{bn}-s{st}-n"] = (
                kernel, dict(extra, HD="64", BN=bn, STAGES=st), dims(128, 8192), False, PERF)
    return out


def simt_cases():
    """name -> (kernel, consts, dims, causal, timing) for flash_attention.py: B*H folded into BH
    (the kernel has no GQA / batch split); ~1 s a launch at this shape, hence 2 reps."""
    slow = {"warmup": 1, "reps": 2}
    return {f"simt-d64-{'c' if causal else 'n'}": (
        "flash_attention", {"HD": "64"}, {"BH": 128, "S": 8192}, causal, slow)
        for causal in (False, True)}


# Attention shapes of real models: name -> (query heads H, KV heads HKV, head dim D).
MODELS = {
    "llama3-8b": (32, 8, 128),     # also Mistral-7B's attention
    "qwen2.5-7b": (28, 4, 128),
    "llama2-13b": (40, 40, 128),   # MHA
    "llama3-70b": (64, 8, 128),    # also Qwen2.5-72B's attention
    "falcon-7b": (71, 1, 64),      # MQA
    "llama3.2-1b": (32, 8, 64),
    "qwen2.5-0.5b": (14, 2, 64),
    "gemma2-9b": (16, 8, 256),
    "phi3-mini": (32, 32, 96),
}

# (model, batch, S, causal flags): prefill at S 512 / 2048 / 8192, batch so that a step holds
# 2k-16k tokens, plus a single short prompt.
MODEL_SHAPES = [
    ("llama3-8b", 1, 512, "c"), ("llama3-8b", 8, 512, "cn"), ("llama3-8b", 2, 2048, "cn"),
    ("llama3-8b", 1, 8192, "cn"),
    ("qwen2.5-7b", 8, 512, "cn"), ("qwen2.5-7b", 2, 2048, "cn"), ("qwen2.5-7b", 1, 8192, "cn"),
    ("llama2-13b", 4, 512, "cn"), ("llama2-13b", 2, 2048, "cn"), ("llama2-13b", 1, 8192, "c"),
    ("llama3-70b", 1, 2048, "cn"), ("llama3-70b", 1, 8192, "c"),
    ("falcon-7b", 2, 2048, "cn"),
    ("llama3.2-1b", 8, 512, "c"), ("llama3.2-1b", 4, 2048, "cn"), ("llama3.2-1b", 1, 8192, "c"),
    ("qwen2.5-0.5b", 4, 2048, "cn"),
    ("gemma2-9b", 2, 2048, "cn"), ("gemma2-9b", 1, 8192, "c"), ("phi3-mini", 2, 2048, "c"),
]


def not_run_reason(d):
    """Why the models' kernel (flash_attention_wgmma_pingpong) has no case at head dim d, or
    None: its KB entry requires D of 64, 128 or 256."""
    return None if d in (64, 128, 256) else (
        f"no kernel for head dim {d} (D must be 64, 128 or 256: 64-wide swizzled chunks)")


def model_cases():
    """name -> (kernel, consts, dims, causal, timing, check extras) for the model shapes: the
    ping-pong kernel of flash_attention_wgmma.py, two consumer warp groups at D128 and D256 and
    three (BM = 192) at D64, BN 128 (64 at D256), two stages. A head dim it does not cover
    (Phi-3's 96) gets its case all the same, so the table shows it as not run."""
    out = {}
    for model, b, s, flags in MODEL_SHAPES:
        h, hkv, d = MODELS[model]
        for f in flags:
            consts = {"HD": str(d), "G": str(h // hkv), "BN": "64" if d == 256 else "128",
                      "STAGES": "2", "CWG": "3" if d == 64 else "2"}
            dims = {"RQ": b * h * s, "RKV": b * hkv * s, "BH": b * h, "S": s}
            out[f"m-{model}-b{b}-s{s}-{f}"] = (
                "flash_attention_wgmma_pingpong", consts, dims, f == "c", PERF,
                {"batch": b, "kv_heads": b * hkv}, not_run_reason(d))
    return out


def all_cases():
    """name -> (kernel, file relative to the repository root, consts, dims, causal, timing
    [, check extras])."""
    out = {n: ("flash_attention_mma", "examples/flash_attention_mma.py") + v
           for n, v in cases().items()}
    out.update({n: (v[0], "examples/" + v[0] + ".py" if v[0].endswith("_persistent")
                    else "kb/templates/flash_attention_wgmma.py") + v[1:]
                for n, v in wgmma_cases().items()})
    out.update({n: (v[0], "examples/flash_attention.py") + v[1:]
                for n, v in simt_cases().items()})
    out.update({n: (v[0], "kb/templates/flash_attention_wgmma.py") + v[1:6]
                for n, v in model_cases().items() if v[6] is None})
    return out


def payload(name, case):
    kernel, f, consts, dims, causal, timing = case[:6]
    with open(os.path.join(ROOT, f)) as fh:
        src = fh.read()
    check = {"op": "attention", "a": "Q", "b": "K", "d": "V", "c": "O", "causal": causal}
    check.update(case[6] if len(case) > 6 else {})  # the model cases' batch and kv_heads
    if kernel != "flash_attention":
        # P is rounded to bf16 before P V (as in FA2 and cuDNN): the f32 output carries that
        # rounding, so the tolerance is bf16's, not the runner's f32 default.
        check.update(rtol=1e-2, atol=2e-3)
    return {"source": src, "kernel": kernel, "target": "sm_90a", "check": check,
            "constants": dict(consts, CAUSAL="True" if causal else "False"), "dims": dims,
            "baseline": "torch_sdpa", "timeout_s": 20, "timing": timing}


if __name__ == "__main__":
    if sys.argv[1:2] == ["--models"]:  # the runnable model cases, comma-separated
        print(",".join(n for n, c in model_cases().items() if c[6] is None))
    elif sys.argv[1:2] == ["--not-run"]:  # CASE<TAB>reason for the model cases without a kernel
        print("\n".join(f"{n}\t{c[6]}" for n, c in model_cases().items() if c[6]))
    else:
        caselist.main(all_cases(), payload)
