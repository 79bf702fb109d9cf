#!/bin/bash
# Builds the flash-attention bundle for the H200: the static argus-runner and its SDPA helper,
# plus, for every case of bench/attention_payloads.py, the cubin + spec.json made by the
# worker's PrepareGpuRun (argus-candidate --prepare), and run.sh, which runs them all, writes
# $OUT/results.jsonl and prints a table (ours, PyTorch SDPA in the same run, TFLOP/s) last.
# usage: bench/attention_bundle.sh BUILD_DIR OUT_DIR [CASE,CASE...]
set -euo pipefail
build=$1
out=$2
only=${3:-}
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=bench/bundle_cases.sh
. "$here/bundle_cases.sh"
bundle_start "$build" "$out" argus-sdpa-baseline.py argus_helper_timing.py
bundle_prepare "$build" "$out" "$here/attention_payloads.py" "$only"
rm -rf "$out/payloads"
cp "$here/run_specs.sh" "$out/"
cp "$here/attention_sass.sh" "$out/sass.sh"
cat > "$out/run.sh" <<'SH'
#!/bin/bash
cd "$(dirname "$0")"
bash run_specs.sh 120
python3 - "$OUT/results.jsonl" <<'PY'
import json, sys
print(f"{'case':16} {'outcome':8} {'ours ms':>9} {'SDPA ms':>9} {'ours TF':>8} {'SDPA TF':>8} {'ratio':>6} {'regs':>5}  check / SDPA backend / message")
for line in open(sys.argv[1]):
    r = json.loads(line)
    try:
        c = json.load(open(r["case"] + "/spec.json"))["check"]
        fl = 4.0 * c["m"] * c["n"] * c["n"] * c["k"] * (0.5 if c.get("causal") else 1.0)
    except Exception:
        fl = 0
    t = (r.get("timing") or {}).get("median_ms") or 0
    b = r.get("baseline") or {}
    bt = (b.get("timing") or {}).get("median_ms") or 0
    tf = fl / (t * 1e-3) / 1e12 if t else 0
    btf = fl / (bt * 1e-3) / 1e12 if bt else 0
    ck = r.get("check") or {}
    print(f"{r['case']:16} {r.get('outcome','?'):8} {t:9.4f} {bt:9.4f} {tf:8.1f} {btf:8.1f} "
          f"{(bt / t if t and bt else 0):6.3f} {(r.get('function') or {}).get('registers', -1):5}  "
          f"{json.dumps({k: v for k, v in ck.items() if k in ('mode', 'mismatches', 'max_abs_err', 'rel_l2_err')})} "
          f"{b.get('backend', '')} {r.get('message', '')[:80]} {b.get('message', '')[:80]}")
PY
SH
chmod +x "$out/run.sh"
du -sh "$out"
