#!/bin/bash
# Front-end suite (CPU, no GPU): parse + check of a generated 300-line kernel (against the 50 ms
# budget) and the DSL interpreter on kb/templates/gemm_mma.py at 128^3 (against a plain triple-loop
# C++ GEMM on the same inputs), one table (dsl_bench.cc).
usage="usage: bench/frontend.sh [-b BUILD_DIR]"
set -euo pipefail
. "$(dirname "$0")/lib/common.sh"
bench_options frontend "$usage" "$@"
ARGUS_BUILD_DIR=$build "$BENCH_ROOT/scripts/build" --target dsl_bench
exec "$build/bin/dsl_bench" "$BENCH_ROOT"
