#!/usr/bin/env python3
"""Prints a suite's table from a case bundle's results (run.sh calls it; run beside the bundle's
case directories).

usage: tables.py TABLE RESULTS_JSONL
  TABLE: gemm, sweep (bench/gemm.sh sweep), attention, attention_models (bench/attention.sh
  models), moe, memory_bound, examples, race (bench/moe.sh --race), or rows (the target rows of
  rows.json: bench/targets.sh and the suites run without named cases).

speed-up = baseline time / ours, both measured in the same runner process (> 1: we are faster);
ratio = ours / baseline (< 1: we are faster).
"""
import json
import math
import os
import statistics
import sys


def load(path):
    with open(path) as fh:
        return [json.loads(line) for line in fh if line.strip()]


def ms(r):
    return (r.get("timing") or {}).get("median_ms") or 0


def base_ms(r):
    return ((r.get("baseline") or {}).get("timing") or {}).get("median_ms") or 0


def base_name(r):
    b = r.get("baseline") or {}
    return b.get("backend") or b.get("name") or "-"


def regs(r):
    return (r.get("function") or {}).get("registers", -1)


def spec_check(case):
    try:
        with open(os.path.join(case, "spec.json")) as fh:
            return json.load(fh)["check"]
    except (OSError, KeyError, ValueError):
        return {}


def tflops(r):
    """The runner's TFLOP/s; it counts none for attention: 4 * BH * S^2 * D, halved if causal."""
    tf = r.get("tflops") or 0
    t = ms(r)
    if tf or not t:
        return tf
    if r.get("flops"):
        return r["flops"] / (t * 1e-3) / 1e12
    a = spec_check(r["case"])
    if a.get("op") == "attention":
        return 4 * a["m"] * a["n"] ** 2 * a["k"] / (2 if a.get("causal") else 1) / t / 1e9
    return 0


def picked(check, keys):
    return json.dumps({k: v for k, v in (check or {}).items() if k in keys})


def gemm(results):
    print(f"{'case':30} {'outcome':8} {'ours ms':>9} {'base ms':>9} {'ratio':>6} {'ours TF/s':>9} "
          f"{'base TF/s':>9} {'base':>12} {'regs':>5} {'check':>9}  message")
    for r in results:
        tf = tflops(r)
        c = r.get("check") or {}
        print(f"{r['case']:30} {r.get('outcome', '?'):8} {ms(r):9.4f} {base_ms(r):9.4f} "
              f"{r.get('ratio') or 0:6.3f} {tf:9.1f} {tf * (r.get('ratio') or 0):9.1f} "
              f"{base_name(r):>12} {regs(r):5} {c.get('rel_l2_err', -1):9.2e}  "
              f"{r.get('message', '')[:70]}")
    # Cases timed in rounds (ours and cuBLAS alternately in one process) or passes: one line each
    # over all of them. ratio = median of the per-round ratios, speed-up = 1 / ratio.
    by = {}
    for r in results:
        for x in ((r.get("baseline") or {}).get("rounds")) or []:
            by.setdefault(r["case"], []).append((x["ours_ms"], x["baseline_ms"], r.get("pass", 1)))
    if by:
        print(f"\n{'case':24} {'n':>3} {'ours ms':>8} {'cuBLAS ms':>9} {'ratio':>6} {'speed-up':>8} "
              f"{'min..max ratio':>15}  per-pass medians of speed-up")
        for case, xs in sorted(by.items()):
            ratios = [o / b for o, b, _ in xs]
            passes = sorted({p for _, _, p in xs})
            per = [statistics.median([b / o for o, b, q in xs if q == p]) for p in passes]
            med = statistics.median(ratios)
            print(f"{case:24} {len(xs):3} {statistics.median([o for o, _, _ in xs]):8.4f} "
                  f"{statistics.median([b for _, b, _ in xs]):9.4f} {med:6.3f} {1 / med:8.3f} "
                  f"{min(ratios):7.3f}..{max(ratios):.3f}  " + " ".join(f"{v:.3f}" for v in per))


