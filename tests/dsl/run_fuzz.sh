#!/usr/bin/env bash
# tests/dsl/run_fuzz.sh SECONDS: builds the DSL front-end libFuzzer target with
# clang-19 (-fsanitize=fuzzer,address) and runs it for SECONDS seconds, seeded
# with examples/, docs/dsl.md's examples and tests/dsl/errors/. Exits non-zero
# on a crash, leak, hang (>10 s on one input) or sanitizer report; the input
# that failed is left in $OUT/crash-* (OUT defaults to build/dsl-fuzz).
# Needs Debian's clang-19 and libclang-rt-19-dev (installed here when missing
# and running as root).
set -euo pipefail
SECONDS_TO_RUN="${1:-60}"
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
OUT="${OUT:-$ROOT/build/dsl-fuzz}"
CXX="${FUZZ_CXX:-/usr/bin/clang++-19}"
mkdir -p "$OUT/obj" "$OUT/corpus"

if ! ls /usr/lib/llvm-19/lib/clang/19/lib/*/libclang_rt.fuzzer*.a >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    apt-get install -y -q libclang-rt-19-dev >/dev/null
  else
    echo "run_fuzz.sh: libclang-rt-19-dev is missing (apt-get install libclang-rt-19-dev)" >&2
    exit 2
  fi
fi

SRCS="source lexer parser types mma ir $(cd "$ROOT/dsl" && ls sema/*.cc | sed 's/\.cc$//')"
FLAGS="-std=c++20 -O1 -g -fsanitize=fuzzer-no-link,address -I$ROOT"
OBJS=()
for s in $SRCS fuzz_check; do
  obj="$OUT/obj/${s//\//_}.o"
  if [ ! -f "$obj" ] || [ "$ROOT/dsl/$s.cc" -nt "$obj" ] ||
     [ -n "$(find "$ROOT/dsl" \( -name '*.h' -o -name '*.def' \) -newer "$obj")" ]; then
    # At most FUZZ_JOBS compiles at a time (sanitizer builds are memory-hungry).
    while [ "$(jobs -rp | wc -l)" -ge "${FUZZ_JOBS:-4}" ]; do wait -n; done
    "$CXX" $FLAGS -c "$ROOT/dsl/$s.cc" -o "$obj" &
  fi
  OBJS+=("$obj")
done
wait
ABSL_LIBS="$(pkg-config --libs absl_status absl_statusor absl_strings absl_str_format)"
"$CXX" -fsanitize=fuzzer,address "${OBJS[@]}" $ABSL_LIBS -o "$OUT/dsl_fuzz"

# Seeds: examples, error-suite inputs, and the doc's python blocks.
cp "$ROOT"/examples/*.py "$ROOT"/tests/dsl/errors/*.py "$OUT/corpus/" 2>/dev/null || true
awk -v dir="$OUT/corpus" '/^```python/{n++; f=sprintf("%s/doc%02d.py", dir, n); on=1; next} /^```/{on=0} on{print > f}' \
  "$ROOT/docs/dsl.md"

cd "$OUT"
./dsl_fuzz -max_total_time="$SECONDS_TO_RUN" -timeout=10 -rss_limit_mb=2048 -max_len=8192 \
  -print_final_stats=1 corpus/ 2>&1 | tail -n 25
