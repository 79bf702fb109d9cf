#!/usr/bin/env python3
"""The target rows: one row per performance target (GEMM against cuBLAS, attention against cuDNN
SDPA, MoE against PyTorch's loop over experts), each with the kernels that compete for it (the
best we have, plus the best *verified* one where they differ). A target holds only when a
verified kernel reaches it (lib/tables.py rows).

The payloads come from the suites' case scripts (gemm_cases.py, attention_cases.py,
moe_cases.py), so a case measured here is exactly the case those suites measure. Edit ROWS when a
better kernel lands.

usage:
  rows.py [--suite S] OUT_DIR          writes OUT_DIR/ROW.CASE.json, one per candidate
  rows.py [--suite S] --rows           prints the rows as JSON (the bundle's rows.json)
  rows.py --verify ARGUS DIR           runs `ARGUS verify` on every payload of DIR at its own
                                       constants and dims, and writes BUNDLE/NAME/verify.json
                                       beside the prepared case (BUNDLE = DIR's parent)
--suite gemm|attention|moe keeps that suite's rows (bench/gemm.sh etc.; bench/targets.sh: all).
Environment: BENCH_ROWS=gemm-4k,gemm-8k keeps only those rows; BENCH_CASES=best-4k,... keeps only
those candidates of them (e.g. BENCH_ROWS=attn-d64,moe-e8 bench/targets.sh).
"""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))

# (row id, what, target speed-up = baseline time / ours, rounds, [(suite, case), ...]); a row's
# suite is its id's prefix (SUITE_OF_PREFIX). GEMM rows run 3 interleaved rounds: cuBLAS varies by
# about 3 % from one process to the next; the best-* cases also alternate with cuBLAS 5 times
# inside each process (gemm_cases.py).
ROWS = [
    ("gemm-4k", "GEMM 4096^3 bf16 vs cuBLAS", 1.00, 3,
     [("gemm", "best-4k"), ("gemm", "te4s3-4k")]),
    # sk4e4s3: the split-K tail (kb/templates/gemm_wgmma_splitk.py, two launches; SPLITK 4, EBUFS 4,
    # STAGES 3, 132 blocks), the best of the split variants that docs/perf.md's split-K section
    # measured (the others, sk16-4k, sk8e4s3-*, sk16e4s3-4kx14k, sk8-4kx14k, sk4e4s3s128-4kx14k,
    # were in these rows for those runs; bench/gemm.sh builds any of them by name).
    ("gemm-8k", "GEMM 8192^3 bf16 vs cuBLAS", 1.00, 3,
     [("gemm", "best-8k"), ("gemm", "rtn192-8k"), ("gemm", "sk4e4s3-8k")]),
    ("gemm-4kx14k", "GEMM 4096x14336x4096 bf16 vs cuBLAS", 1.00, 3,
     [("gemm", "best-4kx14k"), ("gemm", "rtn320-4kx14k"), ("gemm", "sk4e4s3-4kx14k")]),
    ("attn-d128", "attention B4 H32 S4096 D128 vs cuDNN SDPA", 1.00, 1,
     [("attention", "p-d128-bn128-s2-n"), ("attention", "d128-bq128-n")]),
    ("attn-d128-causal", "attention B4 H32 S4096 D128 causal vs cuDNN SDPA", 1.00, 1,
     [("attention", "p-d128-bn128-s2-c"), ("attention", "d128-bq128-c")]),
    ("attn-d64", "attention B8 H16 S8192 D64 vs cuDNN SDPA", 1.00, 1,
     [("attention", "p3-d64-bn128-s2-n"), ("attention", "p3-d64-bn128-s3-n"),
      ("attention", "p-d64-bn128-s2-n"), ("attention", "d64-bq128-kv64-n")]),
    ("moe-e64", "MoE T4096 H2048 I1408 E64 top-6 vs PyTorch loop", 10.0, 1,
     [("moe", "e64-wgmma"), ("moe", "e64-mlp")]),
    ("moe-e8", "MoE T4096 H4096 I14336 E8 top-2 vs PyTorch loop", 1.1, 1,
     [("moe", "e8-wgmma"), ("moe", "e8-mlp")]),
]


SUITE_OF_PREFIX = {"gemm": "gemm", "attn": "attention", "moe": "moe"}


