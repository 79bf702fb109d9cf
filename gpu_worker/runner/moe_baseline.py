#!/usr/bin/env python3
"""argus-moe-baseline: times PyTorch's loop over experts as the MoE baseline (issue 7).

argus-runner runs this as a child when a spec names `"baseline": "torch_moe_loop"` (no vendor
library has a fused MoE). The runner writes the very inputs its kernel ran on (raw little-endian
device representation: X [T,D], Ids [T,K] i32, Wt [T,K] f32, Wg/Wu [E,D,F], Wd [E,F,D]) into a
scratch directory; this helper loads them onto the GPU, runs

    y = zeros(T, D, f32)
    for e in range(E):                          # the loop over experts
        tok, slot = where(ids == e)
        h = silu(g) * u  where  g, u = (x[tok] @ Wgu[e]).chunk(2)   # gate/up in one GEMM
        y.index_add_(0, tok, (h @ Wd[e]).float() * wt[tok, slot, None])

(Wgu[e] = [Wg[e] | Wu[e]], concatenated once before timing, as a model does at load time;
bf16 matmuls with f32 accumulation, the hidden activation in bf16), writes its y where the
request says (the runner checks it against the same f64 reference as the kernel's output), times
it with CUDA events (warm-up, `reps` repetitions, an L2 flush between them outside the events,
median) and prints one JSON object on stdout:

  {"outcome": "ok", "name": "torch_moe_loop", "timing": {...}, "torch": "2.11.0"}

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
from argus_helper_timing import emit, time_cuda  # noqa: E402 - beside this script


def main():
    try:
        req = json.loads(sys.argv[1])
        T, D, F = int(req["tokens"]), int(req["hidden"]), int(req["ffn"])
        E, K = int(req["experts"]), int(req["topk"])
        paths = {k: str(req[k]) for k in ("x", "ids", "weights", "gate", "up", "down", "out")}
    except (IndexError, KeyError, ValueError, TypeError) as e:
        emit({"outcome": "error", "message": f"bad request: {e}"})
    try:
        import torch
        import torch.nn.functional as fn
    except Exception as e:  # noqa: BLE001 - any import failure means no baseline
        emit({"outcome": "unsupported", "message": f"PyTorch not importable: {e}"})
    if not torch.cuda.is_available():
        emit({"outcome": "unsupported", "message": "PyTorch sees no CUDA device"})
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

    def run():
        y = torch.zeros(T, D, dtype=torch.float32, device="cuda")
        for e in range(E):
            tok, slot = torch.where(ids == e)
            if tok.numel() == 0:
                continue
            g, u = (x[tok] @ wgu[e]).chunk(2, dim=-1)
            h = fn.silu(g) * u
            y.index_add_(0, tok, (h @ wd[e]).float() * wt[tok, slot, None])
        return y

    try:
        y = run()
        torch.cuda.synchronize()
        yc = y.cpu().contiguous()
        with open(paths["out"], "wb") as f:
            f.write((ctypes.c_char * (yc.numel() * 4)).from_address(yc.data_ptr()))
        flush = torch.empty(max(flush_bytes, 4) // 4, dtype=torch.int32, device="cuda")
        timing = time_cuda(torch, run, warmup, reps, flush)
    except Exception as e:  # noqa: BLE001 - e.g. out of memory at a large shape
        emit({"outcome": "error", "message": f"running the loop: {e}"[:400]})
    emit({"outcome": "ok", "name": "torch_moe_loop", "timing": timing,
          "torch": torch.__version__, "dtype": str(dtype).replace("torch.", "")})


if __name__ == "__main__":
    main()
