"""The command line of the suites' case scripts (gemm_cases.py, attention_cases.py,
moe_cases.py): `SCRIPT --list` prints the case names; `SCRIPT OUT_DIR [CASE,CASE...]` writes
OUT_DIR/CASE.json, the worker payload of each named case (of every case when none is named)."""
import json
import os
import sys


def main(cases, payload):
    """cases: name -> the script's description of it; payload(name, case) -> the payload dict."""
    if sys.argv[1:2] == ["--list"]:
        print("\n".join(cases))
        return
    dst = sys.argv[1]
    only = set(sys.argv[2].split(",")) if len(sys.argv) > 2 else None
    if only and only - set(cases):
        sys.exit(f"unknown cases: {sorted(only - set(cases))}")
    os.makedirs(dst, exist_ok=True)
    for name, case in cases.items():
        if only and name not in only:
            continue
        with open(os.path.join(dst, name + ".json"), "w") as fh:
            json.dump(payload(name, case), fh, indent=1)
