#!/bin/bash
# Runs on the GPU host inside the service bundle (bench/examples.sh --worker-path;
# env.sh sets the environment): every sm_90a example through the worker's own candidate path —
# argus-candidate compiles the DSL with LLVM there, assembles with ptxas, and
# runs argus-runner as a watched child, exactly as argus-worker --backend gpu
# does — then PyTorch SDPA at the attention suite's shapes.
# Results: $OUT/worker_path.jsonl, $OUT/sdpa.jsonl; a table last.
set -uo pipefail
cd "$ARGUS_HOME"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader > "$OUT/gpu.txt" 2>&1
argus-runner --inventory > "$OUT/inventory.json" 2>&1
python3 bench/lib/example_cases.py /tmp/payloads --size large
: > "$OUT/worker_path.jsonl"
for p in /tmp/payloads/*.json; do
  k=$(basename "$p" .json)
  grep -q '"target": "gfx942"' "$p" && continue
  timeout 300 argus-candidate --payload "$p" --backend gpu > "/tmp/$k.result.json" 2> "/tmp/$k.log"
  python3 - "$k" "/tmp/$k.result.json" >> "$OUT/worker_path.jsonl" <<'PY'
import json, sys
k, path = sys.argv[1], sys.argv[2]
try:
    r = json.load(open(path))
except Exception as e:
    r = {"outcome": "no result", "message": str(e)}
r["case"] = k
print(json.dumps(r))
PY
done
: > "$OUT/sdpa.jsonl"
for shape in "128 4096 128 false" "128 4096 128 true" "128 8192 64 false"; do
  set -- $shape
  python3 bin/argus-sdpa-baseline.py "{\"bh\": $1, \"seq\": $2, \"dim\": $3, \"causal\": $4, \"dtype\": \"bf16\", \"warmup\": 5, \"reps\": 20}" \
    | python3 -c "import json,sys; r=json.loads(sys.stdin.read()); r['shape']='$shape'; print(json.dumps(r))" >> "$OUT/sdpa.jsonl"
done
python3 - <<'PY'
import json, os
out = os.environ["OUT"]
print(open(os.path.join(out, "gpu.txt")).read().strip())
print(f"{'case':24} {'outcome':9} {'ours ms':>9} {'base ms':>9} {'speedup':>8}  check / message")
for line in open(os.path.join(out, "worker_path.jsonl")):
    r = json.loads(line)
    rr = r.get("runner") or {}  # argus-candidate nests the runner's own result
    t = (rr.get("timing") or {}).get("median_ms")
    b = ((rr.get("baseline") or {}).get("timing") or {}).get("median_ms")
    sp = f"{b / t:8.3f}" if t and b else "       -"
    chk = (r.get("check") or {}).get("rel_l2_err")
    msg = r.get("message", "")[:70] if r.get("outcome") != "ok" else f"rel_l2 {chk:.1e}" if chk is not None else ""
    print(f"{r['case']:24} {r.get('outcome', '?'):9} {t or 0:9.4f} {b or 0:9.4f} {sp}  {msg}")
for line in open(os.path.join(out, "sdpa.jsonl")):
    r = json.loads(line)
    bh, s, d, causal = r["shape"].split()
    flops = 4 * int(bh) * int(s) ** 2 * int(d) * (0.5 if causal == "true" else 1)
    parts = []
    for name, b in (r.get("backends") or {}).items():
        if b.get("outcome") == "ok":
            ms = b["timing"]["median_ms"]
            parts.append(f"{name} {ms:.3f} ms {flops / ms / 1e9:.0f} TF/s")
        else:
            parts.append(f"{name} {b.get('outcome')}")
    print(f"sdpa BH={bh} S={s} D={d} causal={causal}: " + "; ".join(parts))
PY
