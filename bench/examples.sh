#!/bin/bash
# Examples suite: every sm_90a kernel of examples/ (plus bench/kernels/gemm_mma_tuned.py and the
# kernels that must fail, bench/bad_kernels.py) on the GPU, each at a small shape checked in full
# against the f64 reference and at its perf shape (sampled check), timed against its baseline
# where one exists (cuBLAS for GEMM, PyTorch SDPA for attention); vector_add also once through
# the driver's PTX JIT instead of the cubin. Tells whether the codegen path works end to end and
# how the worker maps a fault and a timeout.
#
# Builds a bundle to copy to a machine with the GPU; nothing is built there.
# --worker-path builds the service bundle instead (lib/service_bundle.sh), whose run.sh compiles
# every example on the GPU machine through argus-candidate exactly as argus-worker --backend gpu
# does (lib/worker_path.sh), then times PyTorch SDPA at the attention shapes.
usage="usage: bench/examples.sh [-b BUILD_DIR] [-o OUT_DIR] [--worker-path]
  then on the GPU machine: bash OUT_DIR/run.sh"
set -euo pipefail
. "$(dirname "$0")/lib/common.sh"
bench_options examples "$usage" "$@"
if [ "${args[0]:-}" = --worker-path ]; then
  need_binaries argus argus-server argus-worker argus-verifier argus-candidate argus-runner
  bash "$BENCH_LIB/service_bundle.sh" "$build" "$out" worker_path.sh
  bundle_finish /tmp/argus-out
  exit 0
fi
bundle_start
bundle_examples
# One run through the driver's PTX JIT instead of the cubin.
cp -r "$out/vector_add-small" "$out/vector_add-ptx"
python3 - "$out/vector_add-ptx/spec.json" <<'PY'
import json, sys
p = sys.argv[1]; s = json.load(open(p))
s["kernel"]["artifact"] = s["kernel"]["symbol"] + ".ptx"; s["kernel"]["format"] = "ptx"
json.dump(s, open(p, "w"), indent=1)
PY
bundle_runner examples 120
bundle_finish
