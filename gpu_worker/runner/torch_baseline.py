#!/usr/bin/env python3
"""argus-torch-baseline: times what a PyTorch user runs for a memory-bound problem, eager and
torch.compile(mode="max-autotune-no-cudagraphs"), as the baseline of the norms, softmax,
elementwise ops, row reductions and the fusions (residual add + RMSNorm, rotary embedding).

argus-runner runs this as a child when a spec names `"baseline": "torch"`. The runner writes the
very inputs its kernel ran on (raw little-endian device representation) into a scratch
directory; this helper loads them onto the GPU and runs, per check op:

  rmsnorm      F.rms_norm(x, (n,), w, eps)
  layernorm    F.layer_norm(x, (n,), w, bias, eps)
  softmax      torch.softmax(x, -1)
  add, mul     x + y, x * y
  silu_mul     F.silu(x) * y
  row_sum      x.sum(-1, dtype=out)
  add_rmsnorm  h = x + res; y = F.rms_norm(h, (n,), w, eps)        (two outputs)
  rope         q * cos + rotate_half(q) * sin, the same for k, with cos/sin [t, d] built once
               from the [t, d/2] tables before timing (a model's rotary cache)

each output cast to the kernel's output dtype where it differs (what a user must add). The
compiled variant is the same function under torch.compile; its compilation (and autotuning)
happens before timing, so only the compiled kernels are timed. Both are timed with CUDA events
(warm-up, `reps` repetitions, an L2 flush between them outside the events, median); each one's
outputs are compared with eager's, and eager's written where the request says (the runner checks
them against its f64 reference). One JSON object on stdout:

  {"outcome": "ok", "name": "torch.compile", "timing": {...},
   "variants": {"eager": {"timing": ...}, "compile": {"timing": ..., "max_abs_diff": ...}},
   "copy": {"bytes": ..., "timing": ..., "gbps": ...}, "torch": "2.11.0"}

"copy" is the ceiling: a device-to-device copy (torch's copy_) moving the problem's compulsory
bytes ("copy_bytes": half read, half written), timed the same way.

"name"/"timing" are the faster variant's (the stronger baseline). usage:
  argus-torch-baseline '{"op": "rmsnorm", "eps": 1e-6, "inputs": {"a": {"path": P, "dtype":
    "bf16", "shape": [m, n]}, ...}, "outputs": {"c": {"path": P, "dtype": "bf16", "shape":
    [m, n]}, ...}, "warmup": 10, "reps": 50, "flush_bytes": 268435456, "compile": true}'
(roles a, b, c, d, u, e as in the runner's check spec). Exit status 0 whenever a JSON object
was printed (whatever its outcome).
  argus-torch-baseline --prewarm SPEC.json...   compiles the specs' problems ahead (caches only)
"""
import ctypes
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from argus_helper_timing import cuda_torch, emit, time_cuda  # noqa: E402 - beside this script


def build(torch, op, eps, out_dtype):
    """The eager function of `op` over the role tensors (a dict), returning its outputs by role."""
    import torch.nn.functional as fn

    def cast(t):
        return t if t.dtype == out_dtype else t.to(out_dtype)

    if op == "rmsnorm":
        return lambda t: {"c": cast(fn.rms_norm(t["a"], (t["a"].shape[-1],), t["b"], eps))}
    if op == "layernorm":
        return lambda t: {"c": cast(fn.layer_norm(t["a"], (t["a"].shape[-1],), t["b"], t["d"],
                                                  eps))}
    if op == "softmax":
        return lambda t: {"c": cast(torch.softmax(t["a"], -1))}
    if op == "add":
        return lambda t: {"c": cast(t["a"] + t["b"])}
    if op == "mul":
        return lambda t: {"c": cast(t["a"] * t["b"])}
    if op == "silu_mul":
        return lambda t: {"c": cast(fn.silu(t["a"]) * t["b"])}
    if op == "row_sum":
        return lambda t: {"c": t["a"].sum(-1, dtype=out_dtype)}
    if op == "add_rmsnorm":
        def add_rmsnorm(t):
            h = cast(t["a"] + t["u"])
            return {"e": h, "c": cast(fn.rms_norm(h, (h.shape[-1],), t["b"], eps))}
        return add_rmsnorm
    if op == "rope":
        def rotate_half(x):
            half = x.shape[-1] // 2
            return torch.cat((-x[..., half:], x[..., :half]), dim=-1)

        def rope(t):
            cos, sin = t["cos_full"], t["sin_full"]
            return {"c": cast(t["a"] * cos + rotate_half(t["a"]) * sin),
                    "e": cast(t["b"] * cos + rotate_half(t["b"]) * sin)}
        return rope
    return None


