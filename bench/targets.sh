#!/bin/bash
# Every performance target side by side in one bundle: GEMM against cuBLAS, attention against
# cuDNN SDPA, MoE against PyTorch's loop over experts (lib/rows.py: one row per target, the
# kernels competing for it). For each candidate: the cubin + spec.json made by the worker's own
# PrepareGpuRun and the verifier's verdict at the constants and dims it runs with (a target met by
# an unverified kernel does not count). On the GPU machine each case is one argus-runner process
# that checks our kernel against the f64 reference and times it and its baseline on the same
# inputs; the GEMM rows repeat in interleaved rounds. The table (lib/tables.py rows) comes last.
usage="usage: bench/targets.sh [-b BUILD_DIR] [-o OUT_DIR]
  then on the GPU machine: bash OUT_DIR/run.sh
Environment: BENCH_ROWS=gemm-4k,moe-e8 keeps those rows, BENCH_CASES=best-4k,... those
candidates (lib/rows.py)."
set -euo pipefail
. "$(dirname "$0")/lib/common.sh"
bench_options targets "$usage" "$@"
bundle_start
bundle_rows
bundle_runner targets 60 'moe-*=240' 'attn-*=120'
bundle_finish
