#!/usr/bin/env python3
"""Writes candidate payloads (gpu_worker/candidate_schema.h) for every example kernel, the tuned
mma.sync GEMM (bench/kernels/gemm_mma_tuned.py) and the kernels that must fail
(bench/bad_kernels.py: a fault and a timeout, for the worker's outcome mapping).

usage: lib/example_cases.py OUT_DIR [--size small|large] [--only CASE,CASE...]
small: shapes the interpreter checks in seconds (CI); large: the H200 perf shapes.
"""
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# kernel -> (file, target, check, small dims, large dims, baseline)
GEMM = {"op": "gemm", "a": "A", "b": "B", "c": "C", "b_layout": "kn"}
CASES = {
    "vector_add": ("vector_add.py", "sm_90a", {"op": "add", "a": "X", "b": "Y", "c": "Z"},
                   {"N": 1000}, {"N": 1 << 26}, "none"),
    "gemm_naive": ("gemm_naive.py", "sm_90a", GEMM, {"M": 48, "N": 40, "K": 24},
                   {"M": 2048, "N": 2048, "K": 2048}, "cublas"),
    "gemm_smem": ("gemm_smem.py", "sm_90a", GEMM, {"M": 64, "N": 64, "K": 64},
                  {"M": 2048, "N": 2048, "K": 2048}, "cublas"),
    "gemm_mma": ("../kb/templates/gemm_mma.py", "sm_90a", GEMM, {"M": 128, "N": 128, "K": 64},
                 {"M": 4096, "N": 4096, "K": 4096}, "cublas"),
    "gemm_mma_tuned": ("../bench/kernels/gemm_mma_tuned.py", "sm_90a", GEMM, {"M": 128, "N": 256, "K": 96},
                       {"M": 4096, "N": 4096, "K": 4096}, "cublas"),
    "gemm_mma_tuned_bk64": ("../bench/kernels/gemm_mma_tuned.py", "sm_90a", GEMM,
                            {"M": 128, "N": 128, "K": 128}, {"M": 4096, "N": 4096, "K": 4096},
                            "cublas", {"BK": "64"}),
    "gemm_mma_tuned_256": ("../bench/kernels/gemm_mma_tuned.py", "sm_90a", GEMM,
                           {"M": 128, "N": 256, "K": 192}, {"M": 4096, "N": 4096, "K": 4096},
                           "cublas", {"BN": "256", "STAGES": "4"}),
    "gemm_wgmma_persistent": ("../kb/templates/gemm_wgmma_persistent.py", "sm_90a", GEMM,
                              {"M": 256, "N": 512, "K": 384}, {"M": 4096, "N": 4096, "K": 4096},
                              "cublas"),
    "gemm_wgmma": ("gemm_wgmma.py", "sm_90a", GEMM, {"M": 256, "N": 512, "K": 384},
                   {"M": 4096, "N": 4096, "K": 4096}, "cublas"),
    "flash_attention_mma": ("flash_attention_mma.py", "sm_90a",
                            {"op": "attention", "a": "Q", "b": "K", "d": "V", "c": "O",
                             "rtol": 1e-2, "atol": 2e-3},  # P is rounded to bf16 before P.V
                            {"BH": 2, "S": 256}, {"BH": 128, "S": 4096}, "torch_sdpa",
                            {"HD": "128", "BQ": "128"}),
    "softmax": ("softmax.py", "sm_90a", {"op": "softmax", "a": "X", "c": "Y"},
                {"R": 4, "N": 300}, {"R": 4096, "N": 4096}, "none"),
    "rmsnorm": ("rmsnorm.py", "sm_90a",
                {"op": "rmsnorm", "a": "X", "b": "W", "c": "Y", "eps": 1e-6},
                {"R": 6, "N": 200}, {"R": 4096, "N": 4096}, "none"),
    "flash_attention": ("flash_attention.py", "sm_90a",
                        {"op": "attention", "a": "Q", "b": "K", "d": "V", "c": "O"},
                        {"BH": 1, "S": 64}, {"BH": 32, "S": 1024}, "torch_sdpa"),
    "oob_store": ("../bench/bad_kernels.py", "sm_90a", {"op": "none", "c": "Z"}, {"N": 1024},
                  {"N": 1024}, "none"),
    "spin": ("../bench/bad_kernels.py", "sm_90a", {"op": "none", "c": "Z"}, {"N": 32}, {"N": 32},
             "none"),
    "gemm_mfma32": ("gemm_mfma.py", "gfx942", GEMM, {"M": 64, "N": 64, "K": 32},
                    {"M": 4096, "N": 4096, "K": 4096}, "none"),
    "gemm_mfma16": ("gemm_mfma.py", "gfx942", dict(GEMM, rtol=1e-2, atol=1e-3),
                    {"M": 32, "N": 64, "K": 64}, {"M": 4096, "N": 4096, "K": 4096}, "none"),
}


def main():
    out = sys.argv[1]
    size = sys.argv[sys.argv.index("--size") + 1] if "--size" in sys.argv else "small"
    only = set(sys.argv[sys.argv.index("--only") + 1].split(",")) if "--only" in sys.argv else None
    if only and only - set(CASES):
        sys.exit(f"unknown cases: {sorted(only - set(CASES))}")
    os.makedirs(out, exist_ok=True)
    for name, case in CASES.items():
        if only and name not in only:
            continue
        fname, target, check, small, large, baseline = case[:6]
        consts = case[6] if len(case) > 6 else {}
        kernel = "gemm_mma_tuned" if name.startswith("gemm_mma_tuned") else name
        with open(os.path.join(ROOT, "examples", fname)) as f:
            src = f.read()
        p = {"source": src, "kernel": kernel, "target": target, "check": check, "constants": consts,
             "dims": small if size == "small" else large, "baseline": baseline,
             "timeout_s": 3 if kernel == "spin" else 20,
             "timing": {"warmup": 3, "reps": 5} if size == "small" else {"warmup": 10, "reps": 30}}
        with open(os.path.join(out, name + ".json"), "w") as f:
            json.dump(p, f, indent=1)


if __name__ == "__main__":
    main()
