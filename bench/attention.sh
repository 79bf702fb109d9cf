#!/bin/bash
# Attention suite: the DSL's flash attentions (mma.sync FA2-style, wgmma + TMA FA3-style with
# ping-pong consumer warp groups; examples/flash_attention*.py, kb/templates/flash_attention_wgmma.py)
# against PyTorch SDPA (its fastest correct backend: cuDNN on the H200) on the same shapes.
#
# Builds a bundle to copy to a machine with the GPU; nothing is built there. Without CASE names:
# the attention target rows (lib/rows.py, each candidate with the verifier's verdict). `models`:
# the attention of real models (lib/attention_cases.py's m-* cases: GQA, MQA, MHA prefill), each
# verified at its run shape, summarized by geomean and worst speed-up; a case the kernel cannot
# run (its head dim) stays in the table as not run, with the reason. With CASE names: those cases
# of lib/attention_cases.py (--list prints them; all: every one).
usage="usage: bench/attention.sh [-b BUILD_DIR] [-o OUT_DIR] [--list | models | all | CASE,CASE...]
  then on the GPU machine: bash OUT_DIR/run.sh
  after it, there: bash OUT_DIR/sass.sh CASE...  (wgmma / barrier / MUFU.EX2 counts) and
  bash OUT_DIR/ncu_probe.sh CASE..."
set -euo pipefail
. "$(dirname "$0")/lib/common.sh"
bench_options attention "$usage" "$@"
if [ "${args[0]:-}" = models ]; then
  bundle_start
  mkdir -p "$out/payloads" "$out/not_run"
  python3 "$BENCH_LIB/attention_cases.py" "$out/payloads" \
    "$(python3 "$BENCH_LIB/attention_cases.py" --models)"
  python3 "$BENCH_LIB/attention_cases.py" --not-run > "$out/not_run/cases.tsv"
  for p in "$out/payloads"/*.json; do
    "$build/bin/argus-candidate" --payload "$p" --backend gpu --prepare \
      "$out/$(basename "$p" .json)" >/dev/null
  done
  bundle_verify
  bundle_runner attention_models 120
else
  bundle_suite "$BENCH_LIB/attention_cases.py"
  bundle_runner attention 120
fi
bundle_finish