def attention(results):
    print(f"{'case':22} {'outcome':8} {'ours ms':>9} {'SDPA ms':>9} {'ours TF':>8} {'SDPA TF':>8} "
          f"{'speedup':>7} {'regs':>5}  check / SDPA backend / message")
    for r in results:
        t, bt = ms(r), base_ms(r)
        tf = tflops(r)
        btf = tf * t / bt if bt else 0
        b = r.get("baseline") or {}
        print(f"{r['case']:22} {r.get('outcome', '?'):8} {t:9.4f} {bt:9.4f} {tf:8.1f} {btf:8.1f} "
              f"{(bt / t if t and bt else 0):7.3f} {regs(r):5}  "
              f"{picked(r.get('check'), ('mode', 'mismatches', 'max_abs_err', 'rel_l2_err'))} "
              f"{b.get('backend', '')} {r.get('message', '')[:80]} {b.get('message', '')[:80]}")


def attention_models(results):
    """bench/attention.sh models: one line per model shape (speed-up = SDPA time / ours, each
    the median of its runner process), then the geomean and the worst over the rows that ran
    verified and correct; rows without a kernel (not_run/cases.tsv) or not verified are listed
    and count as misses of the prefill targets (geomean >= 1.05, no row below 0.95)."""
    not_run = {}
    if os.path.exists(os.path.join("not_run", "cases.tsv")):
        with open(os.path.join("not_run", "cases.tsv")) as fh:
            not_run = dict(line.rstrip("\n").split("\t", 1) for line in fh if line.strip())
    print(f"{'case':32} {'verified':8} {'outcome':8} {'ours ms':>9} {'SDPA ms':>9} "
          f"{'ours TF':>8} {'speed-up':>8}  SDPA backend / message")
    ups = {}
    for r in results:
        try:
            with open(os.path.join(r["case"], "verify.json")) as fh:
                verified = json.load(fh).get("verified", False)
        except (OSError, ValueError):
            verified = False
        t, bt = ms(r), base_ms(r)
        up = bt / t if t and bt else 0
        b = r.get("baseline") or {}
        print(f"{r['case']:32} {'yes' if verified else 'no':8} {r.get('outcome', '?'):8} "
              f"{t:9.4f} {bt:9.4f} {tflops(r):8.1f} {up:8.3f}  {b.get('backend', '')} "
              f"{r.get('message', '')[:60]} {b.get('message', '')[:60]}")
        if verified and r.get("outcome") == "ok" and up:
            ups[r["case"]] = up
    for case, why in sorted(not_run.items()):
        print(f"{case:32} {'-':8} {'not run':8} {'':9} {'':9} {'':8} {'':8}  {why}")
    if not ups:
        print("\nno row ran verified and correct")
        return
    geo = statistics.geometric_mean(list(ups.values()))
    worst = min(ups, key=ups.get)
    missed = len(results) - len(ups) + len(not_run)
    print(f"\n{len(ups)} rows verified and correct, {missed} without a result; geomean speed-up "
          f"{geo:.3f} (target 1.05: {'holds' if geo >= 1.05 else 'missed'}); worst "
          f"{ups[worst]:.3f} {worst} (floor 0.95: {'holds' if ups[worst] >= 0.95 else 'missed'}); "
          f"{sum(u < 0.95 for u in ups.values())} rows below 0.95")


MOE_CHECK = ("mode", "mismatches", "nan_count", "max_rel_err", "rel_l2_err")


def variant_ms(b, name):
    return (((b.get("variants") or {}).get(name) or {}).get("timing") or {}).get("median_ms") or 0


