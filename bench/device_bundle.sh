#!/bin/bash
# Builds the H200 bundle: the static argus-runner, and for every sm_90a case of
# bench/make_payloads.py (small = full check, large = perf shape) the compiled
# artifact + spec.json, made by the worker's own PrepareGpuRun (argus-candidate
# --prepare); plus run.sh, which runs them all and writes $OUT/results.jsonl.
# usage: bench/device_bundle.sh BUILD_DIR OUT_DIR
set -euo pipefail
build=$1
out=$2
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$out" && mkdir -p "$out"
cp "$build/bin/argus-runner" "$out/"
strip "$out/argus-runner" || true
for size in small large; do
  python3 "$here/make_payloads.py" "$out/payloads-$size" --size "$size"
  for p in "$out/payloads-$size"/*.json; do
    k=$(basename "$p" .json)
    grep -q '"target": "gfx942"' "$p" && continue
    [ "$size" = large ] && { [ "$k" = oob_store ] || [ "$k" = spin ]; } && continue
    "$build/bin/argus-candidate" --payload "$p" --backend gpu --prepare "$out/$k-$size" >/dev/null
  done
  rm -rf "$out/payloads-$size"
done
# One run through the driver's PTX JIT instead of the cubin.
cp -r "$out/vector_add-small" "$out/vector_add-ptx"
python3 - "$out/vector_add-ptx/spec.json" <<'PY'
import json, sys
p = sys.argv[1]; s = json.load(open(p))
s["kernel"]["artifact"] = s["kernel"]["symbol"] + ".ptx"; s["kernel"]["format"] = "ptx"
json.dump(s, open(p, "w"), indent=1)
PY
cp "$here/run_specs.sh" "$out/"
cat > "$out/run.sh" <<'SH'
#!/bin/bash
# Runs every spec beside this script; one JSON result per line in $OUT/results.jsonl.
cd "$(dirname "$0")"
bash run_specs.sh 120
python3 - "$OUT/results.jsonl" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    print(r["case"], f"rc={r['rc']}", r.get("outcome"), r.get("message", "")[:150],
          (r.get("timing") or {}).get("median_ms"),
          ((r.get("baseline") or {}).get("timing") or {}).get("median_ms"))
PY
SH
chmod +x "$out/run.sh"
du -sh "$out"
