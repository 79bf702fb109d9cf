#!/bin/bash
# The memory-bound suite's templates at their small ragged shapes (lengths that are not a
# multiple of the 16-byte vector, rows longer than the registers hold, odd head dims) on the
# reference interpreter through the worker's own path (argus-candidate --backend interp), each
# output checked against the runner's f64 reference. ctest bench_membound_interp.
# usage: membound_interp.sh ARGUS_CANDIDATE
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
candidate=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 "$here/membound_cases.py" "$tmp" \
  "$(python3 "$here/membound_cases.py" --list | grep '^small-' | paste -sd, -)"
fail=0
for p in "$tmp"/*.json; do
  name=$(basename "$p" .json)
  if ! "$candidate" --payload "$p" --backend interp > "$tmp/$name.out" 2>&1; then
    echo "FAIL $name: argus-candidate exited non-zero"; tail -3 "$tmp/$name.out"; fail=1; continue
  fi
  if python3 - "$tmp/$name.out" <<'PY'
import json, sys
r = json.loads(open(sys.argv[1]).read())
sys.exit(0 if r.get("outcome") == "ok" else 1)
PY
  then
    echo "ok   $name"
  else
    echo "FAIL $name: $(tail -c 600 "$tmp/$name.out")"; fail=1
  fi
done
exit $fail
