#!/bin/bash
# MoE suite: SwiGLU experts with top-k routing (Y[t] = sum_k Wt[t,k] (SiLU(X Wg[e]) * (X Wu[e])) Wd[e])
# — the KB templates moe_wgmma (six launches: count, place, gather, wgmma gate/up + SiLU, wgmma
# down, reduce) and moe_mlp (SIMT) — against PyTorch's loop over experts on the kernel's own
# inputs (torch_moe_loop), at T4096 H2048 I1408 E64 top-6 and T4096 H4096 I14336 E8 top-2.
#
# Builds a bundle to copy to a machine with the GPU; nothing is built there. Without CASE names:
# the MoE target rows (lib/rows.py, each candidate with the verifier's verdict). With CASE names:
# those cases of lib/moe_cases.py (--list prints them; all: every one); the table adds each
# launch's median and registers. --race BASE_SRC: the current template (cases new.CASE) against
# another version of it (a file; cases base.CASE), every case verified, run in an interleaved
# order under a time budget with the SM clock logged (lib/moe_race_run.sh).
usage="usage: bench/moe.sh [-b BUILD_DIR] [-o OUT_DIR] [--list | all | CASE,CASE... | --race BASE_SRC]
  then on the GPU machine: bash OUT_DIR/run.sh
Environment, CASE bundles: OLD_RUNNER=PATH (a runner from before the stream fix) with case
  e64-mlp adds its NaN-only check to run.sh and OUT_DIR/nan_race.sh (old and fixed runner under
  the load of two other runners).
Environment, --race: NEW_CASES, BASE_CASES (moe_cases.py case lists; default e8-wgmma,e64-wgmma),
  ORDER (the case directories in run order; NAME.again runs NAME again without the baseline;
  default: new and base interleaved), BUDGET_S (default 170), SEED (one input seed for every
  case, so that all of a shape's cases route the same ids), NCU (cases to profile once with
  Nsight Compute after the race)."
set -euo pipefail
. "$(dirname "$0")/lib/common.sh"
bench_options moe "$usage" "$@"
if [ "${args[0]:-}" = --race ]; then
  bundle_start
  base_src=$(cd "$(dirname "${args[1]:?--race BASE_SRC}")" && pwd)/$(basename "${args[1]}")
  new_cases=${NEW_CASES:-e8-wgmma,e64-wgmma}
  base_cases=${BASE_CASES:-e8-wgmma,e64-wgmma}
  bundle_prepare "$BENCH_LIB/moe_cases.py" "$new_cases" new.
  mv "$out/payloads" "$out/payloads-new"
  MOE_WGMMA_SRC=$base_src bundle_prepare "$BENCH_LIB/moe_cases.py" "$base_cases" base.
  for p in "$out/payloads"/*.json; do mv "$p" "$out/payloads/base.$(basename "$p")"; done
  for p in "$out/payloads-new"/*.json; do mv "$p" "$out/payloads/new.$(basename "$p")"; done
  rmdir "$out/payloads-new"
  bundle_verify
  rm -rf "$out/payloads"
  find "$out" -name '*.ptx' -delete
  # Per case: spec-again.json (no baseline) and spec-ncu.json (one rep, no baseline); SEED.
  for d in "$out"/*/; do
    [ -f "$d/spec.json" ] || continue
    python3 - "$d/spec.json" "${SEED:-}" <<'PY'
import json, sys
path, seed = sys.argv[1], sys.argv[2]
s = json.load(open(path))
if seed:
    s["seed"] = int(seed)
    json.dump(s, open(path, "w"), indent=1)
s["baseline"] = "none"
json.dump(s, open(path.replace("spec.json", "spec-again.json"), "w"), indent=1)
s["timing"] = {"warmup": 1, "reps": 1, "flush_l2": True}
json.dump(s, open(path.replace("spec.json", "spec-ncu.json"), "w"), indent=1)
PY
  done
  if [ -z "${ORDER:-}" ]; then
    ORDER=""
    for c in ${new_cases//,/ }; do
      ORDER+=" new.$c"
      [[ ",$base_cases," == *",$c,"* ]] && ORDER+=" base.$c"
    done
  fi
  echo "$ORDER" > "$out/order.txt"
  echo "${BUDGET_S:-170}" > "$out/budget.txt"
  echo "${NCU:-}" > "$out/ncu_cases.txt"
  cp "$BENCH_LIB/moe_race_run.sh" "$out/run.sh"
  cp "$BENCH_LIB/tables.py" "$out/"
  bundle_finish
  exit 0
fi

bundle_suite "$BENCH_LIB/moe_cases.py"
find "$out" -name '*.ptx' -delete
if [ -n "${OLD_RUNNER:-}" ] && [ -d "$out/e64-mlp" ]; then
  cp "$OLD_RUNNER" "$out/old-runner" && strip "$out/old-runner" || true
  mkdir -p "$out/.old-runner-case" "$out/.load-case"
  cp "$out/e64-mlp/moe_mlp.cubin" "$out/.old-runner-case/"
  cp "$out/e64-mlp/moe_mlp.cubin" "$out/.load-case/"
  python3 - "$out/e64-mlp/spec.json" "$out" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
s["check"] = {"op": "none", "c": "Y"}
s["baseline"] = "none"
s["timing"] = {"warmup": 0, "reps": 1, "flush_l2": False}
json.dump(s, open(sys.argv[2] + "/.old-runner-case/spec.json", "w"), indent=1)
s["timing"] = {"warmup": 0, "reps": 200, "flush_l2": False}  # nan_race.sh's background load
json.dump(s, open(sys.argv[2] + "/.load-case/spec.json", "w"), indent=1)
PY
  cp "$BENCH_LIB/moe_old_runner.sh" "$out/before.sh"
  cp "$BENCH_LIB/moe_nan_race.sh" "$out/nan_race.sh"
fi
bundle_runner moe 150 'small-*=60' 'moe-*=240'
echo 'nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw --format=csv' > "$out/after.sh"
bundle_finish
