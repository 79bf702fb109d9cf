#!/usr/bin/env python3
"""GPU side of bench/export.sh: for each exported case, random inputs (torch, seeded),
the exported C++ launcher run by the case's driver (BIN, built from driver.cc beside it), the
exported torch snippet (launch_torch.py's Pipeline) on the same inputs, and both outputs checked
against a torch reference in f32/f64 on the GPU. One JSON line per case and launcher, then a
table.

usage: export_check.py BUNDLE_DIR CASE... (each CASE dir holds metadata.json, case.json, drv)
"""
import importlib.util
import json
import os
import subprocess
import sys

import torch

DT = {"f32": torch.float32, "bf16": torch.bfloat16, "f16": torch.float16, "i32": torch.int32}


def inputs(meta, case):
    g = torch.Generator().manual_seed(1)
    out = {}
    for t in meta["tensors"]:
        if t["scratch"] or t["name"] == case["out"]:
            continue
        shape = t["shape"]
        if case["op"] == "moe" and t["name"] == case["tolerance"]["ids"]:
            experts = meta["dims"]["E"] if "dims" in meta else case["dims"]["E"]
            rows = [torch.randperm(experts, generator=g)[:shape[1]] for _ in range(shape[0])]
            out[t["name"]] = torch.stack(rows).to(torch.int32)
        elif case["op"] == "moe" and t["name"] == case["tolerance"]["weights"]:
            out[t["name"]] = torch.rand(shape, generator=g) / shape[1]
        else:
            out[t["name"]] = (torch.rand(shape, generator=g) * 2 - 1).to(DT[t["dtype"]])
    return out


def reference(case, x, out_shape):
    """The case's output from the inputs, in f64 on the GPU, and the scale its tolerance is
    relative to: |output|, or for moe (as the runner's check) the sum of its terms' magnitudes,
    since the kernel rounds the hidden activation to bf16 before the down projection."""
    d = {k: v.cuda() for k, v in x.items()}
    if case["op"] == "gemm":  # C = A B, B stored [K, N]
        y = d["A"].double() @ d["B"].double()
        return y, y.abs()
    if case["op"] == "attention":  # Q/K/V [BH * S, D] -> O [BH, S, D]
        bh, s, hd = out_shape
        q, k, v = (d[n].double().reshape(bh, s, hd) for n in ("Q", "K", "V"))
        p = torch.softmax(q @ k.transpose(1, 2) / hd ** 0.5, dim=-1)
        y = p @ v
        return y, y.abs()
    if case["op"] == "moe":  # SwiGLU experts, top-k routing (runner_core.h "moe")
        c = case["tolerance"]
        xx, wg, wu, wd = (d[c[k]].double() for k in ("a", "b", "u", "d"))
        ids, wt = d[c["ids"]].long(), d[c["weights"]].double()
        y = torch.zeros(xx.shape[0], wd.shape[2], dtype=torch.float64, device="cuda")
        scale = torch.zeros_like(y)
        for j in range(ids.shape[1]):
            e = ids[:, j]
            h = torch.nn.functional.silu(torch.einsum("td,tdf->tf", xx, wg[e])) * \
                torch.einsum("td,tdf->tf", xx, wu[e])
            y += wt[:, j, None] * torch.einsum("tf,tfd->td", h, wd[e])
            scale += wt[:, j, None].abs() * torch.einsum("tf,tfd->td", h.abs(), wd[e].abs())
        return y, scale
    raise ValueError(case["op"])


def compare(case, got, ref):
    want, scale = ref
    tol = case["tolerance"]
    rtol, atol = tol.get("rtol", 1e-3), tol.get("atol", 1e-3)
    if case["op"] == "moe":  # the runner's moe tolerance: one bf16 rounding of each term
        rtol, atol = 5e-3, 1e-5
    got = got.double().reshape(want.shape)
    err = (got - want).abs()
    bad = int((err > atol + rtol * scale).sum()) + int(torch.isnan(got).sum())
    return {"max_abs_err": float(err.nan_to_num(float("inf")).max()),
            "max_abs_ref": float(want.abs().max()), "mismatches": bad, "passed": bad == 0,
            "max_err_over_tol": float((err / (atol + rtol * scale)).nan_to_num(float("inf")).max()),
            "rtol": rtol, "atol": atol}


def check_case(d):
    with open(os.path.join(d, "metadata.json")) as fh:
        meta = json.load(fh)
    with open(os.path.join(d, "case.json")) as fh:
        case = json.load(fh)
    x = inputs(meta, case)
    for n, t in x.items():
        t.contiguous().view(torch.uint8).numpy().tofile(os.path.join(d, f"in_{n}.bin"))
    out = [t for t in meta["tensors"] if t["name"] == case["out"]][0]
    want = reference(case, x, out["shape"])
    rows = []
    # The C++ launcher.
    r = subprocess.run([os.path.join(d, "drv"), d], capture_output=True, text=True, timeout=120)
    row = {"case": case["name"], "launcher": "C++ argus_kernel.h", "rc": r.returncode}
    if r.returncode == 0:
        got = torch.from_numpy(
            __import__("numpy").fromfile(os.path.join(d, f"out_{out['name']}.bin"), dtype="uint8")
        ).view(DT[out["dtype"]]).cuda()
        row.update(compare(case, got, want), ms=json.loads(r.stdout.strip().splitlines()[-1])["ms"])
    else:
        row["error"] = (r.stdout + r.stderr)[-600:]
    rows.append(row)
    # The torch snippet.
    row = {"case": case["name"], "launcher": "torch launch_torch.py"}
    try:
        spec = importlib.util.spec_from_file_location(f"launch_{case['name']}",
                                                      os.path.join(d, "launch_torch.py"))
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        y = torch.full(out["shape"], float("nan"), dtype=DT[out["dtype"]], device="cuda")
        pipe = mod.Pipeline()
        pipe(**{k: v.cuda() for k, v in x.items()}, **{out["name"]: y})
        torch.cuda.synchronize()
        row.update(compare(case, y, want))
    except Exception as e:  # noqa: BLE001 - reported as the row's error
        row.update(passed=False, error=repr(e)[-600:])
    rows.append(row)
    return rows


def main():
    bundle = sys.argv[1]
    rows = []
    for c in sys.argv[2:]:
        try:
            rows += check_case(os.path.join(bundle, c))
        except Exception as e:  # noqa: BLE001
            rows.append({"case": c, "launcher": "?", "passed": False, "error": repr(e)[-600:]})
        for r in rows[-2:]:
            print(json.dumps(r), flush=True)
    print(f"\n{'case':7} {'launcher':24} {'result':6} {'max_abs_err':>12} {'max|ref|':>10} {'err/tol':>8} {'ms':>8}")
    for r in rows:
        print(f"{r['case']:7} {r['launcher']:24} {'PASS' if r.get('passed') else 'FAIL':6} "
              f"{r.get('max_abs_err', float('nan')):12.3e} {r.get('max_abs_ref', float('nan')):10.3f} "
              f"{r.get('max_err_over_tol', float('nan')):8.3f} "
              f"{r.get('ms', float('nan')):8.4f}")
    sys.exit(0 if all(r.get("passed") for r in rows) else 1)


if __name__ == "__main__":
    main()
