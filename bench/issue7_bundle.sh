#!/bin/bash
# Builds issue 7's side-by-side benchmark for the H200 (bench/issue7_payloads.py: one row per
# target of the issue, the kernels competing for it). For each candidate: the cubin + spec.json
# made by the worker's own PrepareGpuRun, and the verifier's verdict at the constants and dims it
# runs with (verify.json, computed here: a target met by an unverified kernel does not count).
# run.sh builds nothing on the device: each case is one argus-runner process that checks our
# kernel against the f64 reference and times it and its baseline (cuBLAS, PyTorch SDPA, the
# PyTorch loop over experts) on the same inputs; the GEMM rows repeat in interleaved rounds.
# It prints the table of bench/issue7_table.py last.
# usage: bench/issue7_bundle.sh BUILD_DIR OUT_DIR
#   then run(command="bash OUT_DIR/run.sh", carry=[OUT_DIR])
set -euo pipefail
build=$1
out=$2
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=bench/bundle_cases.sh
. "$here/bundle_cases.sh"
bundle_start "$build" "$out" argus-sdpa-baseline.py argus-moe-baseline.py argus_helper_timing.py
bundle_prepare "$build" "$out" "$here/issue7_payloads.py"
python3 "$here/issue7_payloads.py" --verify "$build/bin/argus" "$out/payloads"
rm -rf "$out/payloads"
python3 "$here/issue7_payloads.py" --rows > "$out/rows.json"
cp "$here/run_specs.sh" "$here/issue7_table.py" "$out/"
cat > "$out/run.sh" <<'SH'
#!/bin/bash
# Issue 7's side-by-side benchmark on the GPU host; results in $OUT/results.jsonl.
cd "$(dirname "$0")"
rounds=$(python3 -c "import json; print(max(r['rounds'] for r in json.load(open('rows.json'))))")
for r in $(seq "$rounds"); do
  for row in $(python3 -c "import json; print(' '.join(x['row'] for x in json.load(open('rows.json')) if x['rounds'] >= $r))"); do
    ROUND=$r ONLY="$row.*" bash run_specs.sh 60 'moe-*=240' 'attn-*=120'
  done
done
python3 issue7_table.py rows.json "$OUT/results.jsonl" | tee "$OUT/table.txt"
SH
chmod +x "$out/run.sh"
du -sh "$out"
