#!/bin/bash
# Device driver for the codegen/runner checks. Run from the repo root:
#   bash .device/codegen/run.sh   (writes everything under $OUT)
D=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
LOG=$OUT/codegen-device.log
{
date -u; uname -a; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,memory.used --format=csv
CUBLAS=$(ls /usr/local/cuda/lib64/libcublas.so.1[0-9] 2>/dev/null | head -1)
[ -z "$CUBLAS" ] && CUBLAS=$(python3 -c 'import nvidia.cublas, os; p=os.path.dirname(nvidia.cublas.__file__)+"/lib"; print(p)' 2>/dev/null)
echo "cublas hint: $CUBLAS"; find / -name 'libcublas.so.1*' -not -path '/proc/*' 2>/dev/null | head -5
echo "== inventory"; $D/argus-runner --inventory
} > $LOG 2>&1
RES=$OUT/codegen-results.jsonl; : > $RES
for s in vadd_64M vadd_tail gemm_256 gemm_512x384x1024_ptx gemm_4096 gemm_8192 oob_fault gemm_too_much_shared vadd_wrong_arch; do
  echo "== $s" >> $LOG
  timeout 120 $D/argus-runner --spec $D/specs/$s.json --out $OUT/r_$s.json >> $LOG 2>&1; echo "rc=$?" >> $LOG
  python3 -c "import json,sys; d=json.load(open('$OUT/r_$s.json')); d['spec']='$s'; print(json.dumps(d))" >> $RES 2>>$LOG || echo "{\"spec\":\"$s\",\"outcome\":\"no-result\"}" >> $RES
  rm -f $OUT/r_$s.json
done
python3 - $RES <<'PY'
import json,sys
print("%-24s %-11s %10s %10s %7s %8s %8s  %s"%("spec","outcome","ours_ms","cublas_ms","ratio","TFLOP/s","GB/s","message"))
for line in open(sys.argv[1]):
    d=json.loads(line); t=d.get("timing",{}); b=d.get("baseline") or {}; bt=b.get("timing",{})
    f=lambda x: "-" if x is None else ("%.4f"%x if isinstance(x,float) else str(x))
    print("%-24s %-11s %10s %10s %7s %8s %8s  %s"%(d["spec"],d.get("outcome"),f(t.get("median_ms")),f(bt.get("median_ms")),f(d.get("ratio")),f(d.get("tflops")),f(d.get("gbps")),(d.get("message") or "")[:150]))
PY