def moe(results):
    """Ours against PyTorch's loop over experts and its sort + torch._grouped_mm pipeline (the
    baseline the runner ranks: the faster of the two)."""
    print(f"{'case':16} {'outcome':8} {'ours ms':>9} {'loop ms':>9} {'gmm ms':>9} {'ours TF':>8} "
          f"{'gmm TF':>7} {'x loop':>7} {'x gmm':>7} {'regs':>5}  check / baseline check / message")
    for r in results:
        t = ms(r)
        fl = r.get("flops") or 0
        b = r.get("baseline") or {}
        loop = variant_ms(b, "loop") or (base_ms(r) if b.get("name") == "torch_moe_loop" else 0)
        gmm = variant_ms(b, "grouped_mm")
        print(f"{r['case']:16} {r.get('outcome', '?'):8} {t:9.4f} {loop:9.4f} {gmm:9.4f} "
              f"{(fl / (t * 1e-3) / 1e12 if t else 0):8.1f} "
              f"{(fl / (gmm * 1e-3) / 1e12 if gmm else 0):7.1f} "
              f"{(loop / t if t and loop else 0):7.2f} {(gmm / t if t and gmm else 0):7.2f} "
              f"{regs(r):5}  {picked(r.get('check'), MOE_CHECK)} {b.get('outcome', '')} "
              f"{picked(b.get('check'), MOE_CHECK)} "
              f"{r.get('message', '')[:80]} {b.get('message', '')[:120]} "
              f"{((b.get('variants') or {}).get('grouped_mm') or {}).get('message', '')[:120]}")
        if r.get("launches"):
            print(" " * 18 + "launches (regs): " + ", ".join(
                f"{l['kernel']} {l.get('median_ms', 0):.4f} ms "
                f"({(l.get('function') or {}).get('registers', -1)})" for l in r["launches"]))
    print("\nx loop / x gmm: the loop's / the grouped-GEMM pipeline's ms over ours (> 1: we are "
          "faster); the runner ranks by the faster of the two and checks its output.")


def race(results):
    print(f"{'case':22} {'outcome':8} {'ours ms':>9} {'p10':>7} {'p90':>7} {'loop ms':>8} "
          f"{'speedup':>8} {'TF':>6}  verify / check / launches")
    for r in results:
        tm = r.get("timing") or {}
        t, bt = ms(r), base_ms(r)
        b = r.get("baseline") or {}
        v = (r.get("verify") or {}).get("verdict", "?")
        print(f"{r['case']:22} {r.get('outcome', '?')[:8]:8} {t:9.4f} {tm.get('p10_ms') or 0:7.3f} "
              f"{tm.get('p90_ms') or 0:7.3f} {bt:8.4f} {(bt / t if t and bt else 0):8.4f} "
              f"{((r.get('flops') or 0) / (t * 1e-3) / 1e12 if t else 0):6.1f}  {v[:10]} "
              f"{picked(r.get('check'), ('nan_count', 'rel_l2_err'))} "
              f"{r.get('message', '')[:60]} {b.get('outcome', '')} {b.get('message', '')[:60]}")
        if r.get("launches"):
            print(" " * 24 + ", ".join(f"{l['kernel'][4:]} {l.get('median_ms', 0):.3f}"
                                       for l in r["launches"]))


def geomean(xs):
    xs = [x for x in xs if x > 0]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else 0