def selected_rows(suite=None):
    """ROWS (those of SUITE when given), or those named in $BENCH_ROWS (comma-separated row ids)
    when it is set, each with only the candidates named in $BENCH_CASES (comma-separated case
    names) when that is set."""
    rows_env = [r for r in os.environ.get("BENCH_ROWS", "").split(",") if r]
    cases_env = [c for c in os.environ.get("BENCH_CASES", "").split(",") if c]
    unknown = set(rows_env) - {r[0] for r in ROWS}
    unknown |= set(cases_env) - {c for r in ROWS for _, c in r[4]}
    if unknown:
        sys.exit(f"BENCH_ROWS / BENCH_CASES name no row or case {sorted(unknown)}")
    out = []
    for row, what, target, rounds, cands in ROWS:
        if rows_env and row not in rows_env:
            continue
        if suite and SUITE_OF_PREFIX[row.split("-")[0]] != suite:
            continue
        keep = [(f, c) for f, c in cands if not cases_env or c in cases_env]
        if keep:
            out.append((row, what, target, rounds, keep))
    return out


def write_payloads(dst, suite=None):
    os.makedirs(dst, exist_ok=True)
    wanted = {}  # suite -> {case: [row ids]}
    for row, _, _, _, cands in selected_rows(suite):
        for fam, case in cands:
            wanted.setdefault(fam, {}).setdefault(case, []).append(row)
    for fam, cases in wanted.items():
        with tempfile.TemporaryDirectory() as tmp:
            subprocess.run([sys.executable, os.path.join(HERE, fam + "_cases.py"), tmp,
                            ",".join(cases)], check=True)
            for case, rows in cases.items():
                src = os.path.join(tmp, case + ".json")
                if not os.path.exists(src):
                    sys.exit(f"{fam}_cases.py wrote no case {case!r} (named in ROWS)")
                with open(src) as fh:
                    payload = fh.read()
                for row in rows:
                    with open(os.path.join(dst, f"{row}.{case}.json"), "w") as fh:
                        fh.write(payload)


def verify_payloads(argus, payload_dir):
    """The verifier's verdict for each payload at the constants and dims it runs with."""
    bundle = os.path.dirname(os.path.abspath(payload_dir))
    for name in sorted(os.listdir(payload_dir)):
        if not name.endswith(".json"):
            continue
        with open(os.path.join(payload_dir, name)) as fh:
            p = json.load(fh)
        with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as src:
            src.write(p["source"])
        cmd = [argus, "verify", src.name, "--json", "--arch", p.get("target", "sm_90a"),
               "--dims", ",".join(f"{k}={v}" for k, v in p["dims"].items())]
        for k, v in p.get("constants", {}).items():
            cmd += ["--const", f"{k}={v}"]
        if not p.get("pipeline"):  # one kernel of a source that may hold variants
            cmd += ["--kernel", p["kernel"]]
        try:
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
            report = json.loads(r.stdout) if r.stdout.strip() else {}
            verdict = "verified" if report.get("verified") else (
                (report.get("findings") or [{}])[0].get("message", r.stderr.strip()[-200:])
                or "not verified")
        except subprocess.TimeoutExpired:
            verdict, report = "unknown: the verifier ran past 600 s", {}
        finally:
            os.unlink(src.name)
        case_dir = os.path.join(bundle, name[:-len(".json")])
        os.makedirs(case_dir, exist_ok=True)
        with open(os.path.join(case_dir, "verify.json"), "w") as fh:
            json.dump({"verified": bool(report.get("verified")), "verdict": verdict,
                       "obligations": report.get("obligations"),
                       "seconds": report.get("seconds")}, fh)
        print(f"{name[:-5]:40} {verdict[:100]}")


def main():
    args = sys.argv[1:]
    suite = None
    if args[:1] == ["--suite"]:
        suite, args = args[1], args[2:]
        if suite not in SUITE_OF_PREFIX.values():
            sys.exit(f"no suite {suite!r}: {sorted(set(SUITE_OF_PREFIX.values()))}")
    if args[:1] == ["--rows"]:
        print(json.dumps([{"row": r, "what": w, "target": t, "rounds": n,
                           "cases": [f"{r}.{c}" for _, c in cands]}
                          for r, w, t, n, cands in selected_rows(suite)]))
    elif args[:1] == ["--verify"]:
        verify_payloads(args[1], args[2])
    elif len(args) == 1:
        write_payloads(args[0], suite)
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
