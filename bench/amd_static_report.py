#!/usr/bin/env python3
"""Static report of the DSL's gfx942 (MI300X) kernels: compile-only, shown, never claimed as speed.

usage: bench/amd_static_report.py ARGUS_COMPILE [--objdump llvm-objdump-19] [--json OUT]
                                  [--check]

For each kernel of the GEMM (MFMA), attention and MoE families (examples/, KB templates) that compiles for
gfx942, runs `argus-compile --target gfx942`, disassembles the code object with llvm-objdump and
reads the code object's resources (the compiler's JSON sidecar, from the AMDHSA metadata). Prints
a markdown table: instructions, MFMA share of them, VGPR/AGPR (unified file), SGPR, LDS bytes,
scratch bytes, and the waves per SIMD these allow. --check exits 1 unless every number is present
and sane (the CI test `amd_static_report`).

Occupancy model (CDNA3, per SIMD; 4 SIMDs and 64 KiB LDS per CU, wave64): the unified register
file holds 512 registers per lane; a wave takes its arch VGPRs rounded up to 4, then its AGPRs,
the sum rounded up to 8; 800 SGPRs per SIMD in blocks of 16 (plus 6 for VCC/flat scratch/XNACK);
at most 8 waves per SIMD; LDS limits the workgroups per CU.
"""
import json
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# row name -> (file under examples/, or kb/templates/ with its ${dtype} as bf16; kernel; consts;
# family).
KERNELS = {
    "gemm_mfma32": ("gemm_mfma.py", "gemm_mfma32", {}, "gemm"),
    "gemm_mfma16": ("gemm_mfma.py", "gemm_mfma16", {}, "gemm"),
    "flash_attention d64": ("flash_attention.py", "flash_attention", {"HD": "64"}, "attention"),
    "flash_attention d64 causal": ("flash_attention.py", "flash_attention",
                                   {"HD": "64", "CAUSAL": "True"}, "attention"),
    "moe_mlp (KB template)": ("kb/templates/moe_mlp.py", "moe_mlp", {}, "moe"),
}
FAMILIES = ("gemm", "attention", "moe")
INSN = re.compile(r"^\s+([a-z_][a-z0-9_]*)\b.*//\s*[0-9A-F]{12}:")


def up(x, m):
    return (x + m - 1) // m * m


def occupancy(r, threads, agpr_base):
    unified = agpr_base + r["agprs"] if r["agprs"] else r["registers"]
    per_wave = up(max(unified, r["registers"]), 8)
    by_vgpr = min(8, 512 // per_wave)
    by_sgpr = min(8, 800 // up(r["sgprs"] + 6, 16))
    lds = r["static_shared_bytes"]
    waves_per_wg = -(-threads // 64)
    by_lds = 8 if lds == 0 else min(8, (65536 // lds) * waves_per_wg // 4)
    return per_wave, min(by_vgpr, by_sgpr, by_lds), {"vgpr": by_vgpr, "sgpr": by_sgpr,
                                                      "lds": by_lds}


def report_one(compiler, objdump, name, spec, tmp):
    f, kernel, consts, family = spec
    out = os.path.join(tmp, re.sub(r"\W+", "_", name))
    src = os.path.join(ROOT, f if "/" in f else os.path.join("examples", f))
    if f.startswith("kb/"):  # a KB template: the planner substitutes the problem's dtype
        text = open(src).read().replace("${dtype}", "bf16")
        src = out + ".py"
        with open(src, "w") as fh:
            fh.write(text)
    cmd = [compiler, src, "--target", "gfx942", "--kernel", kernel, "-o", out]
    for k, v in consts.items():
        cmd += ["--const", f"{k}={v}"]
    subprocess.run(cmd, check=True, capture_output=True, text=True)
    meta = json.load(open(os.path.join(out, kernel + ".json")))
    r = meta["resources"]
    asm = open(os.path.join(out, kernel + ".s")).read()
    m = re.search(r"\.amdhsa_accum_offset\s+(\d+)", asm)
    agpr_base = int(m.group(1)) if m else r["registers"]
    dis = subprocess.run([objdump, "-d", "--mcpu=gfx942", os.path.join(out, meta["artifact"])],
                         check=True, capture_output=True, text=True).stdout
    ops = [mm.group(1) for mm in map(INSN.match, dis.splitlines()) if mm]
    mfma = sum(op.startswith("v_mfma") for op in ops)
    per_wave, waves, limits = occupancy(r, meta["block"][0], agpr_base)
    return {"kernel": name, "family": family, "instructions": len(ops), "mfma": mfma,
            "mfma_share": mfma / max(len(ops), 1), "vgprs": r["registers"], "agprs": r["agprs"],
            "unified_regs_per_wave": per_wave, "sgprs": r["sgprs"],
            "lds_bytes": r["static_shared_bytes"] + meta.get("dynamic_shared_bytes", 0),
            "scratch_bytes": r["scratch_bytes"], "vgpr_spills": r["vgpr_spills"],
            "threads": meta["block"][0], "waves_per_simd": waves, "limits": limits}


def sane(row):
    return (row["instructions"] > 10 and 0 <= row["mfma"] <= row["instructions"]
            and (row["family"] != "gemm" or row["mfma"] > 0) and 0 < row["vgprs"] <= 512
            and 0 <= row["agprs"] <= 256 and 0 < row["sgprs"] <= 106
            and 0 <= row["lds_bytes"] <= 65536 and row["scratch_bytes"] >= 0
            and 1 <= row["waves_per_simd"] <= 8)


def main(argv):
    if len(argv) < 2:
        sys.exit(__doc__)
    compiler = argv[1]
    objdump = argv[argv.index("--objdump") + 1] if "--objdump" in argv else "llvm-objdump-19"
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, spec in KERNELS.items():
            rows.append(report_one(compiler, objdump, name, spec, tmp))
    print("| kernel | family | insns | MFMA | MFMA share | VGPR | AGPR | regs/wave | SGPR | "
          "LDS B | scratch B | threads | waves/SIMD (limit) |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for r in rows:
        lim = "cap" if r["waves_per_simd"] == 8 else min(r["limits"], key=r["limits"].get)
        print(f"| {r['kernel']} | {r['family']} | {r['instructions']} | {r['mfma']} | "
              f"{100 * r['mfma_share']:.1f}% | {r['vgprs']} | {r['agprs']} | "
              f"{r['unified_regs_per_wave']} | {r['sgprs']} | {r['lds_bytes']} | "
              f"{r['scratch_bytes']} | {r['threads']} | {r['waves_per_simd']} ({lim}) |")
    missing = [f for f in FAMILIES if not any(r["family"] == f for r in rows)]
    if missing:
        print(f"\nno gfx942 kernel for: {', '.join(missing)}")
    if "--json" in argv:
        with open(argv[argv.index("--json") + 1], "w") as fh:
            json.dump(rows, fh, indent=1)
    if "--check" in argv:
        bad = [r["kernel"] for r in rows if not sane(r)]
        if bad or len(rows) != len(KERNELS):
            print(f"insane or missing report rows: {bad}", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
