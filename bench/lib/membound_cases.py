#!/usr/bin/env python3
"""Writes candidate payloads for the memory-bound suite: the bandwidth-limit KB templates
(kb/templates/*_vec.py, add_rmsnorm.py, rope.py) at shapes from real models (hidden 2048-8192,
rows 1-16384; softmax over 1k-128k columns; bf16 and f32; outputs in the input dtype), each
against what a PyTorch user runs (the runner's "torch" baseline: eager and
torch.compile(mode="max-autotune-no-cudagraphs"), plus a device-to-device copy of the case's
compulsory bytes, all in the same runner process on the kernel's own inputs), and each template
at small ragged shapes (lengths that are not a multiple of the 16-byte vector) checked in full.

usage: lib/membound_cases.py OUT_DIR [CASE,CASE...]   (--list: the case names)
"""
import os

import caselist

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SIZE = {"bf16": 2, "f16": 2, "f32": 4}
OPS = {"add": "a + b", "mul": "a * b", "silu_mul": "a / (1.0 + exp(-a)) * b"}


def row_consts(n):
    """NT threads per row and CH 8-element runs per thread: the whole row in registers, at most
    two runs per thread (longer per-thread loops are not unrolled, and their registers spill)."""
    nt = max(256, n // 16)
    runs = (n // 8 + nt - 1) // nt
    return {"NT": str(nt), "CH": str(max(1, runs))}


def case(family, dt, shape, consts=None, timed=True):
    return (family, dt, shape, consts or {}, timed)


def cases():
    c = {}
    for dt, rows, n in (("bf16", 16384, 4096), ("bf16", 4096, 8192), ("bf16", 16384, 2048),
                        ("bf16", 1, 4096), ("bf16", 32, 8192), ("f32", 4096, 4096)):
        c[f"rmsnorm-{dt}-{rows}x{n}"] = case("rmsnorm", dt, {"R": rows, "N": n}, row_consts(n))
    for dt, rows, n in (("bf16", 16384, 4096), ("f32", 4096, 8192)):
        c[f"layernorm-{dt}-{rows}x{n}"] = case("layernorm", dt, {"R": rows, "N": n},
                                               row_consts(n))
    for dt, rows, n in (("bf16", 16384, 4096), ("bf16", 4096, 8192), ("f32", 4096, 4096)):
        c[f"add_rmsnorm-{dt}-{rows}x{n}"] = case("add_rmsnorm", dt, {"R": rows, "N": n},
                                                 row_consts(n))
    # softmax: 1k columns (attention rows), 32k (vocabulary), 128k (long vocabularies).
    c["softmax-bf16-16384x1024"] = case("softmax", "bf16", {"R": 16384, "N": 1024},
                                        {"NT": "128", "CH": "1"})
    c["softmax-f32-4096x32768"] = case("softmax", "f32", {"R": 4096, "N": 32768},
                                       {"NT": "1024", "CH": "4"})
    c["softmax-bf16-1024x131072"] = case("softmax", "bf16", {"R": 1024, "N": 131072},
                                         {"NT": "1024", "CH": "4"})
    for op, dt, n in (("add", "bf16", 16384 * 4096), ("mul", "f32", 4096 * 4096),
                      ("silu_mul", "bf16", 16384 * 8192)):
        c[f"{op}-{dt}-{n}"] = case("elementwise:" + op, dt, {"N": n})
    for dt, rows, n in (("bf16", 16384, 4096), ("f32", 4096, 8192)):
        c[f"row_sum-{dt}-{rows}x{n}"] = case("row_sum", dt, {"R": rows, "N": n})
    c["rope-bf16-t16384-q32-k8-d128"] = case("rope", "bf16",
                                             {"T": 16384, "HQ": 32, "HK": 8, "D": 128, "D2": 64})
    c["rope-f32-t4096-q32-k8-d128"] = case("rope", "f32",
                                           {"T": 4096, "HQ": 32, "HK": 8, "D": 128, "D2": 64})
    # Ragged small shapes, checked in full: a tail that is not a multiple of the vector, rows
    # longer than the registers hold (CH runs of NT threads), one row.
    small = {"NT": "32", "CH": "2"}
    for dt in ("bf16", "f32"):
        for fam in ("rmsnorm", "layernorm", "add_rmsnorm", "softmax"):
            c[f"small-{fam}-{dt}"] = case(fam, dt, {"R": 3, "N": 1003}, small, timed=False)
        c[f"small-row_sum-{dt}"] = case("row_sum", dt, {"R": 5, "N": 999}, {"NT": "32"},
                                        timed=False)
        c[f"small-silu_mul-{dt}"] = case("elementwise:silu_mul", dt, {"N": 5001},
                                         {"BLOCK": "64"}, timed=False)
        c[f"small-rope-{dt}"] = case("rope", dt, {"T": 3, "HQ": 4, "HK": 2, "D": 64, "D2": 32},
                                     {"NT": "32"}, timed=False)
        c[f"small-rope-odd-{dt}"] = case("rope", dt, {"T": 3, "HQ": 3, "HK": 1, "D": 20, "D2": 10},
                                         {"NT": "32"}, timed=False)
    return c


def check_and_bytes(family, dt, d):
    """The runner's check of a family and its compulsory bytes (outputs in the input dtype)."""
    e = SIZE[dt]
    if family.startswith("elementwise:"):
        return {"op": family.split(":")[1], "a": "X", "b": "Y", "c": "Z"}, 3 * d["N"] * e
    rn = d.get("R", 0) * d.get("N", 0)
    if family == "rmsnorm":
        return {"op": "rmsnorm", "a": "X", "b": "W", "c": "Y", "eps": 1e-6}, 2 * rn * e + d["N"] * e
    if family == "layernorm":
        return ({"op": "layernorm", "a": "X", "b": "W", "d": "Bias", "c": "Y", "eps": 1e-5},
                2 * rn * e + 2 * d["N"] * e)
    if family == "add_rmsnorm":
        return ({"op": "add_rmsnorm", "a": "X", "u": "Res", "b": "W", "c": "Y", "e": "H",
                 "eps": 1e-6}, 4 * rn * e + d["N"] * e)
    if family == "softmax":
        return {"op": "softmax", "a": "X", "c": "Y"}, 2 * rn * e
    if family == "row_sum":
        return {"op": "row_sum", "a": "X", "c": "Y"}, rn * e + d["R"] * e
    qk = d["T"] * (d["HQ"] + d["HK"]) * d["D"]
    return ({"op": "rope", "a": "Q", "b": "K", "u": "Cos", "d": "Sin", "c": "QO", "e": "KO"},
            2 * qk * e + d["T"] * d["D"] * e)


def payload(name, c):
    family, dt, dims, consts, timed = c
    tpl = {"rmsnorm": "rmsnorm_vec", "layernorm": "layernorm_vec", "softmax": "softmax_vec",
           "row_sum": "row_sum_vec", "add_rmsnorm": "add_rmsnorm", "rope": "rope"}.get(
               family, "elementwise_vec")
    with open(os.path.join(ROOT, "kb/templates", tpl + ".py")) as fh:
        src = fh.read().replace("${dtype}", dt).replace("${out_dtype}", dt)
    if family.startswith("elementwise:"):
        src = src.replace("${OP}", OPS[family.split(":")[1]])
    check, nbytes = check_and_bytes(family, dt, dims)
    if timed:  # sampled rows (each checked exactly) past a million outputs, the rest NaN-scanned
        check["full_max_macs"] = 1 << 20
    return {"source": src, "kernel": tpl, "target": "sm_90a", "check": check,
            "constants": consts, "dims": dims, "baseline": "torch" if timed else "none",
            "timeout_s": 60, "bytes": float(nbytes),
            "timing": {"warmup": 5, "reps": 20, "flush_l2": True} if timed else
            {"warmup": 1, "reps": 3}}


if __name__ == "__main__":
    caselist.main(cases(), payload)
