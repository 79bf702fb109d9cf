#!/bin/bash
# Verifier suite (CPU, no GPU): how long the verifier takes on the kernels the targets rest on —
# mma.sync and warp-specialized wgmma + TMA + mbarrier GEMMs, flash attention — proving the clean
# ones and catching seeded bugs (a stage off by one, a missing wait_group, a wrong tile offset):
# one line per case, median wall seconds over REPS runs, cache off (verifier_bench.cc).
# `corpus`: every kernel of tests/verifier/{bugs,clean} against the corpus targets, once on the
# machine as it is and once at `nice -n 19` beside a busy loop; the two runs' verdict digests
# must agree (verdicts do not depend on load).
usage="usage: bench/verifier.sh [-b BUILD_DIR] [REPS]   (default 5)
  bench/verifier.sh [-b BUILD_DIR] corpus   (the corpus targets, idle and loaded)
  bench/verifier.sh [-b BUILD_DIR] verify FILE [flags of argus verify]   (one report)"
set -euo pipefail
. "$(dirname "$0")/lib/common.sh"
bench_options verifier "$usage" "$@"
ARGUS_BUILD_DIR=$build "$BENCH_ROOT/scripts/build" --target verifier_bench
if [ "${args[0]:-}" != corpus ]; then
  exec "$build/bin/verifier_bench" "${args[@]}"
fi
log=$(mktemp -d)
trap 'rm -rf "$log"; [ -n "${busy:-}" ] && kill "$busy" 2>/dev/null || true' EXIT
rc=0
"$build/bin/verifier_bench" corpus >"$log/idle.txt" || rc=$?
( while :; do :; done ) &
busy=$!
nice -n 19 "$build/bin/verifier_bench" corpus >"$log/loaded.txt" || true
kill "$busy"
busy=
echo "== as the machine is"
cat "$log/idle.txt"
echo "== at nice -n 19 beside a busy loop"
tail -2 "$log/loaded.txt"
if [ "$(tail -1 "$log/idle.txt")" = "$(tail -1 "$log/loaded.txt")" ]; then
  echo "verdicts: the same under load"
else
  echo "verdicts: DIFFER under load"
  rc=1
fi
exit $rc
