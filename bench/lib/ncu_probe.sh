#!/bin/bash
# Profiles the first launches of our kernel and of its baseline in each named case of a case
# bundle (bench/gemm.sh and the other suites) with Nsight Compute (clocks as found:
# --clock-control none), for what the timings cannot tell: the baseline's kernel name (cuBLAS
# encodes its tile, cluster and scheduler there), launch shape and cluster size, SM clock, L2 and
# DRAM traffic of both.
# One warm-up and one rep (no L2 flush), one round. Appends to $OUT/ncu.txt.
# usage (on the GPU machine): bash ncu_probe.sh CASE...   (case directories beside this script)
cd "$(dirname "$0")" || exit 1
export OUT=${OUT:-$PWD/out}
mkdir -p "$OUT"
ncu=$(command -v ncu || find /opt/nvidia/nsight-compute -maxdepth 2 -name ncu -type f 2>/dev/null | head -1)
[ -n "$ncu" ] || { echo "no ncu" >> "$OUT/ncu.txt"; exit 0; }
metrics=gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second,lts__t_bytes.sum,dram__bytes_read.sum,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_elapsed,launch__cluster_dim_x,launch__grid_size,launch__registers_per_thread
for c in "$@"; do
  [ -f "$c/spec.json" ] || continue
  mkdir -p ".probe-$c"
  cp "$c"/*.cubin ".probe-$c/"
  python3 - "$c/spec.json" ".probe-$c/spec.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
s["timing"] = {"warmup": 1, "reps": 1, "flush_l2": False}
json.dump(s, open(sys.argv[2], "w"))
PY
  echo "=== $c" >> "$OUT/ncu.txt"
  timeout 120 "$ncu" --clock-control none -c 8 --metrics "$metrics" \
    ./argus-runner --spec ".probe-$c/spec.json" --out ".probe-$c/result.json" \
    >> "$OUT/ncu.txt" 2>&1 || echo "ncu rc=$?" >> "$OUT/ncu.txt"
done
