#!/usr/bin/env python3
"""Experiment, not a product path: does moving exponentials off the SFU pay on the H200?

Replaces a share (0, 2, 3, 4 eighths) of the ex2.approx instructions in a prepared bundle case's
PTX (e.g. the D64 ping-pong attention of bench/targets.sh) with FA4's FMA-pipe exp2
(round to nearest by the 1.5 * 2^23 trick, a degree-3 polynomial for 2^f on [-0.5, 0.5] fitted
here by least squares, max relative error 1.8e-4, and an integer add into the exponent),
reassembles each with ptxas, and writes OUT_DIR/emu<share>/ beside a copy of the case: the
runner then checks and times each against the baseline as usual.
usage: bench/experiments/exp2_emulation_ptx.py CASE_DIR OUT_DIR
  then copy argus-runner, bench/lib/run_specs.sh and the runner's Python baselines
  (build/bin/*.py) into OUT_DIR and run `PASSES=2 bash OUT_DIR/run_specs.sh 120` on the GPU
  machine (docs/perf.md, "Attention D64: what the SFU experiments say").
"""
import re, shutil, struct, subprocess, sys, os, json
src_case = sys.argv[1]; out = sys.argv[2]
# Least squares for 2^f ~ 1 + c1 f + c2 f^2 + c3 f^3 on [-0.5, 0.5], relative error weighted.
fs = [-0.5 + i / 4000 for i in range(4001)]
rows = [[x / 2**x, x * x / 2**x, x**3 / 2**x] for x in fs]
rhs = [(2**x - 1) / 2**x for x in fs]
N = [[sum(r[i] * r[j] for r in rows) for j in range(3)] for i in range(3)]
b = [sum(r[i] * y for r, y in zip(rows, rhs)) for i in range(3)]
for i in range(3):  # Gaussian elimination
    for j in range(i + 1, 3):
        m = N[j][i] / N[i][i]
        N[j] = [a - m * q for a, q in zip(N[j], N[i])]; b[j] -= m * b[i]
c = [0, 0, 0]
for i in (2, 1, 0):
    c[i] = (b[i] - sum(N[i][j] * c[j] for j in range(i + 1, 3))) / N[i][i]
err = max(abs(1 + c[0] * x + c[1] * x * x + c[2] * x**3 - 2**x) / 2**x for x in fs)
print("coeffs", c, "max rel err", err)
hx = lambda v: "0f%08X" % struct.unpack("<I", struct.pack("<f", float(v)))[0]
EMU = """{{
 .reg .f32 %ex_x, %ex_t, %ex_j, %ex_f, %ex_p;
 .reg .b32 %ex_i, %ex_q;
 max.ftz.f32 %ex_x, {s}, 0fC2FA0000;
 add.rn.f32 %ex_t, %ex_x, 0f4B400000;
 sub.rn.f32 %ex_j, %ex_t, 0f4B400000;
 sub.rn.f32 %ex_f, %ex_x, %ex_j;
 fma.rn.f32 %ex_p, %ex_f, {c3}, {c2};
 fma.rn.f32 %ex_p, %ex_p, %ex_f, {c1};
 fma.rn.f32 %ex_p, %ex_p, %ex_f, 0f3F800000;
 mov.b32 %ex_i, %ex_t;
 shl.b32 %ex_i, %ex_i, 23;
 mov.b32 %ex_q, %ex_p;
 add.s32 %ex_q, %ex_q, %ex_i;
 mov.b32 {d}, %ex_q;
}}"""
name = [p for p in os.listdir(src_case) if p.endswith(".ptx")][0][:-4]
ptx = open(os.path.join(src_case, name + ".ptx")).read()
pat = re.compile(r"ex2\.approx\.ftz\.f32\s+(%f\d+),\s*(%f\d+);")
for share in (0, 2, 3, 4):  # eighths of the exponentials moved to the FMA pipe
    n = [0]
    def rep(m):
        i = n[0]; n[0] += 1
        if i % 8 < share:
            return EMU.format(d=m.group(1), s=m.group(2), c1=hx(c[0]), c2=hx(c[1]), c3=hx(c[2]))
        return m.group(0)
    new = pat.sub(rep, ptx)
    dst = os.path.join(out, f"emu{share}")
    shutil.rmtree(dst, ignore_errors=True)
    shutil.copytree(src_case, dst)
    open(os.path.join(dst, name + ".ptx"), "w").write(new)
    r = subprocess.run(["ptxas", "-arch=sm_90a", "-v", os.path.join(dst, name + ".ptx"), "-o",
                        os.path.join(dst, name + ".cubin")], capture_output=True, text=True)
    print(share, n[0], r.returncode, [l for l in r.stderr.splitlines() if "registers" in l][:1], r.stderr[-300:] if r.returncode else "")
