#!/bin/bash
# Planner suite: `argus tune` end to end on the GPU — a real argus-server (the planner, with the
# Z3 verifier gate in process) and two argus-workers sharing the GPU tune GEMM 4096^3, attention
# B4 H32 S4096 D128 (causal and not) and MoE (E64, E8) at once (lib/tune.sh). Per job: the
# candidates tried, verified and rejected, the starting and the best speed-up against the
# baseline the worker times beside each candidate (cuBLAS, cuDNN SDPA, the PyTorch loop).
#
# Builds the service bundle (the binaries with their shared libraries, the KB, the examples;
# lib/service_bundle.sh) to copy to a machine with the GPU. --local instead runs the same jobs at
# tiny shapes on the interpreter here (no GPU), from BUILD_DIR/bin.
usage="usage: bench/planner.sh [-b BUILD_DIR] [-o OUT_DIR] [--local]
  then on the GPU machine: bash OUT_DIR/run.sh   (results in \$OUT, default /tmp/argus-out)
Environment on the GPU machine: TUNE_ONLY=\"moe moe_e8\", GEMM_N / ATTN_N / MOE_N (candidates per
job), TUNE_DEADLINE_S (default 200); see lib/tune.sh.
Set ARGUS_REUSE_LIBS=1 to keep OUT_DIR's lib.tar.xz from an earlier build (xz of the libraries
takes minutes)."
set -euo pipefail
. "$(dirname "$0")/lib/common.sh"
bench_options planner "$usage" "$@"
need_binaries argus argus-server argus-worker argus-verifier argus-candidate argus-runner
if [ "${args[0]:-}" = --local ]; then
  export OUT=${OUT:-$out-local}
  rm -rf "$OUT" && mkdir -p "$OUT"
  ARGUS_TUNE_LOCAL=1 ARGUS_HOME=$build ARGUS_KB_DIR=$BENCH_ROOT/kb PATH=$build/bin:$PATH \
    bash "$BENCH_LIB/tune.sh"
  exit
fi
bash "$BENCH_LIB/service_bundle.sh" "$build" "$out" tune.sh
bundle_finish /tmp/argus-out
