#!/bin/bash
# The planner suite on the GPU host: `argus tune` for GEMM 4096^3 bf16,
# attention (B4 H32 S4096 D128, causal and not) and MoE (T4096 D2048 F1408
# E64 top-6, T4096 D4096 F14336 E8 top-2) against a real argus-server (planner
# + in-process Z3 verifier gate) and two argus-workers sharing GPU 0 (--device
# 0 --share_device --backend gpu). The jobs run at once; each ends with the
# best verified candidate, checked by the worker against the runner's CPU
# reference, and its speed-up.
#
# Runs inside the service bundle (bench/planner.sh builds it; on the GPU
# machine: bash BUNDLE/run.sh). A local dry run without a GPU (tiny shapes, the
# interpreter): bench/planner.sh --local.
# Environment: TUNE_ONLY="moe moe_e8" runs just the jobs named; GEMM_N, ATTN_N,
# MOE_N the candidates per job; TUNE_DEADLINE_S (default 200) cancels what is
# still running past it.
# Writes to $OUT/tune.tgz: <job>.result.json (argus result --json), <job>.tune.log
# (argus tune's progress), <job>.trajectory.json (every step from the store),
# argus.db, server.log, worker-{1,2}.log; $OUT/table.txt, printed last.
set -uo pipefail
: "${OUT:?}" "${ARGUS_HOME:?}"
here=$(cd "$(dirname "$0")" && pwd)
local_run=${ARGUS_TUNE_LOCAL:-0}
work=$(mktemp -d /tmp/argus-tune.XXXXXX)
port=${ARGUS_TUNE_PORT:-17391}
addr=127.0.0.1:$port
db=$work/argus.db

if [ "$local_run" = 1 ]; then
  backend=interp target=interp
  worker_flags=(--backend interp)
  jobs=(
    "gemm|gemm --shape 64x64x64 --dtype bf16|6"
    "attn|attention --shape 1x2x64x64 --dtype bf16|3"
    "attn_causal|attention --shape 1x2x64x64 --dtype bf16 --option causal=1|3"
    "moe|moe --shape 4x32x64x4x2 --dtype bf16|3"
  )
else
  backend=gpu target=sm_90a
  worker_flags=(--device 0 --share_device --backend gpu)
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader \
    > "$OUT/gpu.txt" 2>&1
  # Budget: ~4 minutes of GPU time for the four jobs together (see docs/perf.md).
  jobs=(
    "gemm|gemm --shape 4096x4096x4096 --dtype bf16|${GEMM_N:-9}"
    "attn|attention --shape 4x32x4096x128 --dtype bf16|${ATTN_N:-4}"
    "attn_causal|attention --shape 4x32x4096x128 --dtype bf16 --option causal=1|${ATTN_N:-4}"
    "moe|moe --shape 4096x2048x1408x64x6 --dtype bf16|${MOE_N:-5}"
    "moe_e8|moe --shape 4096x4096x14336x8x2 --dtype bf16|${MOE_N:-5}"
  )
fi
# TUNE_ONLY="moe moe_e8" runs just the jobs named (default: all of them).
if [ -n "${TUNE_ONLY:-}" ]; then
  only=()
  for j in "${jobs[@]}"; do
    [[ " $TUNE_ONLY " == *" ${j%%|*} "* ]] && only+=("$j")
  done
  jobs=("${only[@]}")
fi

argus-server --listen "$addr" --db "$db" --max_jobs_per_client 8 --lease_ms 120000 \
  > "$OUT/server.log" 2>&1 &
server_pid=$!
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  kill "$server_pid" 2>/dev/null
  wait 2>/dev/null
}
trap cleanup EXIT
for i in $(seq 30); do
  argus list --server "$addr" > /dev/null 2>&1 && break
  sleep 0.5
done
for w in 1 2; do
  argus-worker --server "$addr" "${worker_flags[@]}" > "$OUT/worker-$w.log" 2>&1 &
  pids+=($!)
done
sleep 2
argus workers --server "$addr" > "$OUT/workers.txt" 2>&1

start=$(date +%s)
tune_pids=()
for j in "${jobs[@]}"; do
  IFS='|' read -r name args n <<< "$j"
  # shellcheck disable=SC2086
  argus tune $args --target "$target" --max_candidates "$n" --server "$addr" \
    > "$OUT/$name.tune.log" 2>&1 &
  tune_pids+=($!)
