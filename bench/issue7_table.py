#!/usr/bin/env python3
"""Prints issue 7's side-by-side table from a run of bench/issue7_bundle.sh's run.sh.

usage: issue7_table.py ROWS_JSON RESULTS_JSONL   (run beside the bundle's case directories)

speed-up = baseline time / ours, both measured in the same runner process (> 1: we are faster);
a row with several rounds gives the median of the rounds' speed-ups (each the runner's own, the
median over its in-process rounds where the spec asks for them). A target holds only when a
kernel the verifier proved (CASE/verify.json) reaches it and passed the runner's check.
"""
import json
import os
import statistics
import sys


def tflops(r):
    tf = r.get("tflops") or 0
    t = (r.get("timing") or {}).get("median_ms")
    if tf or not t:
        return tf
    try:  # the runner counts no FLOPs for attention: 4 * BH * S^2 * D, halved if causal
        a = json.load(open(os.path.join(r["case"], "spec.json")))["check"]
        if a.get("op") == "attention":
            return 4 * a["m"] * a["n"] ** 2 * a["k"] / (2 if a.get("causal") else 1) / t / 1e9
    except (OSError, KeyError, ValueError):
        pass
    return 0


def main():
    rows = json.load(open(sys.argv[1]))
    results = {}
    for line in open(sys.argv[2]):
        r = json.loads(line)
        results.setdefault(r["case"], []).append(r)
    print(f"{'case':36} {'verified':9} {'outcome':8} {'ours ms':>9} {'base ms':>9} {'speed-up':>8} "
          f"{'rounds':>17} {'ours TF/s':>9} {'baseline':>12}")
    summary = []
    for row in rows:
        best_verified = None
        for case in row["cases"]:
            try:
                v = json.load(open(os.path.join(case, "verify.json")))
            except OSError:
                v = {"verified": False, "verdict": "no verifier report"}
            rs = results.get(case, [])
            ok = [r for r in rs if r.get("outcome") == "ok"]
            ours = [r["timing"]["median_ms"] for r in ok]
            base = [((r.get("baseline") or {}).get("timing") or {}).get("median_ms") for r in ok]
            # the runner's speed-up: the median over its in-process rounds where it ran several
            ups = [r.get("speedup") or (b / o if b and o else 0) for r, b, o in zip(ok, base, ours)]
            ups = [u for u in ups if u]
            up = statistics.median(ups) if ups else 0.0
            outcome = "ok" if rs and len(ok) == len(rs) else (
                rs[-1].get("outcome", "?") if rs else "not run")
            bl = (ok[0].get("baseline") or {}) if ok else {}
            print(f"{case:36} {'yes' if v['verified'] else 'no':9} {outcome:8} "
                  f"{statistics.median(ours) if ours else 0:9.4f} "
                  f"{statistics.median([b for b in base if b]) if any(base) else 0:9.4f} "
                  f"{up:8.3f} {' '.join(f'{u:.3f}' for u in ups):>17} "
                  f"{statistics.median([tflops(r) for r in ok]) if ok else 0:9.1f} "
                  f"{bl.get('backend') or bl.get('name') or '-':>12}")
            if outcome != "ok":
                msg = (rs[-1].get("message") or "") if rs else ""
                print(f"    {msg[:150]}")
            if not v["verified"]:
                print(f"    verifier: {v['verdict'][:150]}")
            if v["verified"] and outcome == "ok" and (best_verified is None or up > best_verified[1]):
                best_verified = (case, up)
        summary.append((row, best_verified))
    print()
    print(f"{'target':58} {'needed':>6} {'best verified':>13}  verdict")
    for row, best in summary:
        up = best[1] if best else 0.0
        holds = best is not None and up >= row["target"]
        print(f"{row['what']:58} {row['target']:6.2f} {up:13.3f}  "
              f"{'holds' if holds else 'missed'}{' (' + best[0] + ')' if best else ''}")


if __name__ == "__main__":
    main()