def memory_bound(results):
    """Ours against PyTorch eager, torch.compile and a copy of the same compulsory bytes."""
    print(f"{'case':32} {'outcome':8} {'ours ms':>8} {'eager':>8} {'compile':>8} {'copy':>8} "
          f"{'GB/s':>6} {'of copy':>7} {'x eager':>7} {'x comp':>7}  check / message")
    rows = []
    for r in results:
        t = ms(r)
        b = r.get("baseline") or {}
        var = b.get("variants") or {}
        eager = ((var.get("eager") or {}).get("timing") or {}).get("median_ms") or 0
        comp = ((var.get("compile") or {}).get("timing") or {}).get("median_ms") or 0
        copy = (((b.get("copy") or {}).get("timing")) or {}).get("median_ms") or 0
        gbps = (r.get("bytes") or 0) / (t * 1e-3) / 1e9 if t else 0
        frac = copy / t if t and copy else 0
        xe = eager / t if t and eager else 0
        xc = comp / t if t and comp else 0
        if eager:
            rows.append((r["case"], frac, xe, xc))
        print(f"{r['case']:32} {r.get('outcome', '?'):8} {t:8.4f} {eager:8.4f} {comp:8.4f} "
              f"{copy:8.4f} {gbps:6.0f} {frac:7.3f} {xe:7.2f} {xc:7.2f}  "
              f"{picked(r.get('check'), ('mode', 'mismatches', 'rel_l2_err'))} "
              f"{(b.get('outcome') if b and b.get('outcome') != 'ok' else '') or ''} "
              f"{(r.get('message') or b.get('message') or '')[:60]}")
    if rows:
        fusions = [x for x in rows if x[0].startswith(("add_rmsnorm", "rope"))]
        print(f"\ngeomean over {len(rows)} timed cases: x eager {geomean([x[2] for x in rows]):.2f}, "
              f"x torch.compile {geomean([x[3] for x in rows]):.2f}, of copy "
              f"{geomean([x[1] for x in rows]):.3f}; cases >= 0.90 of copy: "
              f"{sum(x[1] >= 0.9 for x in rows)}/{len(rows)}")
        if fusions:
            print(f"fusions (add_rmsnorm, rope): x eager {geomean([x[2] for x in fusions]):.2f}, "
                  f"min {min(x[2] for x in fusions):.2f}")
    print("\n'copy' = a device-to-device copy (torch copy_) moving the case's compulsory bytes, "
          "timed in the same process; 'of copy' = copy ms / ours ms; x eager / x comp = "
          "PyTorch eager / torch.compile ms over ours (> 1: we are faster). The small cases check "
          "correctness at ragged shapes; they are not timed against a baseline.")


def examples(results):
    print(f"{'case':28} {'rc':>3} {'outcome':10} {'ours ms':>9} {'base ms':>9}  message")
    for r in results:
        print(f"{r['case']:28} {r.get('rc', '?'):>3} {r.get('outcome', '?'):10} {ms(r):9.4f} "
              f"{base_ms(r):9.4f}  {r.get('message', '')[:150]}")


def rows(results):
    """One line per candidate of each target row, then whether each target holds: only when a
    kernel the verifier proved (CASE/verify.json) reaches it and passed the runner's check. A row
    with several rounds gives the median of the rounds' speed-ups (each the runner's own)."""
    with open("rows.json") as fh:
        targets = json.load(fh)
    by_case = {}
    for r in results:
        by_case.setdefault(r["case"], []).append(r)
    print(f"{'case':36} {'verified':9} {'outcome':8} {'ours ms':>9} {'base ms':>9} {'speed-up':>8} "
          f"{'rounds':>17} {'ours TF/s':>9} {'baseline':>12}")
    summary = []
    for row in targets:
        best_verified = None
        for case in row["cases"]:
            try:
                with open(os.path.join(case, "verify.json")) as fh:
                    v = json.load(fh)
            except OSError:
                v = {"verified": False, "verdict": "no verifier report"}
            rs = by_case.get(case, [])
            ok = [r for r in rs if r.get("outcome") == "ok"]
            ours = [ms(r) for r in ok]
            base = [base_ms(r) for r in ok]
            ups = [r.get("speedup") or (b / o if b and o else 0) for r, b, o in zip(ok, base, ours)]
            ups = [u for u in ups if u]
            up = statistics.median(ups) if ups else 0.0
            outcome = "ok" if rs and len(ok) == len(rs) else (
                rs[-1].get("outcome", "?") if rs else "not run")
            print(f"{case:36} {'yes' if v['verified'] else 'no':9} {outcome:8} "
                  f"{statistics.median(ours) if ours else 0:9.4f} "
                  f"{statistics.median([b for b in base if b]) if any(base) else 0:9.4f} "
                  f"{up:8.3f} {' '.join(f'{u:.3f}' for u in ups):>17} "
                  f"{statistics.median([tflops(r) for r in ok]) if ok else 0:9.1f} "
                  f"{base_name(ok[0]) if ok else '-':>12}")
            if outcome != "ok":
                print(f"    {((rs[-1].get('message') or '') if rs else '')[:150]}")
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


