#!/bin/bash
# Runs a MoE race bundle (bench/moe.sh --race) on the machine with the GPU: the cases of
# order.txt, each one argus-runner process ("NAME.again": NAME's spec again, without the
# baseline); stops starting new ones past budget.txt seconds; then Nsight Compute on the cases of
# ncu_cases.txt (the GEMM launches' clock, DRAM and L2 traffic, L2 hit rate, tensor pipe activity).
# Results: $OUT/results.jsonl, $OUT/clocks.csv (SM clock, power, temperature every 50 ms),
# $OUT/marks.txt (case start/end), $OUT/ncu.txt; the table last. OUT defaults to out/ here.
cd "$(dirname "$0")" || exit 1
export OUT=${OUT:-$PWD/out}
mkdir -p "$OUT"
start=$(date +%s)
budget=$(cat budget.txt)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > "$OUT/gpu.txt" 2>&1
# SM clock, power and temperature every 50 ms through the run (is a slow rep a throttled one?)
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu --format=csv,noheader \
  -lms 50 > "$OUT/clocks.csv" 2>&1 &
smi=$!
for c in $(cat order.txt); do
  d=${c%.again}
  spec=spec.json
  [[ $c == *.again ]] && spec=spec-again.json
  if (($(date +%s) - start > budget)); then
    echo "{\"case\": \"$c\", \"outcome\": \"skipped (budget)\"}" >> "$OUT/results.jsonl"
    continue
  fi
  rm -f "$d/result.json"
  t0=$(date +%s)
  echo "$c start $(date "+%Y/%m/%d %H:%M:%S.%N")" >> "$OUT/marks.txt"
  timeout 60 ./argus-runner --spec "$d/$spec" --out "$d/result.json" > "$OUT/$c.stdout.txt" 2>&1
  rc=$?
  python3 -c "import json; r=json.load(open('$d/result.json')); r['case']='$c'; r['rc']=$rc; r['wall_s']=$(date +%s)-$t0; r['verify']=json.load(open('$d/verify.json')); print(json.dumps(r))" >> "$OUT/results.jsonl" 2>/dev/null \
    || echo "{\"case\": \"$c\", \"rc\": $rc, \"outcome\": \"no result\"}" >> "$OUT/results.jsonl"
  echo "$c end $(date "+%Y/%m/%d %H:%M:%S.%N")" >> "$OUT/marks.txt"
done
kill "$smi"
ncu=$(command -v ncu || find /opt/nvidia/nsight-compute /usr/local/cuda*/bin -maxdepth 2 -name ncu -type f 2>/dev/null | head -1)
metrics=gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second,lts__t_bytes.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_elapsed,launch__grid_size,launch__registers_per_thread
for c in $(cat ncu_cases.txt); do
  [ -n "$ncu" ] || { echo "no ncu" >> "$OUT/ncu.txt"; break; }
  echo "=== $c" >> "$OUT/ncu.txt"
  timeout 90 "$ncu" --clock-control none -k regex:'moe_gateup|moe_down' -c 2 --metrics "$metrics" \
    ./argus-runner --spec "$c/spec-ncu.json" --out "$OUT/ncu-$c.json" >> "$OUT/ncu.txt" 2>&1 ||
    echo "ncu rc=$?" >> "$OUT/ncu.txt"
done
echo "case start/end:"; cat "$OUT/marks.txt"
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv
python3 tables.py race "$OUT/results.jsonl" | tee "$OUT/table.txt"
if [ -s "$OUT/ncu.txt" ]; then
  grep -E "^===|moe_|duration|per_second|bytes|hit_rate|hmma|no ncu|rc=|ERR" "$OUT/ncu.txt" | head -40
fi
