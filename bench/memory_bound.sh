#!/bin/bash
# Memory-bound suite: the bandwidth-limit KB templates (RMSNorm, LayerNorm, softmax, elementwise
# add / mul / SiLU-and-mul, row sums, and the fusions residual-add + RMSNorm and rotary embedding
# of Q and K) at shapes from real models, bf16 and f32 (lib/membound_cases.py), each against what
# a PyTorch user runs — eager and torch.compile(mode="max-autotune-no-cudagraphs"), compile time
# excluded — and a device-to-device copy of the case's compulsory bytes, all timed in the same
# runner process on the kernel's own inputs; plus every template at small ragged shapes, checked
# in full. The table gives each case's fraction of the copy's bandwidth and its speed-ups.
#
# Builds a bundle to copy to a machine with the GPU; nothing is built there.
usage="usage: bench/memory_bound.sh [-b BUILD_DIR] [-o OUT_DIR] [--list | all | CASE,CASE...]
  (cases of lib/membound_cases.py; default: all)
  then on the GPU machine: bash OUT_DIR/run.sh"
set -euo pipefail
. "$(dirname "$0")/lib/common.sh"
bench_options memory_bound "$usage" "$@"
if [ "${args[0]:-}" = --list ]; then
  python3 "$BENCH_LIB/membound_cases.py" --list
  exit 0
fi
bundle_start
bundle_prepare "$BENCH_LIB/membound_cases.py" "${args[0]:-all}"
find "$out" -name '*.ptx' -delete
bundle_runner memory_bound 300 'small-*=60'
# torch.compile's compilation and autotuning happen before timing anyway; doing them for every
# case at once, 8 processes in parallel, fills Inductor's and Triton's caches so that each
# runner process only loads the compiled kernels.
cat > "$out/before.sh" <<'SH'
ls -d */spec.json | xargs -P 8 -n 3 python3 argus-torch-baseline.py --prewarm 2> "$OUT/prewarm.log"
SH
bundle_finish
