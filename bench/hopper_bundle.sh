#!/bin/bash
# Builds the Hopper GEMM bundle for the H200: the static argus-runner plus, for every case of
# bench/hopper_payloads.py, the compiled cubin + spec.json made by the worker's own
# PrepareGpuRun (argus-candidate --prepare), and run.sh, which runs them all, writes
# $OUT/results.jsonl and prints a table (ours, cuBLAS in the same process, ratio) last.
# ARGUS_WGMMA_VARIANTS="swap notrans" adds descriptor-variant builds of the small case.
# This is issue 7's side-by-side benchmark: run.sh builds nothing on the device; each case is
# one argus-runner process that checks our kernel, times it and its baseline (cuBLAS for GEMM,
# PyTorch SDPA for the z-attn-* rows) on the same device, and the table gives times, TFLOP/s
# of both and the ratio ours/baseline (time; < 1 = faster than the baseline).
# usage: bench/hopper_bundle.sh BUILD_DIR OUT_DIR [CASE,CASE...]
set -euo pipefail
build=$1
out=$2
only=${3:-}
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=bench/bundle_cases.sh
. "$here/bundle_cases.sh"
# The torch_sdpa baseline helper is for the attention rows.
bundle_start "$build" "$out" argus-sdpa-baseline.py argus_helper_timing.py
bundle_prepare "$build" "$out" "$here/hopper_payloads.py" "$only"
for v in ${ARGUS_WGMMA_VARIANTS:-}; do
  p="$out/payloads/w-small.json"
  [ -f "$p" ] || continue
  ARGUS_WGMMA_VARIANT=$v "$build/bin/argus-candidate" --payload "$p" --backend gpu \
    --prepare "$out/variant-$v-small" >/dev/null
done
rm -rf "$out/payloads"
cp "$here/run_specs.sh" "$here/ncu_probe.sh" "$out/"
cat > "$out/run.sh" <<'SH'
#!/bin/bash
# Runs every spec beside this script; one JSON result per line in $OUT/results.jsonl.
cd "$(dirname "$0")"
bash run_specs.sh 60 'z-attn-*=45'  # PASSES=N in the environment: N processes per case
command -v cuobjdump >/dev/null && for d in */; do
  c=$(ls "$d"*.cubin 2>/dev/null | head -1); [ -n "$c" ] || continue
  cuobjdump --dump-sass "$c" > "$OUT/${d%/}.sass" 2>&1
  cuobjdump --dump-resource-usage "$c" > "$OUT/${d%/}.res" 2>&1; break
done
python3 - "$OUT/results.jsonl" <<'PY'
import json, sys
print(f"{'case':30} {'outcome':8} {'ours ms':>9} {'base ms':>9} {'ratio':>6} {'ours TF/s':>9} "
      f"{'base TF/s':>9} {'base':>12} {'regs':>5} {'check':>9}  message")
for line in open(sys.argv[1]):
    r = json.loads(line)
    t = (r.get("timing") or {}).get("median_ms")
    b = ((r.get("baseline") or {}).get("timing") or {}).get("median_ms")
    c = r.get("check") or {}
    tf = r.get("tflops") or 0
    if not tf and t:  # the runner counts no FLOPs for attention: 4 * BH * S^2 * D, halved if causal
        try:
            a = json.load(open(r["case"] + "/spec.json"))["check"]
            if a.get("op") == "attention":
                tf = 4 * a["m"] * a["n"] ** 2 * a["k"] / (2 if a.get("causal") else 1) / t / 1e9
        except (OSError, KeyError, ValueError):
            pass
    bl = r.get("baseline") or {}
    name = bl.get("backend") or bl.get("name") or "-"
    print(f"{r['case']:30} {r.get('outcome','?'):8} {t or 0:9.4f} {b or 0:9.4f} {r.get('ratio') or 0:6.3f} "
          f"{tf:9.1f} {tf * (r.get('ratio') or 0):9.1f} {name:>12} "
          f"{(r.get('function') or {}).get('registers', -1):5} "
          f"{c.get('rel_l2_err', -1):9.2e}  {r.get('message','')[:70]}")
# Cases timed in rounds or passes: one line each over all of them. ratio = median of the
# per-round ratios (ours / cuBLAS time, < 1 faster), speed-up = 1 / ratio, spread = min..max.
import statistics
by = {}
for line in open(sys.argv[1]):
    r = json.loads(line)
    rounds = ((r.get("baseline") or {}).get("rounds")) or []
    for x in rounds:
        by.setdefault(r["case"], []).append((x["ours_ms"], x["baseline_ms"], r.get("pass", 1)))
if by:
    print(f"\n{'case':24} {'n':>3} {'ours ms':>8} {'cuBLAS ms':>9} {'ratio':>6} {'speed-up':>8} "
          f"{'min..max ratio':>15}  per-pass medians of speed-up")
    for case, xs in sorted(by.items()):
        ratios = [o / b for o, b, _ in xs]
        passes = sorted({p for _, _, p in xs})
        per = [statistics.median([b / o for o, b, q in xs if q == p]) for p in passes]
        med = statistics.median(ratios)
        print(f"{case:24} {len(xs):3} {statistics.median([o for o, _, _ in xs]):8.4f} "
              f"{statistics.median([b for _, b, _ in xs]):9.4f} {med:6.3f} {1 / med:8.3f} "
              f"{min(ratios):7.3f}..{max(ratios):.3f}  " + " ".join(f"{v:.3f}" for v in per))
PY
SH
chmod +x "$out/run.sh"
du -sh "$out"
