#!/bin/bash
# Checks the suites' plumbing without a GPU or a build: every bundle-building entry point runs
# against a stand-in build directory (argus-candidate writes a spec and an empty cubin, argus
# verify says verified, argus-runner writes a plausible result), then each bundle's run.sh runs
# here and must print its table. ctest bench_bundles.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bench=$(dirname "$here")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/build/bin"
cd "$tmp/build/bin"
cat > argus-candidate <<'SH'
#!/bin/bash
while [ $# -gt 0 ]; do case $1 in --payload) p=$2; shift 2 ;; --prepare) d=$2; shift 2 ;; *) shift ;; esac; done
mkdir -p "$d"
python3 - "$p" "$d" <<'PY'
import json, sys
p, d = json.load(open(sys.argv[1])), sys.argv[2]
c, dims, k = dict(p["check"]), p["dims"], p["kernel"]
if c.get("op") == "attention":
    c.update(m=dims["BH"], n=dims["S"], k=int(p["constants"].get("HD", "64")))
json.dump({"kernel": {"symbol": k, "artifact": k + ".cubin", "format": "cubin"}, "check": c,
           "timing": p["timing"]}, open(d + "/spec.json", "w"))
open(d + "/" + k + ".cubin", "w").close()
PY
SH
cat > argus <<'SH'
#!/bin/bash
[ "$1" = verify ] && echo '{"verified": true, "obligations": 1, "seconds": 0.1}'
SH
cat > argus-runner <<'SH'
#!/bin/bash
while [ $# -gt 0 ]; do case $1 in --out) o=$2; shift 2 ;; *) shift ;; esac; done
echo '{"outcome": "ok", "timing": {"median_ms": 1.0}, "baseline": {"name": "stand-in", "timing": {"median_ms": 1.1}}, "ratio": 0.91, "tflops": 1, "bytes": 1e6, "flops": 1e9, "check": {"mode": "full"}}' > "$o"
SH
touch argus-sdpa-baseline.py argus-torch-baseline.py
chmod +x argus-candidate argus argus-runner
cp "$tmp/build/bin/argus-runner" "$tmp/old-runner"
cd "$tmp"
fail=0
check() {  # check NAME COMMAND...: builds the bundle $tmp/NAME, runs it, wants a table
  local name=$1
  shift
  if ! "$@" -b "$tmp/build" -o "$tmp/$name" > "$tmp/$name.build.log" 2>&1; then
    echo "FAIL $name: building the bundle"; tail -5 "$tmp/$name.build.log"; fail=1; return
  fi
  if ! OUT=$tmp/$name.out bash "$tmp/$name/run.sh" > "$tmp/$name.run.log" 2>&1 ||
    ! grep -q "ok" "$tmp/$name.out/table.txt"; then
    echo "FAIL $name: run.sh"; tail -5 "$tmp/$name.run.log"; fail=1; return
  fi
  echo "ok   $name ($(grep -c . "$tmp/$name.out/results.jsonl") results)"
}
check gemm "$bench/gemm.sh"
check gemm-cases "$bench/gemm.sh" best-4k,w-small
check attention "$bench/attention.sh"
check attention-cases "$bench/attention.sh" simt-d64-n,p-d64-bn128-s2-n
check moe "$bench/moe.sh"
check moe-cases env OLD_RUNNER="$tmp/old-runner" "$bench/moe.sh" e64-mlp,small-wgmma
cp "$bench/../kb/templates/moe_wgmma.py" "$tmp/moe_wgmma_base.py"
check moe-race "$bench/moe.sh" --race "$tmp/moe_wgmma_base.py"
check targets "$bench/targets.sh"
check memory_bound "$bench/memory_bound.sh"
check examples "$bench/examples.sh"
exit $fail
