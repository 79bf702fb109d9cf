#!/bin/bash
# The 4800-NaN race under load: two background runners keep the GPU busy (as the two tune workers
# sharing GPU 0 did); meanwhile the pre-fix runner and the fixed one each run the e64 moe_mlp
# with a NaN-only check, alternately, 3 times each. In the MoE bundle as nan_race.sh when built
# with OLD_RUNNER (bench/moe.sh); on the GPU machine: bash BUNDLE/nan_race.sh.
cd "$(dirname "$0")" || exit 1
export OUT=${OUT:-$PWD/out}
mkdir -p "$OUT"
for i in 1 2; do timeout 60 ./argus-runner --spec .load-case/spec.json --no-baseline > "$OUT/load-$i.json" 2>&1 & done
sleep 6
for i in 1 2 3; do
  for r in old-runner argus-runner; do
    timeout 30 ./$r --spec .old-runner-case/spec.json --no-baseline > "$OUT/race-$r-$i.json" 2>&1
    python3 -c "import json; r=json.load(open('$OUT/race-$r-$i.json')); print('$r run $i:', r.get('outcome'), 'NaN outputs:', (r.get('check') or {}).get('nan_count'), (r.get('check') or {}).get('first_bad'))"
  done
done
wait
for i in 1 2; do python3 -c "import json; r=json.load(open('$OUT/load-$i.json')); print('load $i:', r.get('outcome'), (r.get('timing') or {}).get('reps'), r.get('wall_s'))"; done
