#!/bin/bash
# Verifier suite (CPU, no GPU): how long the verifier takes on the kernels the targets rest on —
# mma.sync and warp-specialized wgmma + TMA + mbarrier GEMMs, flash attention — proving the clean
# ones and catching seeded bugs (a stage off by one, a missing wait_group, a wrong tile offset):
# one line per case, median wall seconds over REPS runs, cache off (verifier_bench.cc).
usage="usage: bench/verifier.sh [-b BUILD_DIR] [REPS]   (default 5)
  bench/verifier.sh [-b BUILD_DIR] verify FILE [flags of argus verify]   (one report)"
set -euo pipefail
. "$(dirname "$0")/lib/common.sh"
bench_options verifier "$usage" "$@"
ARGUS_BUILD_DIR=$build "$BENCH_ROOT/scripts/build" --target verifier_bench
exec "$build/bin/verifier_bench" "${args[@]}"