# The H200's HBM3e bandwidth the decode rows are held to (issue targets: >= 85 % of the time to
# stream the weight once at 4.3 TB/s, or at least cuBLAS's speed).
WEIGHT_STREAM_BPS = 4.3e12


def verdict(case):
    try:
        with open(os.path.join(case, "verify.json")) as fh:
            return json.load(fh)
    except OSError:
        return {"verified": False, "verdict": "no verifier report"}


def sweep(results):
    """The nn.Linear sweep (bench/gemm.sh sweep): per shape the fastest candidate that passed the
    check (cases SHAPE.KERNEL), its speed-up over cuBLAS timed in the same runner process, whether
    the verifier proved it at that shape, the weight-streaming bound's share for decode rows
    (M <= 64), and PyTorch's F.linear (bf16 out, timed by gemm_torch.py) as a cross-check."""
    torch_ms = {}
    if os.path.exists(os.path.join(os.environ.get("OUT", "out"), "torch_linear.jsonl")):
        for t in load(os.path.join(os.environ.get("OUT", "out"), "torch_linear.jsonl")):
            torch_ms[t["shape"]] = t
    best = {}
    for r in results:
        shape, _, kern = r["case"].partition(".")
        if r.get("outcome") != "ok" or not ms(r) or not base_ms(r):
            best.setdefault(shape, None)
            continue
        if best.get(shape) is None or ms(r) < ms(best[shape]):
            best[shape] = r
    print(f"{'shape':30} {'M':>5} {'N':>6} {'K':>6} {'kernel':7} {'ver':3} {'ours ms':>8} "
          f"{'cuBLAS ms':>9} {'speed-up':>8} {'W-bound':>7} {'F.linear ms':>11} {'TF/s':>6}")
    ups = []
    for shape, r in sorted(best.items()):
        if r is None:
            print(f"{shape:30} no candidate passed")
            continue
        c = spec_check(r["case"])
        m, n, k = c.get("m", 0), c.get("n", 0), c.get("k", 0)
        up = base_ms(r) / ms(r)
        ups.append((up, shape))
        wb = f"{n * k * 2 / WEIGHT_STREAM_BPS * 1e3 / ms(r):7.2f}" if m <= 64 else f"{'':7}"
        t = torch_ms.get(shape, {})
        print(f"{shape:30} {m:5} {n:6} {k:6} {r['case'].partition('.')[2]:7} "
              f"{'yes' if verdict(r['case'])['verified'] else 'no':3} {ms(r):8.4f} "
              f"{base_ms(r):9.4f} {up:8.3f} {wb} {t.get('flinear_ms', 0):11.4f} {tflops(r):6.1f}")
    if ups:
        geo = math.exp(sum(math.log(u) for u, _ in ups) / len(ups))
        worst = min(ups)
        print(f"\ngeomean speed-up over cuBLAS: {geo:.3f} ({len(ups)} shapes); worst: "
              f"{worst[0]:.3f} ({worst[1]})")


TABLES = {f.__name__: f for f in (gemm, attention, attention_models, moe, race, memory_bound,
                                  examples, rows, sweep)}


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in TABLES:
        sys.exit(__doc__)
    TABLES[sys.argv[1]](load(sys.argv[2]))


if __name__ == "__main__":
    main()
