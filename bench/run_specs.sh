#!/bin/bash
# Runs every <case>/spec.json beside this script through ./argus-runner (the
# bundles of device_bundle.sh, hopper_bundle.sh and attention_bundle.sh copy it
# in) and appends one JSON result per case, tagged with "case" and the exit
# code "rc", to $OUT/results.jsonl; $OUT/gpu.txt records the GPU and clocks.
# usage: run_specs.sh DEFAULT_TIMEOUT_S [GLOB=TIMEOUT_S ...]
#   e.g. run_specs.sh 60 'z-attn-*=45'   (the first matching GLOB wins)
cd "$(dirname "$0")"
default=${1:-120}
shift
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > "$OUT/gpu.txt" 2>&1
for d in */; do
  d=${d%/}
  [ -f "$d/spec.json" ] || continue
  lim=$default
  for rule in "$@"; do
    # shellcheck disable=SC2053  # the glob is meant to match
    if [[ $d == ${rule%=*} ]]; then lim=${rule##*=}; break; fi
  done
  timeout "$lim" ./argus-runner --spec "$d/spec.json" --out "$d/result.json" > "$d/stdout.txt" 2>&1
  rc=$?
  python3 -c "import json,sys; r=json.load(open('$d/result.json')); r['case']='$d'; r['rc']=$rc; print(json.dumps(r))" >> "$OUT/results.jsonl" 2>/dev/null \
    || echo "{\"case\": \"$d\", \"rc\": $rc, \"outcome\": \"no result\"}" >> "$OUT/results.jsonl"
done
