#!/bin/bash
# Sourced by the suite scripts (bench/*.sh). A case bundle is a folder to copy to a machine with
# the GPU: the static argus-runner and its Python baseline scripts (PyTorch SDPA, the PyTorch loop
# over experts, their timing), one directory per case holding the cubin + spec.json made by the
# worker's own PrepareGpuRun (argus-candidate --prepare), and run.sh (lib/run_cases.sh), which
# checks and times every case and prints the suite's table (lib/tables.py). Nothing is built on
# the GPU machine.

BENCH_LIB=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BENCH_ROOT=$(cd "$BENCH_LIB/../.." && pwd)

# bench_options SUITE USAGE ARG...: parses the options every suite takes and sets
#   build  -b DIR, the build directory with bin/ (default: $BUILD_DIR, else build/)
#   out    -o DIR, the bundle to write (default: .device/SUITE in the repository)
#   args   the remaining arguments, for the suite
# and suite=SUITE; -h prints USAGE.
bench_options() {
  suite=$1
  local usage=$2
  shift 2
  build=${BUILD_DIR:-$BENCH_ROOT/build}
  out=$BENCH_ROOT/.device/$suite
  args=()
  while [ $# -gt 0 ]; do
    case $1 in
      -b) build=$2; shift 2 ;;
      -o) out=$2; shift 2 ;;
      -h | --help) echo "$usage"; exit 0 ;;
      *) args+=("$1"); shift ;;
    esac
  done
  build=$(realpath -m "$build")
}

# need_binaries NAME...: exits unless $build/bin has them.
need_binaries() {
  local b
  for b in "$@"; do
    [ -x "$build/bin/$b" ] || {
      echo "no $build/bin/$b: scripts/build --target $* (or pass -b BUILD_DIR)" >&2
      exit 2
    }
  done
}

# bundle_start: a fresh $out with the stripped runner and the Python scripts beside it in
# $build/bin (its baselines).
bundle_start() {
  need_binaries argus-runner argus-candidate argus
  rm -rf "$out" && mkdir -p "$out"
  cp "$build/bin/argus-runner" "$out/"
  strip "$out/argus-runner" 2>/dev/null || true
  cp "$build/bin/"*.py "$out/"
}

# bundle_prepare CASES_SCRIPT [CASE,CASE...|all] [PREFIX]: the script writes one payload per
# case (all: every case it has) into $out/payloads; each is prepared into $out/PREFIXCASE. The payloads stay for the caller
# (bundle_verify reads them; bundle_runner removes them).
bundle_prepare() {
  local script=$1 only=${2:-} prefix=${3:-} p
  [ "$only" = all ] && only=
  mkdir -p "$out/payloads"
  # shellcheck disable=SC2086
  python3 "$script" "$out/payloads" $only
  for p in "$out/payloads"/*.json; do
    "$build/bin/argus-candidate" --payload "$p" --backend gpu --prepare \
      "$out/$prefix$(basename "$p" .json)" >/dev/null
  done
}

# bundle_suite CASES_SCRIPT: what gemm.sh, attention.sh and moe.sh take: --list prints the
# script's cases and exits; without arguments a fresh bundle of the suite's target rows
# (bundle_rows), else of the named cases (bundle_prepare).
bundle_suite() {
  if [ "${args[0]:-}" = --list ]; then
    python3 "$1" --list
    exit 0
  fi
  bundle_start
  if [ ${#args[@]} = 0 ]; then
    bundle_rows "$suite"
  else
    bundle_prepare "$1" "${args[0]}"
  fi
}

# bundle_rows [SUITE]: the target rows of lib/rows.py (SUITE's, or all), rows.json and one
# prepared case per candidate (ROW.CASE), each with the verifier's verdict.
bundle_rows() {
  local p
  python3 "$BENCH_LIB/rows.py" ${1:+--suite "$1"} --rows > "$out/rows.json"
  mkdir -p "$out/payloads"
  python3 "$BENCH_LIB/rows.py" ${1:+--suite "$1"} "$out/payloads"
  for p in "$out/payloads"/*.json; do
    "$build/bin/argus-candidate" --payload "$p" --backend gpu --prepare \
      "$out/$(basename "$p" .json)" >/dev/null
  done
  bundle_verify
}

# bundle_examples [CASE,CASE...]: the sm_90a cases of lib/example_cases.py (default: all), each
# at its small shape (checked in full; directory CASE-small) and its perf shape (CASE-large; not
# the kernels that must fail).
bundle_examples() {
  local size p k
  for size in small large; do
    python3 "$BENCH_LIB/example_cases.py" "$out/payloads-$size" --size "$size" ${1:+--only "$1"}
    for p in "$out/payloads-$size"/*.json; do
      k=$(basename "$p" .json)
      grep -q '"target": "gfx942"' "$p" && continue
      [ "$size" = large ] && { [ "$k" = oob_store ] || [ "$k" = spin ]; } && continue
      "$build/bin/argus-candidate" --payload "$p" --backend gpu --prepare "$out/$k-$size" >/dev/null
    done
    rm -rf "$out/payloads-$size"
  done
}

# bundle_verify: the verifier's verdict for every payload of $out/payloads at the constants and
# dims it runs with, into $out/CASE/verify.json (lib/tables.py marks unverified kernels).
bundle_verify() {
  python3 "$BENCH_LIB/rows.py" --verify "$build/bin/argus" "$out/payloads"
}

# bundle_runner SUITE TIMEOUT [GLOB=TIMEOUT...]: the device side of a case bundle: run.sh, the
# tools beside it (run_specs.sh, tables.py, ncu_probe.sh, sass.sh), the suite name and the
# runner's time limits (default seconds per case, then per-glob limits).
bundle_runner() {
  local name=$1
  shift
  rm -rf "$out/payloads"
  cp "$BENCH_LIB/run_cases.sh" "$out/run.sh"
  cp "$BENCH_LIB/run_specs.sh" "$BENCH_LIB/tables.py" "$BENCH_LIB/ncu_probe.sh" \
    "$BENCH_LIB/sass.sh" "$out/"
  echo "$name" > "$out/suite.txt"
  echo "$*" > "$out/timeouts.txt"
}

# bundle_finish [RESULTS]: how big the bundle is and how to run it; RESULTS is where run.sh
# writes when OUT is not set (default: out/ in the bundle).
bundle_finish() {
  local name
  name=$(basename "$out")
  chmod +x "$out"/*.sh
  echo "bundle: $out ($(du -sh "$out" | cut -f1))"
  echo "next: copy it to a machine with the GPU and run  bash $name/run.sh"
  echo "      (results in \$OUT, default ${1:-$name/out}; keep them under bench/results/ as" \
    "$(date +%F)-$suite-<gpu>..., see bench/results/README.md)"
}
