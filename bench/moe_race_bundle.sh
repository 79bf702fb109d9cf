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
#   ORDER (the case directories in run order; "NAME.again" runs case NAME again, no baseline;
#   default: new and base interleaved), BUDGET_S (default 170), SEED (one input seed for every
#   case, so that all of a shape's cases route the same ids: the seed of each prepared payload
#   is its own otherwise, and at E8 the live tile count moves from 67 to 68 between seeds), NCU
#   (cases to profile once with Nsight Compute after the race: the GEMM launches' clock, DRAM
#   and L2 traffic, L2 hit rate, tensor pipe activity).
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
# A second run of a case ("NAME.again"): the same spec without the baseline; the profiled run
# (spec-ncu.json): one rep, no baseline.
for d in "$out"/*/; do
  d=${d%/}
  [ -f "$d/spec.json" ] || continue
  python3 - "$d/spec.json" "${SEED:-}" <<'PY'
import json, os, sys
path, seed = sys.argv[1], sys.argv[2]
s = json.load(open(path))
if seed:
    s["seed"] = int(seed)
    json.dump(s, open(path, "w"), indent=1)
s["baseline"] = "none"
json.dump(s, open(path.replace("spec.json", "spec-again.json"), "w"), indent=1)
s["timing"] = {"warmup": 1, "reps": 1, "flush_l2": True}
json.dump(s, open(path.replace("spec.json", "spec-ncu.json"), "w"), indent=1)
PY
done
echo "${NCU:-}" > "$out/ncu.txt"
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
# SM clock, power and temperature every 50 ms through the run (is a slow rep a throttled one?)
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu --format=csv,noheader \
  -lms 50 > "$OUT/clocks.csv" 2>&1 &
smi=$!
for c in $(cat order.txt); do
  d=${c%.again}
  spec=spec.json
  [[ $c == *.again ]] && spec=spec-again.json
  if (($(date +%s) - start > budget)); then
    echo "{\"case\": \"$c\", \"outcome\": \"skipped (budget)\"}" >> "$OUT/results.jsonl"
    continue
  fi
  rm -f "$d/result.json"
  t0=$(date +%s)
  echo "$c start $(date "+%Y/%m/%d %H:%M:%S.%N")" >> "$OUT/marks.txt"
  timeout 60 ./argus-runner --spec "$d/$spec" --out "$d/result.json" > "$OUT/$c.stdout.txt" 2>&1
  rc=$?
  python3 -c "import json; r=json.load(open('$d/result.json')); r['case']='$c'; r['rc']=$rc; r['wall_s']=$(date +%s)-$t0; r['verify']=json.load(open('$d/verify.json')); print(json.dumps(r))" >> "$OUT/results.jsonl" 2>/dev/null \
    || echo "{\"case\": \"$c\", \"rc\": $rc, \"outcome\": \"no result\"}" >> "$OUT/results.jsonl"
  echo "$c end $(date "+%Y/%m/%d %H:%M:%S.%N")" >> "$OUT/marks.txt"
done
kill "$smi"
ncu=$(command -v ncu || find /opt/nvidia/nsight-compute /usr/local/cuda*/bin -maxdepth 2 -name ncu -type f 2>/dev/null | head -1)
metrics=gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second,lts__t_bytes.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_elapsed,launch__grid_size,launch__registers_per_thread
for c in $(cat ncu.txt); do
  [ -n "$ncu" ] || { echo "no ncu" >> "$OUT/ncu.txt"; break; }
  echo "=== $c" >> "$OUT/ncu.txt"
  timeout 90 "$ncu" --clock-control none -k regex:'moe_gateup|moe_down' -c 2 --metrics "$metrics" \
    ./argus-runner --spec "$c/spec-ncu.json" --out "$OUT/ncu-$c.json" >> "$OUT/ncu.txt" 2>&1 ||
    echo "ncu rc=$?" >> "$OUT/ncu.txt"
done
cp "$OUT/results.jsonl" "$OUT/results.txt"
echo "case start/end:"; cat "$OUT/marks.txt"
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
[ -s "$OUT/ncu.txt" ] && grep -E "^===|moe_|duration|per_second|bytes|hit_rate|hmma|no ncu|rc=|ERR" "$OUT/ncu.txt" | head -40
SH
chmod +x "$out/run.sh"
du -sh "$out"
