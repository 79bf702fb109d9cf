#!/usr/bin/env bash
# clients/run_fuzz.sh SECONDS: builds the libFuzzer targets of what parses
# client input, with clang-19 (-fsanitize=fuzzer,address) — the dashboard's
# HTTP request parser (server/dashboard/) and the batch manifest parsers — and runs each for SECONDS seconds. Exits
# non-zero on a crash, leak, hang (>10 s on one input) or sanitizer report;
# the failing input is left in $OUT/<target>/crash-* (OUT: build/clients-fuzz).
set -euo pipefail
SECONDS_TO_RUN="${1:-30}"
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
OUT="${OUT:-$ROOT/build/clients-fuzz}"
CXX="${FUZZ_CXX:-/usr/bin/clang++-19}"
FLAGS="-std=c++20 -O1 -g -fsanitize=fuzzer,address -I$ROOT"
ABSL="$(pkg-config --libs absl_status absl_statusor absl_strings absl_str_format)"
mkdir -p "$OUT/http/corpus" "$OUT/doc/corpus"
"$CXX" $FLAGS "$ROOT/server/dashboard/fuzz_http.cc" "$ROOT/server/dashboard/http_server.cc" \
  $ABSL -lspdlog -lfmt -DSPDLOG_COMPILED_LIB -DSPDLOG_FMT_EXTERNAL -o "$OUT/http/fuzz_http" &
"$CXX" $FLAGS "$ROOT/clients/batch/fuzz_doc.cc" "$ROOT/clients/batch/doc.cc" $ABSL \
  -o "$OUT/doc/fuzz_doc" &
wait
printf 'GET /api/jobs?state=running&kind=tune HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer t' \
  > "$OUT/http/corpus/seed1"
printf 'POST /api/jobs/j-1/cancel HTTP/1.0\r\nContent-Length: 0' > "$OUT/http/corpus/seed2"
cp "$ROOT"/docs/cli.md "$OUT/doc/corpus/" 2>/dev/null || true
printf 'problems:\n  - name: a\n    shape: {M: 1, N: [2, 3]}\n' > "$OUT/doc/corpus/seed1"
printf '{"problems": [{"name": "a", "x": "\\u00e9"}]}' > "$OUT/doc/corpus/seed2"
for t in http doc; do
  (cd "$OUT/$t" && ./fuzz_$t -max_total_time="$SECONDS_TO_RUN" -timeout=10 -max_len=4096 \
     -print_final_stats=1 corpus >"$OUT/$t/log.txt" 2>&1) || {
    echo "run_fuzz.sh: fuzz_$t failed; see $OUT/$t/log.txt" >&2
    tail -40 "$OUT/$t/log.txt" >&2
    exit 1
  }
  echo "fuzz_$t: $(grep -o 'stat::number_of_executed_units: *[0-9]*' "$OUT/$t/log.txt" | tail -1)"
done
