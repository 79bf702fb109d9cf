#!/bin/bash
# Memory-bound suite: elementwise (vector_add), softmax and rmsnorm (examples/) on the GPU, each
# at a small shape checked in full against the f64 reference and at its perf shape (vector add
# 2^26 f32, softmax and rmsnorm 4096 x 4096). No vendor library routine does what they do, so
# the reference is the device-to-device copy ceiling of 4.3 TB/s: the table gives GB/s and the
# fraction of that ceiling.
#
# Builds a bundle to copy to a machine with the GPU; nothing is built there.
usage="usage: bench/memory_bound.sh [-b BUILD_DIR] [-o OUT_DIR] [CASE,CASE...]
  (cases of lib/example_cases.py; default vector_add,softmax,rmsnorm)
  then on the GPU machine: bash OUT_DIR/run.sh"
set -euo pipefail
. "$(dirname "$0")/lib/common.sh"
bench_options memory_bound "$usage" "$@"
bundle_start
bundle_examples "${args[0]:-vector_add,softmax,rmsnorm}"
bundle_runner memory_bound 120
bundle_finish
