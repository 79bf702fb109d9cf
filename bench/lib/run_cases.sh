#!/bin/bash
# Runs a case bundle on the machine with the GPU: each case directory's spec.json through
# ./argus-runner (run_specs.sh: our kernel checked against the f64 reference, then it and its
# baseline timed on the same inputs), then the suite's table (tables.py), printed last.
# Results: $OUT/results.jsonl (one JSON line per case and runner process), $OUT/gpu.txt,
# $OUT/table.txt; OUT defaults to out/ beside this script.
# Environment: PASSES=N gives each case N runner processes (every second pass in reverse order);
# ONLY=GLOB runs only the cases whose directory matches.
# A bundle with rows.json (bench/targets.sh, and the suites without named cases) runs row by
# row, the whole list `rounds` times, so that each row's cases alternate with its baseline.
cd "$(dirname "$0")" || exit 1
export OUT=${OUT:-$PWD/out}
mkdir -p "$OUT"
suite=$(cat suite.txt)
read -ra limits < timeouts.txt
[ -f before.sh ] && bash before.sh
if [ -f rows.json ]; then
  rounds=$(python3 -c "import json; print(max(r['rounds'] for r in json.load(open('rows.json'))))")
  for r in $(seq "$rounds"); do
    for row in $(python3 -c "import json; print(' '.join(x['row'] for x in json.load(open('rows.json')) if x['rounds'] >= $r))"); do
      ROUND=$r ONLY="$row.*" bash run_specs.sh "${limits[@]}"
    done
  done
  table=rows
else
  bash run_specs.sh "${limits[@]}"
  table=$suite
fi
[ -f after.sh ] && bash after.sh
python3 tables.py "$table" "$OUT/results.jsonl" | tee "$OUT/table.txt"
