#!/bin/bash
# Before the MoE cases (run.sh runs it as before.sh in a bundle built with OLD_RUNNER): the e64
# moe_mlp with a NaN-only check, twice with a runner from before the stream fix and once with
# the current one, on the idle GPU: the 4800-NaN reproduction (docs/codegen.md, "The runner").
cd "$(dirname "$0")" || exit 1
for i in 1 2; do
  timeout 60 ./old-runner --spec .old-runner-case/spec.json --no-baseline > "$OUT/old-runner-$i.json" 2>&1
  python3 -c "import json; r=json.load(open('$OUT/old-runner-$i.json')); print('old runner (NaN-only check), e64 moe_mlp, run $i:', r.get('outcome'), r.get('message', ''), (r.get('check') or {}).get('nan_count'))"
done
timeout 60 ./argus-runner --spec .old-runner-case/spec.json --no-baseline > "$OUT/new-runner-nanonly.json" 2>&1
python3 -c "import json; r=json.load(open('$OUT/new-runner-nanonly.json')); print('fixed runner (NaN-only check), e64 moe_mlp:', r.get('outcome'), r.get('message', ''), (r.get('check') or {}).get('nan_count'))"
