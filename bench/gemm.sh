#!/bin/bash
# GEMM suite: the Hopper DSL GEMMs (wgmma + TMA, warp-specialized, persistent; examples/gemm_*.py)
# against cuBLAS (cublasGemmEx, bf16 in, f32 out, CUBLAS_COMPUTE_32F) timed in the same runner
# process on the same buffers, at 4096^3, 8192^3 and 4096x14336x4096.
#
# Builds a bundle to copy to a machine with the GPU; nothing is built there. Without CASE names:
# the GEMM target rows (lib/rows.py: the best kernel per shape and its competitors, each with the
# verifier's verdict at its run constants, 3 interleaved rounds against cuBLAS). With CASE names:
# those cases of lib/gemm_cases.py (--list prints them; all: every one), each one runner process.
# sweep: the nn.Linear sweep over real models' linear layers at decode and prefill batch sizes
# (lib/gemm_cases.py LAYERS, SWEEP_M, IRREGULAR), with PyTorch's F.linear as a cross-check and the
# table of lib/tables.py sweep (geomean and worst shape); SWEEP_VERIFY=0 skips the verifier.
usage="usage: bench/gemm.sh [-b BUILD_DIR] [-o OUT_DIR] [--list | all | sweep | CASE,CASE...]
  then on the GPU machine: bash OUT_DIR/run.sh   (PASSES=N: N runner processes per case)
  after it, there: bash OUT_DIR/ncu_probe.sh CASE...  (Nsight Compute: cuBLAS's kernel, clocks,
  traffic) and bash OUT_DIR/sass.sh CASE...
Environment: GEMM_WGMMA_VARIANTS=\"swap notrans\" adds builds of w-small with those wgmma
descriptor variants (ARGUS_WGMMA_VARIANT); GEMM_EXTRA_CASES adds cases (lib/gemm_cases.py);
BENCH_ROWS / BENCH_CASES narrow the target rows (lib/rows.py)."
set -euo pipefail
. "$(dirname "$0")/lib/common.sh"
bench_options gemm "$usage" "$@"
if [ "${args[0]:-}" = sweep ]; then
  # The nn.Linear sweep: every case of it, the verifier's verdict for each at its run shape,
  # and PyTorch's F.linear on the same shapes (lib/gemm_torch.py, before the runner's cases).
  bundle_start
  bundle_prepare "$BENCH_LIB/gemm_cases.py" "$(python3 "$BENCH_LIB/gemm_cases.py" --sweep)"
  [ "${SWEEP_VERIFY:-1}" = 0 ] || bundle_verify
  python3 "$BENCH_LIB/gemm_cases.py" --sweep-shapes > "$out/sweep_shapes.json"
  cp "$BENCH_LIB/gemm_torch.py" "$out/"
  echo 'python3 gemm_torch.py sweep_shapes.json "$OUT/torch_linear.jsonl" || true' > "$out/before.sh"
  bundle_runner sweep 60
  bundle_finish
  exit 0
fi
bundle_suite "$BENCH_LIB/gemm_cases.py"
for v in ${GEMM_WGMMA_VARIANTS:-}; do
  p="$out/payloads/w-small.json"
  [ -f "$p" ] || { echo "GEMM_WGMMA_VARIANTS: name the case w-small" >&2; exit 2; }
  ARGUS_WGMMA_VARIANT=$v "$build/bin/argus-candidate" --payload "$p" --backend gpu \
    --prepare "$out/variant-$v-small" >/dev/null
done
bundle_runner gemm 60
# The first case's SASS and resource usage into $OUT, where cuobjdump is on the GPU machine.
cat > "$out/after.sh" <<'SH'
command -v cuobjdump >/dev/null || exit 0
for d in */; do
  c=$(ls "$d"*.cubin 2>/dev/null | head -1); [ -n "$c" ] || continue
  cuobjdump --dump-sass "$c" > "$OUT/${d%/}.sass" 2>&1
  cuobjdump --dump-resource-usage "$c" > "$OUT/${d%/}.res" 2>&1; break
done
SH
bundle_finish
