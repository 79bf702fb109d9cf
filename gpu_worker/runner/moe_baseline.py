#!/usr/bin/env python3
"""argus-moe-baseline: times what a PyTorch user runs for a MoE layer, as the MoE baseline: the
loop over experts and a sort + grouped-GEMM pipeline (`torch._grouped_mm`).

argus-runner runs this as a child when a spec names `"baseline": "torch_moe_loop"` (no vendor
library has a fused MoE). The runner writes the very inputs its kernel ran on (raw little-endian
device representation: X [T,D], Ids [T,K] i32, Wt [T,K] f32, Wg/Wu [E,D,F], Wd [E,F,D]) into a
scratch directory; this helper loads them onto the GPU and times two pipelines:

  loop:        y = zeros(T, D, f32)
               for e in range(E):                          # the loop over experts
                   tok, slot = where(ids == e)
                   h = silu(g) * u  where  g, u = (x[tok] @ Wgu[e]).chunk(2)   # gate/up in one GEMM
                   y.index_add_(0, tok, (h @ Wd[e]).float() * wt[tok, slot, None])
  grouped_mm:  order = argsort(ids.flatten()), offs = cumsum(bincount(ids)) (the routed rows
               sorted by expert), xs = x[order // K];
               h = silu(g) * u  where  g, u = torch._grouped_mm(xs, Wgu, offs).chunk(2)
               y = zeros(T, D, f32).index_add_(0, order // K,
                                               torch._grouped_mm(h, Wd, offs).float() * wt[order])

(Wgu[e] = [Wg[e] | Wu[e]], concatenated once before timing, as a model does at load time;
bf16 GEMMs with f32 accumulation, the hidden activation in bf16.) The baseline is the faster of
the two that ran (the stronger one); its y is written where the request says (the runner checks
it against the same f64 reference as the kernel's output), the other's is compared with it
here. Timing: CUDA events (warm-up, `reps` repetitions, an L2 flush between them outside the
events, median). One JSON object on stdout:

  {"outcome": "ok", "name": "torch_grouped_mm", "timing": {...},
   "variants": {"loop": {"timing": ...}, "grouped_mm": {"timing": ..., "rel_l2_vs_loop": ...}},
   "torch": "2.11.0"}

usage: argus-moe-baseline '{"tokens": T, "hidden": D, "ffn": F, "experts": E, "topk": K,
    "dtype": "bf16", "x": PATH, "ids": PATH, "weights": PATH, "gate": PATH, "up": PATH,
    "down": PATH, "out": PATH, "warmup": 10, "reps": 50, "flush_bytes": 268435456}'
Exit status 0 whenever a JSON object was printed (whatever its outcome).
"""
import ctypes
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from argus_helper_timing import cuda_torch, emit, time_cuda  # noqa: E402 - beside this script


def main():
    try:
        req = json.loads(sys.argv[1])
        T, D, F = int(req["tokens"]), int(req["hidden"]), int(req["ffn"])
        E, K = int(req["experts"]), int(req["topk"])
        paths = {k: str(req[k]) for k in ("x", "ids", "weights", "gate", "up", "down", "out")}
    except (IndexError, KeyError, ValueError, TypeError) as e:
        emit({"outcome": "error", "message": f"bad request: {e}"})
    torch = cuda_torch()
    import torch.nn.functional as fn
    dtype = {"bf16": torch.bfloat16, "f16": torch.float16, "f32": torch.float32}.get(
        req.get("dtype", "bf16"))
    if dtype is None:
        emit({"outcome": "unsupported", "message": f"dtype {req.get('dtype')} not supported"})
    warmup, reps = int(req.get("warmup", 10)), int(req.get("reps", 50))
    flush_bytes = int(req.get("flush_bytes", 256 << 20))

    def load(name, shape, dt):
        n = 1
        for s in shape:
            n *= s
        t = torch.from_file(paths[name], shared=False, size=n, dtype=dt)
        return t.reshape(shape).to("cuda")

    try:
        x = load("x", (T, D), dtype)
        ids = load("ids", (T, K), torch.int32).long()
        wt = load("weights", (T, K), torch.float32)
        wgu = torch.cat([load("gate", (E, D, F), dtype), load("up", (E, D, F), dtype)], dim=2)
        wd = load("down", (E, F, D), dtype)
    except Exception as e:  # noqa: BLE001 - unreadable inputs or out of memory
        emit({"outcome": "error", "message": f"loading the inputs: {e}"[:400]})
    if int(ids.min()) < 0 or int(ids.max()) >= E:
        emit({"outcome": "error", "message": "expert ids outside [0, E)"})

    def loop():
        y = torch.zeros(T, D, dtype=torch.float32, device="cuda")
        for e in range(E):
            tok, slot = torch.where(ids == e)
            if tok.numel() == 0:
                continue
            g, u = (x[tok] @ wgu[e]).chunk(2, dim=-1)
            h = fn.silu(g) * u
            y.index_add_(0, tok, (h @ wd[e]).float() * wt[tok, slot, None])
        return y

    flat_wt = wt.flatten()

    def grouped():
        flat = ids.flatten()
        order = torch.argsort(flat, stable=True)
        offs = torch.cumsum(torch.bincount(flat, minlength=E), 0).to(torch.int32)
        tok = order // K
        g, u = torch._grouped_mm(x[tok], wgu, offs=offs).chunk(2, dim=-1)
        h = fn.silu(g) * u
        yd = torch._grouped_mm(h, wd, offs=offs)
        y = torch.zeros(T, D, dtype=torch.float32, device="cuda")
        return y.index_add_(0, tok, yd.float() * flat_wt[order][:, None])

    flush = torch.empty(max(flush_bytes, 4) // 4, dtype=torch.int32, device="cuda")
    variants, outs = {}, {}
    for name, run in (("loop", loop), ("grouped_mm", grouped)):
        v = {}
        try:
            outs[name] = run()
            torch.cuda.synchronize()
            v["timing"] = time_cuda(torch, run, warmup, reps, flush)
            v["outcome"] = "ok"
        except Exception as e:  # noqa: BLE001 - e.g. out of memory, or no grouped GEMM here
            v = {"outcome": "error",
                 "message": (str(e).splitlines()[0] if str(e) else type(e).__name__)[:300]}
            outs.pop(name, None)
        variants[name] = v
    ok = {n: v for n, v in variants.items() if v["outcome"] == "ok"}
    if not ok:
        emit({"outcome": "error", "message": "neither the loop nor the grouped GEMMs ran",
              "variants": variants})
    best = min(ok, key=lambda n: ok[n]["timing"]["median_ms"])
    for n in outs:
        if n != best:
            num = float(((outs[n] - outs[best]) ** 2).sum())
            den = float((outs[best] ** 2).sum())
            variants[n]["rel_l2_vs_" + best] = (num / den) ** 0.5 if den > 0 else num
    try:
        yc = outs[best].cpu().contiguous()
        with open(paths["out"], "wb") as f:
            f.write((ctypes.c_char * (yc.numel() * 4)).from_address(yc.data_ptr()))
    except Exception as e:  # noqa: BLE001
        emit({"outcome": "error", "message": f"writing the output: {e}"[:400]})
    emit({"outcome": "ok", "name": "torch_moe_loop" if best == "loop" else "torch_grouped_mm",
          "timing": ok[best]["timing"], "variants": variants, "torch": torch.__version__,
          "dtype": str(dtype).replace("torch.", "")})

if __name__ == "__main__":
    main()
