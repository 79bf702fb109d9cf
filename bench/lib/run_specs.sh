#!/bin/bash
# Runs every <case>/spec.json beside this script through ./argus-runner (every
# case bundle holds a copy; run.sh calls it) and appends one JSON result per case, tagged with
# "case", the exit code "rc", the pass "pass" and the round "round", to
# $OUT/results.jsonl; $OUT/gpu.txt records the GPU and clocks.
# usage: run_specs.sh DEFAULT_TIMEOUT_S [GLOB=TIMEOUT_S ...]
#   e.g. run_specs.sh 60 'moe-*=240'   (the first matching GLOB wins)
# Environment: ONLY, a glob of the cases to run (default: all); ROUND, a tag
# copied into each result as "round" (for benchmarks that repeat cases in
# interleaved rounds); PASSES=N (default 1) runs the whole list N times, every
# second pass in reverse order, so that each case gets N runner processes
# (cuBLAS's time varies between processes) and no case always runs first or last.
cd "$(dirname "$0")" || exit 1
default=${1:-120}
shift
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > "$OUT/gpu.txt" 2>&1
cases=()
for d in */; do
  d=${d%/}
  [ -f "$d/spec.json" ] || continue
  # shellcheck disable=SC2053  # the glob is meant to match
  [[ $d == ${ONLY:-*} ]] || continue
  cases+=("$d")
done
for ((pass = 1; pass <= ${PASSES:-1}; pass++)); do
  order=("${cases[@]}")
  if ((pass % 2 == 0)); then
    order=()
    for ((i = ${#cases[@]} - 1; i >= 0; i--)); do order+=("${cases[i]}"); done
  fi
  for d in "${order[@]}"; do
    lim=$default
    for rule in "$@"; do
      # shellcheck disable=SC2053  # the glob is meant to match
      if [[ $d == ${rule%=*} ]]; then lim=${rule##*=}; break; fi
    done
    rm -f "$d/result.json"  # an earlier round's or pass's result must not stand in for this one
    timeout "$lim" ./argus-runner --spec "$d/spec.json" --out "$d/result.json" > "$d/stdout.txt" 2>&1
    rc=$?
    python3 -c "import json,sys; r=json.load(open('$d/result.json')); r['case']='$d'; r['rc']=$rc; r['pass']=$pass; r['round']='${ROUND:-}'; print(json.dumps(r))" >> "$OUT/results.jsonl" 2>/dev/null \
      || echo "{\"case\": \"$d\", \"rc\": $rc, \"pass\": $pass, \"round\": \"${ROUND:-}\", \"outcome\": \"no result\"}" >> "$OUT/results.jsonl"
  done
done
