#!/bin/bash
# Builds the Hopper GEMM bundle for the H200: the static argus-runner plus, for every case of
# bench/hopper_payloads.py, the compiled cubin + spec.json made by the worker's own
# PrepareGpuRun (argus-candidate --prepare), and run.sh, which runs them all, writes
# $OUT/results.jsonl and prints a table (ours, cuBLAS in the same process, ratio) last.
# ARGUS_WGMMA_VARIANTS="swap notrans" adds descriptor-variant builds of the small case.
# usage: bench/hopper_bundle.sh BUILD_DIR OUT_DIR [CASE,CASE...]
set -euo pipefail
build=$1
out=$2
only=${3:-}
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$out" && mkdir -p "$out"
cp "$build/bin/argus-runner" "$out/"
strip "$out/argus-runner" || true
python3 "$here/hopper_payloads.py" "$out/payloads" $only
for p in "$out/payloads"/*.json; do
  k=$(basename "$p" .json)
  "$build/bin/argus-candidate" --payload "$p" --backend gpu --prepare "$out/$k" >/dev/null
done
for v in ${ARGUS_WGMMA_VARIANTS:-}; do
  p="$out/payloads/w-small.json"
  [ -f "$p" ] || continue
  ARGUS_WGMMA_VARIANT=$v "$build/bin/argus-candidate" --payload "$p" --backend gpu \
    --prepare "$out/variant-$v-small" >/dev/null
done
rm -rf "$out/payloads"
cat > "$out/run.sh" <<'SH'
#!/bin/bash
# Runs every spec beside this script; one JSON result per line in $OUT/results.jsonl.
cd "$(dirname "$0")"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > "$OUT/gpu.txt" 2>&1
for d in */; do
  d=${d%/}
  [ -f "$d/spec.json" ] || continue
  timeout 60 ./argus-runner --spec "$d/spec.json" --out "$d/result.json" > "$d/stdout.txt" 2>&1
  rc=$?
  python3 -c "import json,sys; r=json.load(open('$d/result.json')); r['case']='$d'; r['rc']=$rc; print(json.dumps(r))" >> "$OUT/results.jsonl" 2>/dev/null \
    || echo "{\"case\": \"$d\", \"rc\": $rc, \"outcome\": \"no result\"}" >> "$OUT/results.jsonl"
done
command -v cuobjdump >/dev/null && for d in */; do
  c=$(ls "$d"*.cubin 2>/dev/null | head -1); [ -n "$c" ] || continue
  cuobjdump --dump-sass "$c" > "$OUT/${d%/}.sass" 2>&1; break
done
python3 - "$OUT/results.jsonl" <<'PY'
import json, sys
print(f"{'case':34} {'outcome':8} {'ours ms':>9} {'cuBLAS ms':>9} {'ratio':>6} {'TFLOP/s':>8} {'regs':>5} {'check':>9}  message")
for line in open(sys.argv[1]):
    r = json.loads(line)
    t = (r.get("timing") or {}).get("median_ms")
    b = ((r.get("baseline") or {}).get("timing") or {}).get("median_ms")
    c = r.get("check") or {}
    print(f"{r['case']:34} {r.get('outcome','?'):8} {t or 0:9.4f} {b or 0:9.4f} {r.get('ratio') or 0:6.3f} "
          f"{r.get('tflops') or 0:8.1f} {(r.get('function') or {}).get('registers', -1):5} "
          f"{c.get('rel_l2_err', -1):9.2e}  {r.get('message','')[:90]}")
PY
SH
chmod +x "$out/run.sh"
du -sh "$out"