done
# A deadline keeps the device call bounded: past it the jobs still running are
# cancelled (their trajectories so far are kept and reported).
deadline=$(( start + ${TUNE_DEADLINE_S:-200} ))
job_id() { sed -n 's/^job \(j-[0-9a-f]*\):.*/\1/p' "$OUT/$1.tune.log" | head -1; }
while :; do
  running=0
  for p in "${tune_pids[@]}"; do kill -0 "$p" 2>/dev/null && running=1; done
  [ $running = 0 ] && break
  if [ "$(date +%s)" -ge $deadline ]; then
    for j in "${jobs[@]}"; do
      id=$(job_id "${j%%|*}")
      [ -n "$id" ] && argus cancel "$id" --server "$addr" >> "$OUT/cancel.log" 2>&1
    done
    sleep 5
    for p in "${tune_pids[@]}"; do kill "$p" 2>/dev/null; done
    echo "deadline: cancelled what was still running" >> "$OUT/cancel.log"
    break
  fi
  sleep 2
done
for p in "${tune_pids[@]}"; do wait "$p" 2>/dev/null; done
echo "wall: $(( $(date +%s) - start )) s for ${#jobs[@]} jobs on $backend" > "$OUT/wall.txt"

for j in "${jobs[@]}"; do
  name=${j%%|*}
  id=$(job_id "$name")
  echo "$id" > "$OUT/$name.job"
  [ -n "$id" ] && argus result "$id" --json --server "$addr" > "$OUT/$name.result.json" 2>&1
done
cleanup
trap - EXIT

python3 - "$db" "$OUT" "${jobs[@]}" > "$work/table.txt" <<'PY'
import json, os, sqlite3, sys
db, out, jobs = sys.argv[1], sys.argv[2], sys.argv[3:]
con = sqlite3.connect(db)
rows = []
for j in jobs:
    name = j.split("|")[0]
    jid = open(os.path.join(out, name + ".job")).read().strip()
    steps = []
    for step, cid, action, detail, reward in con.execute(
            "SELECT step, candidate_id, action, detail_json, reward FROM trajectory_steps "
            "WHERE job_id = ? ORDER BY step", (jid,)):
        d = json.loads(detail or "{}")
        o = d.get("outcome") or {}
        steps.append({"step": step, "candidate": cid, "action": action, "reward": reward,
                      "config": d.get("config"), "why": d.get("why"),
                      "verifier": {k: (d.get("verifier") or {}).get(k)
                                   for k in ("passed", "obligations", "proved", "seconds")},
                      "violations": [v.get("message", "")[:300]
                                     for v in (d.get("verifier") or {}).get("violations", [])],
                      "outcome": {k: o.get(k) for k in (
                          "outcome", "message", "time", "baseline_time", "unit", "speedup",
                          "baseline_name", "tflops", "gbps", "max_abs_error", "backend")},
                      "check": (o.get("check") or {}) if isinstance(o.get("check"), dict) else {}})
    json.dump({"job": jid, "steps": steps}, open(os.path.join(out, name + ".trajectory.json"), "w"),
              indent=1)
    ok = [s for s in steps if s["outcome"].get("outcome") == "ok"]
    rej = sum(1 for s in steps if s["outcome"].get("outcome") == "rejected" or
              s["verifier"].get("passed") is False)
    first = ok[0] if ok else None
    best = max(ok, key=lambda s: s["reward"]) if ok else None
    def cfg(s):
        c = s["config"] or {}
        return c.get("template", "?") + " " + ",".join(f"{k}={v}" for k, v in
                                                       sorted((c.get("knobs") or {}).items()))
    def t(s):
        o = s["outcome"]
        return f"{o.get('time') or 0:.4g}"
    rows.append((name, len(steps), len(steps) - rej, rej,
                 f"{first['reward']:.3f} ({t(first)})" if first else "-",
                 f"{best['reward']:.3f} ({t(best)})" if best else "-",
                 f"{(best['reward'] / first['reward']) if first and first['reward'] else 0:.2f}x",
                 (best["outcome"].get("baseline_name") or "") if best else "",
                 cfg(best) if best else "-"))
print(open(os.path.join(out, "wall.txt")).read().strip())
if os.path.exists(os.path.join(out, "gpu.txt")):
    print(open(os.path.join(out, "gpu.txt")).read().strip())
hdr = ("job", "tried", "verified", "rejected", "start speed-up (ms)", "best speed-up (ms)",
       "best/start", "baseline", "best config")
print("{:12} {:>5} {:>8} {:>8} {:>20} {:>20} {:>10} {:>12}  {}".format(*hdr))
for r in rows:
    print("{:12} {:>5} {:>8} {:>8} {:>20} {:>20} {:>10} {:>12}  {}".format(*r))
PY
# Everything goes into one archive (results, trajectories, logs, the store),
# the table beside it.
cp "$db" "$OUT/argus.db" 2>/dev/null
tar -C "$OUT" -czf "$work/tune.tgz" . && find "$OUT" -mindepth 1 -delete
mv "$work/tune.tgz" "$work/table.txt" "$OUT/"
cat "$OUT/table.txt"