def prewarm(spec_paths):
    """Compiles (and autotunes) the compiled variant of each spec's problem on random inputs of
    its shapes, so that the runner's later helper call finds Inductor's and Triton's on-disk
    caches warm; the bench runs this for all cases at once, in parallel, before timing."""
    import torch
    torch._dynamo.config.cache_size_limit = 64
    dtypes = {"bf16": torch.bfloat16, "f16": torch.float16, "f32": torch.float32}
    for path in spec_paths:
        try:
            with open(path) as fh:
                spec = json.load(fh)
            check, ts = spec["check"], {t["name"]: t for t in spec["tensors"]}
            if spec.get("baseline") != "torch":
                continue
            tensors = {}
            for role in ("a", "b", "d", "u"):
                if check.get(role):
                    t = ts[check[role]]
                    tensors[role] = torch.rand(t["shape"], device="cuda").to(dtypes[t["dtype"]])
            if check["op"] == "rope":
                for name, role in (("cos_full", "u"), ("sin_full", "d")):
                    half = tensors[role]
                    tensors[name] = torch.cat((half, half), dim=-1)[:, None, :].contiguous()
            fn = build(torch, check["op"], float(check.get("eps", 1e-6)),
                       dtypes[ts[check["c"]]["dtype"]])
            torch.compile(fn, mode="max-autotune-no-cudagraphs", dynamic=False)(tensors)
            torch.cuda.synchronize()
            print(f"prewarmed {path}", file=sys.stderr)
        except Exception as e:  # noqa: BLE001 - the timed call reports its own failure
            print(f"prewarm {path}: {e}"[:300], file=sys.stderr)


def main():
    if sys.argv[1:2] == ["--prewarm"]:
        prewarm(sys.argv[2:])
        return
    try:
        req = json.loads(sys.argv[1])
        op = str(req["op"])
        inputs, outputs = dict(req["inputs"]), dict(req["outputs"])
    except (IndexError, KeyError, ValueError, TypeError) as e:
        emit({"outcome": "error", "message": f"bad request: {e}"})
    torch = cuda_torch()
    dtypes = {"bf16": torch.bfloat16, "f16": torch.float16, "f32": torch.float32}
    out_dtype = dtypes.get(outputs.get("c", {}).get("dtype"))
    fn = build(torch, op, float(req.get("eps", 1e-6)), out_dtype)
    if fn is None or out_dtype is None:
        emit({"outcome": "unsupported", "message": f"no PyTorch baseline for check op {op}"})
    warmup, reps = int(req.get("warmup", 10)), int(req.get("reps", 50))
    flush_bytes = int(req.get("flush_bytes", 256 << 20))

    tensors = {}
    try:
        for role, t in inputs.items():
            n = 1
            for s in t["shape"]:
                n *= int(s)
            x = torch.from_file(str(t["path"]), shared=False, size=n, dtype=dtypes[t["dtype"]])
            tensors[role] = x.reshape([int(s) for s in t["shape"]]).to("cuda")
        if op == "rope":  # [t, d/2] tables -> [t, 1, d], as a model's rotary cache holds them
            for name, role in (("cos_full", "u"), ("sin_full", "d")):
                half = tensors[role]
                tensors[name] = torch.cat((half, half), dim=-1)[:, None, :].contiguous()
    except Exception as e:  # noqa: BLE001 - unreadable inputs or out of memory
        emit({"outcome": "error", "message": f"loading the inputs: {e}"[:400]})

    flush = torch.empty(max(flush_bytes, 4) // 4, dtype=torch.int32, device="cuda")
    variants = {}
    try:
        ref = fn(tensors)
        torch.cuda.synchronize()
        for role, t in outputs.items():
            y = ref[role].contiguous().cpu()
            with open(t["path"], "wb") as f:
                f.write((ctypes.c_char * (y.numel() * y.element_size())).from_address(
                    y.data_ptr()))
        variants["eager"] = {"timing": time_cuda(torch, lambda: fn(tensors), warmup, reps, flush)}
    except Exception as e:  # noqa: BLE001 - e.g. out of memory at a large shape
        emit({"outcome": "error", "message": f"running eager PyTorch: {e}"[:400]})
    if req.get("compile", True):
        v = {}
        try:
            compiled = torch.compile(fn, mode="max-autotune-no-cudagraphs", dynamic=False)
            got = compiled(tensors)  # compiles and autotunes, untimed
            torch.cuda.synchronize()
            v["max_abs_diff"] = max(float((got[r].float() - ref[r].float()).abs().max())
                                    for r in ref)
            v["timing"] = time_cuda(torch, lambda: compiled(tensors), warmup, reps, flush)
            v["outcome"] = "ok"
        except Exception as e:  # noqa: BLE001 - compilation failures are reported, not fatal
            v = {"outcome": "error", "message": str(e).splitlines()[0][:300] if str(e) else
                 type(e).__name__}
        variants["compile"] = v
    variants["eager"]["outcome"] = "ok"
    # The ceiling: a device-to-device copy that reads and writes the problem's compulsory bytes
    # (half each way), timed the same way.
    copy = None
    half = int(req.get("copy_bytes", 0)) // 2
    if half > 0:
        try:
            src = torch.zeros(half, dtype=torch.uint8, device="cuda")
            dst = torch.empty_like(src)
            t = time_cuda(torch, lambda: dst.copy_(src), warmup, reps, flush)
            copy = {"bytes": 2 * half, "timing": t,
                    "gbps": 2 * half / (t["median_ms"] * 1e-3) / 1e9}
            del src, dst
        except Exception as e:  # noqa: BLE001 - out of memory: no ceiling for this case
            copy = {"message": str(e).splitlines()[0][:200] if str(e) else type(e).__name__}
    ok = {k: x for k, x in variants.items() if x.get("outcome") == "ok"}
    best = min(ok, key=lambda k: ok[k]["timing"]["median_ms"])
    emit({"outcome": "ok", "name": "torch.compile" if best == "compile" else "torch eager",
          "timing": ok[best]["timing"], "variants": variants, "copy": copy,
          "torch": torch.__version__})


if __name__ == "__main__":
    main()
