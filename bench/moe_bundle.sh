#!/bin/bash
# Builds the MoE bundle for the H200: the static argus-runner and its MoE baseline helper
# (argus-moe-baseline.py: PyTorch's loop over experts on the kernel's own inputs), plus, for every
# case of bench/moe_payloads.py, the cubin + spec.json made by the worker's PrepareGpuRun
# (argus-candidate --prepare), and run.sh, which runs them all, writes $OUT/results.jsonl and
# prints a table (ours, the PyTorch loop in the same run, TFLOP/s, speed-up) last.
# With OLD_RUNNER=PATH (a runner from before the stream fix), run.sh also runs the e64 case with
# that runner and a NaN-only check: the 4800-NaN reproduction (docs/notes/moe.md), and
# race.sh (bench/moe_race.sh) runs old and fixed runner under the load of two other runners.
# Cases *-wgmma: the six-launch tensor-core pipeline of kb/templates/moe_wgmma.py, one
# multi-launch spec each (the table adds each launch's median and registers).
# usage: bench/moe_bundle.sh BUILD_DIR OUT_DIR [CASE,CASE...]
set -euo pipefail
build=$1
out=$2
only=${3:-}
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=bench/bundle_cases.sh
. "$here/bundle_cases.sh"
bundle_start "$build" "$out" argus-moe-baseline.py argus_helper_timing.py
bundle_prepare "$build" "$out" "$here/moe_payloads.py" "$only"
rm -rf "$out/payloads"
find "$out" -name '*.ptx' -delete
if [ -n "${OLD_RUNNER:-}" ] && [ -d "$out/e64-mlp" ]; then
  cp "$OLD_RUNNER" "$out/old-runner" && strip "$out/old-runner" || true
  mkdir -p "$out/old-runner-case" "$out/load-case"
  cp "$out/e64-mlp/moe_mlp.cubin" "$out/old-runner-case/"
  python3 - "$out/e64-mlp/spec.json" "$out/old-runner-case/spec.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
s["check"] = {"op": "none", "c": "Y"}
s["baseline"] = "none"
s["timing"] = {"warmup": 0, "reps": 1, "flush_l2": False}
json.dump(s, open(sys.argv[2], "w"), indent=1)
s["timing"] = {"warmup": 0, "reps": 200, "flush_l2": False}  # moe_race.sh's background load
json.dump(s, open(sys.argv[2].replace("old-runner-case", "load-case"), "w"), indent=1)
PY
  cp "$out/e64-mlp/moe_mlp.cubin" "$out/load-case/"
  cp "$here/moe_race.sh" "$out/race.sh"
fi
cp "$here/run_specs.sh" "$out/"
cat > "$out/run.sh" <<'SH'
#!/bin/bash
cd "$(dirname "$0")"
if [ -x old-runner ]; then
  mv old-runner-case .old-runner-case; mv load-case .load-case  # not run_specs.sh cases
  for i in 1 2; do
    timeout 60 ./old-runner --spec .old-runner-case/spec.json --no-baseline > "$OUT/old-runner-$i.json" 2>&1
    python3 -c "import json; r=json.load(open('$OUT/old-runner-$i.json')); print('old runner (NaN-only check), e64 moe_mlp, run $i:', r.get('outcome'), r.get('message', ''), (r.get('check') or {}).get('nan_count'))"
  done
  timeout 60 ./argus-runner --spec .old-runner-case/spec.json --no-baseline > "$OUT/new-runner-nanonly.json" 2>&1
  python3 -c "import json; r=json.load(open('$OUT/new-runner-nanonly.json')); print('fixed runner (NaN-only check), e64 moe_mlp:', r.get('outcome'), r.get('message', ''), (r.get('check') or {}).get('nan_count'))"
fi
bash run_specs.sh 150 'small-*=60'
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw --format=csv
python3 - "$OUT/results.jsonl" <<'PY'
import json, sys
print(f"{'case':12} {'outcome':8} {'ours ms':>10} {'loop ms':>9} {'ours TF':>8} {'loop TF':>8} {'speedup':>8} {'regs':>5}  check / loop check / message")
for line in open(sys.argv[1]):
    r = json.loads(line)
    t = (r.get("timing") or {}).get("median_ms") or 0
    b = r.get("baseline") or {}
    bt = (b.get("timing") or {}).get("median_ms") or 0
    fl = r.get("flops") or 0
    tf = fl / (t * 1e-3) / 1e12 if t else 0
    btf = fl / (bt * 1e-3) / 1e12 if bt else 0
    keep = ("mode", "mismatches", "nan_count", "max_rel_err", "rel_l2_err")
    ck = {k: v for k, v in (r.get("check") or {}).items() if k in keep}
    bk = {k: v for k, v in (b.get("check") or {}).items() if k in keep}
    print(f"{r['case']:12} {r.get('outcome','?'):8} {t:10.4f} {bt:9.4f} {tf:8.2f} {btf:8.2f} "
          f"{(bt / t if t and bt else 0):8.4f} {(r.get('function') or {}).get('registers', -1):5}  "
          f"{json.dumps(ck)} {b.get('outcome', '')} {json.dumps(bk)} "
          f"{r.get('message', '')[:80]} {b.get('message', '')[:120]}")
    if r.get("launches"):
        print(" " * 14 + "launches (regs): " + ", ".join(
            f"{l['kernel']} {l.get('median_ms', 0):.4f} ms ({(l.get('function') or {}).get('registers', -1)})"
            for l in r["launches"]))
PY
SH
chmod +x "$out/run.sh"
du -sh "$out"
