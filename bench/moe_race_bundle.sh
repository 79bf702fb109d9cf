#!/bin/bash
# Races two versions of the tensor-core MoE (kb/templates/moe_wgmma.py) in one device call: the
# current template (cases new.CASE) against another source file of it (cases base.CASE, e.g.
# main's), each case of bench/moe_payloads.py prepared by the worker's PrepareGpuRun
# (argus-candidate --prepare) and verified here at its run constants and dims (verify.json, by
# bench/issue7_payloads.py --verify: an unverified kernel does not count). run.sh runs the cases
# in ORDER, each one argus-runner process (ours, then the PyTorch loop on the same inputs where
# the case has that baseline), skips what would start past BUDGET_S seconds, and prints a table
# (per-launch medians too) last.
# usage: bench/moe_race_bundle.sh BUILD_DIR OUT_DIR BASE_SRC
#   Environment: NEW_CASES, BASE_CASES (moe_payloads.py case lists; default e8-wgmma,e64-wgmma),
#   ORDER (the case directories in run order; "name@2" runs a case again with no baseline;
#   default: new and base interleaved), BUDGET_S (default 170).
#   then run(command="bash OUT_DIR/run.sh", carry=[OUT_DIR])
set -euo pipefail
build=$1
out=$2
base_src=$3
here=$(cd "$(dirname "$0")" && pwd)
new_cases=${NEW_CASES:-e8-wgmma,e64-wgmma}
base_cases=${BASE_CASES:-e8-wgmma,e64-wgmma}
# shellcheck source=bench/bundle_cases.sh
. "$here/bundle_cases.sh"
bundle_start "$build" "$out" argus-moe-baseline.py argus_helper_timing.py
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 "$here/moe_payloads.py" "$tmp/new" "$new_cases"
MOE_WGMMA_SRC=$base_src python3 "$here/moe_payloads.py" "$tmp/base" "$base_cases"
mkdir -p "$out/payloads"
for side in new base; do
  for p in "$tmp/$side"/*.json; do cp "$p" "$out/payloads/$side.$(basename "$p")"; done
done
for p in "$out/payloads"/*.json; do
  "$build/bin/argus-candidate" --payload "$p" --backend gpu --prepare \
    "$out/$(basename "$p" .json)" >/dev/null
done
python3 "$here/issue7_payloads.py" --verify "$build/bin/argus" "$out/payloads"
rm -rf "$out/payloads"
find "$out" -name '*.ptx' -delete
# A second run of a case ("name@2"): the same spec without the baseline.
for d in "$out"/*/; do
  d=${d%/}
  [ -f "$d/spec.json" ] || continue
  python3 - "$d/spec.json" "$d/spec-again.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
s["baseline"] = "none"
json.dump(s, open(sys.argv[2], "w"), indent=1)
PY
done
if [ -z "${ORDER:-}" ]; then
  ORDER=""
  for c in ${new_cases//,/ }; do
    ORDER+=" new.$c"
    [[ ",$base_cases," == *",$c,"* ]] && ORDER+=" base.$c"
  done
fi
echo "$ORDER" > "$out/order.txt"
echo "${BUDGET_S:-170}" > "$out/budget.txt"
cat > "$out/run.sh" <<'SH'
#!/bin/bash
# Runs the cases of order.txt (stops starting new ones past budget.txt seconds); results in
# $OUT/results.jsonl, the table last.
cd "$(dirname "$0")" || exit 1
start=$(date +%s)
budget=$(cat budget.txt)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > "$OUT/gpu.txt" 2>&1
for c in $(cat order.txt); do
  d=${c%@*}
  spec=spec.json
  [[ $c == *@* ]] && spec=spec-again.json
  if (($(date +%s) - start > budget)); then
    echo "{\"case\": \"$c\", \"outcome\": \"skipped (budget)\"}" >> "$OUT/results.jsonl"
    continue
  fi
  rm -f "$d/result.json"
  t0=$(date +%s)
  timeout 60 ./argus-runner --spec "$d/$spec" --out "$d/result.json" > "$OUT/$c.stdout.txt" 2>&1
  rc=$?
  python3 -c "import json; r=json.load(open('$d/result.json')); r['case']='$c'; r['rc']=$rc; r['wall_s']=$(date +%s)-$t0; r['verify']=json.load(open('$d/verify.json')); print(json.dumps(r))" >> "$OUT/results.jsonl" 2>/dev/null \
    || echo "{\"case\": \"$c\", \"rc\": $rc, \"outcome\": \"no result\"}" >> "$OUT/results.jsonl"
done
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv
python3 - "$OUT/results.jsonl" <<'PY'
import json, sys
print(f"{'case':22} {'outcome':8} {'ours ms':>9} {'p10':>7} {'p90':>7} {'loop ms':>8} {'speedup':>8} {'TF':>6}  verify / check / launches")
for line in open(sys.argv[1]):
    r = json.loads(line)
    tm = r.get("timing") or {}
    t = tm.get("median_ms") or 0
    b = r.get("baseline") or {}
    bt = (b.get("timing") or {}).get("median_ms") or 0
    fl = r.get("flops") or 0
    ck = {k: v for k, v in (r.get("check") or {}).items() if k in ("nan_count", "rel_l2_err")}
    v = (r.get("verify") or {}).get("verdict", "?")
    print(f"{r['case']:22} {r.get('outcome', '?')[:8]:8} {t:9.4f} {tm.get('p10_ms') or 0:7.3f} "
          f"{tm.get('p90_ms') or 0:7.3f} {bt:8.4f} {(bt / t if t and bt else 0):8.4f} "
          f"{(fl / (t * 1e-3) / 1e12 if t else 0):6.1f}  {v[:10]} {json.dumps(ck)} "
          f"{r.get('message', '')[:60]} {b.get('outcome', '')} {b.get('message', '')[:60]}")
    if r.get("launches"):
        print(" " * 24 + ", ".join(f"{l['kernel'][4:]} {l.get('median_ms', 0):.3f}"
                                   for l in r["launches"]))
PY
SH
chmod +x "$out/run.sh"
du -sh "$out"
