#!/bin/bash
# Attention suite: the DSL's flash attentions (mma.sync FA2-style, wgmma + TMA FA3-style with
# ping-pong consumer warp groups; examples/flash_attention*.py) against PyTorch SDPA (its fastest
# correct backend: cuDNN on the H200) on the same inputs, at B4 H32 S4096 D128 (causal or not)
# and B8 H16 S8192 D64.
#
# Builds a bundle to copy to a machine with the GPU; nothing is built there. Without CASE names:
# the attention target rows (lib/rows.py, each candidate with the verifier's verdict). With CASE
# names: those cases of lib/attention_cases.py (--list prints them; all: every one).
usage="usage: bench/attention.sh [-b BUILD_DIR] [-o OUT_DIR] [--list | all | CASE,CASE...]
  then on the GPU machine: bash OUT_DIR/run.sh
  after it, there: bash OUT_DIR/sass.sh CASE...  (wgmma / barrier / MUFU.EX2 counts) and
  bash OUT_DIR/ncu_probe.sh CASE..."
set -euo pipefail
. "$(dirname "$0")/lib/common.sh"
bench_options attention "$usage" "$@"
bundle_suite "$BENCH_LIB/attention_cases.py"
bundle_runner attention 120
bundle_finish
