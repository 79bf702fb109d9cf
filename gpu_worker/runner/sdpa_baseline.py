#!/usr/bin/env python3
"""argus-sdpa-baseline: times PyTorch's scaled_dot_product_attention as the attention baseline.

argus-runner runs this as a child when a spec names `"baseline": "torch_sdpa"` (there is no C
attention routine in cuBLAS; issue 5 allows PyTorch's cuDNN/flash SDPA through a small helper).
It draws fresh uniform [-1, 1] inputs of the spec's shape in the spec's input dtype: Q [batch,
bh/batch, seq, dim], K and V [batch, kv_bh/batch, kv_seq, dim] (kv_bh < bh: grouped-query
attention through `enable_gqa`, query head h reading kv head h / (bh / kv_bh)); causal with
kv_seq != seq is the bottom-right aligned mask (`causal_lower_right`, as in chunked prefill);
`scale` is the softmax scale (default 1/sqrt(dim)). It checks every backend it can run against
an f32 softmax(scale QK^T)V of a few heads (rel. L2 error; NaN never passes), times each with
CUDA events (warm-up, `reps` repetitions, an L2 flush between them outside the events, median)
and prints one JSON object on stdout:

  {"outcome": "ok", "name": "torch_sdpa", "backend": "cudnn", "timing": {...},
   "backends": {"cudnn": {...}, "flash": {...}, "efficient": {...}}, "torch": "2.11.0"}

The baseline is the fastest backend that passed its check. usage:
  argus-sdpa-baseline '{"batch": 4, "bh": 128, "kv_bh": 32, "seq": 4096, "kv_seq": 4096,
                        "dim": 128, "causal": false, "dtype": "bf16", "warmup": 10, "reps": 50,
                        "flush_bytes": 268435456, "seed": 1}'
Exit status 0 whenever a JSON object was printed (whatever its outcome).
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from argus_helper_timing import cuda_torch, emit, time_cuda  # noqa: E402 - beside this script


def main():
    try:
        req = json.loads(sys.argv[1])
        bh, seq, dim = int(req["bh"]), int(req["seq"]), int(req["dim"])
        batch = int(req.get("batch", 1))
        kv_bh, kv_seq = int(req.get("kv_bh") or bh), int(req.get("kv_seq") or seq)
        scale = float(req.get("scale") or -1)
        if min(batch, bh, kv_bh, seq, kv_seq, dim) <= 0 or bh % kv_bh or bh % batch \
                or kv_bh % batch:
            raise ValueError("batch, bh, kv_bh must be positive, kv_bh and batch dividing bh")
    except (IndexError, KeyError, ValueError, TypeError) as e:
        emit({"outcome": "error", "message": f"bad request: {e}"})
    if scale < 0:
        scale = dim ** -0.5
    torch = cuda_torch()
    try:
        import torch.nn.functional as F
        from torch.nn.attention import SDPBackend, sdpa_kernel
        from torch.nn.attention.bias import causal_lower_right
    except Exception as e:  # noqa: BLE001 - a PyTorch without SDPA backends
        emit({"outcome": "unsupported", "message": f"PyTorch has no SDPA backends: {e}"})

    causal = bool(req.get("causal", False))
    dtype = {"bf16": torch.bfloat16, "f16": torch.float16, "f32": torch.float32}.get(
        req.get("dtype", "bf16"), torch.bfloat16)
    warmup, reps = int(req.get("warmup", 10)), int(req.get("reps", 50))
    flush_bytes = int(req.get("flush_bytes", 256 << 20))
    gen = torch.Generator(device="cuda").manual_seed(int(req.get("seed", 1)))

    def rand(heads, n):
        return (torch.rand((batch, heads // batch, n, dim), device="cuda", generator=gen) * 2
                - 1).to(dtype)

    q, k, v = rand(bh, seq), rand(kv_bh, kv_seq), rand(kv_bh, kv_seq)
    group = bh // kv_bh
    flush = torch.empty(flush_bytes // 4, dtype=torch.int32, device="cuda")
    # The reference for the check: f32 softmax(scale QK^T) V on a few heads (flattened over
    # the batch: query head h reads kv head h // group).
    heads = sorted({0, bh // 2, bh - 1})
    ref = {}
    for h in heads:
        qh = q.reshape(bh, seq, dim)[h].float()
        kh, vh = (t.reshape(kv_bh, kv_seq, dim)[h // group].float() for t in (k, v))
        s = (qh @ kh.T) * scale
        if causal:
            mask = torch.ones(seq, kv_seq, device="cuda", dtype=torch.bool).triu(
                kv_seq - seq + 1)
            s = s.masked_fill(mask, float("-inf"))
        ref[h] = torch.nan_to_num(torch.softmax(s, dim=-1)) @ vh
    # Square causal: is_causal; otherwise the bottom-right aligned mask object.
    mask = causal_lower_right(seq, kv_seq) if causal and seq != kv_seq else None
    extra = {"enable_gqa": True} if group > 1 else {}

    backends = {"cudnn": SDPBackend.CUDNN_ATTENTION, "flash": SDPBackend.FLASH_ATTENTION,
                "efficient": SDPBackend.EFFICIENT_ATTENTION}
    results = {}
    for name, be in backends.items():
        r = {}
        try:
            with sdpa_kernel([be]):
                run = lambda: F.scaled_dot_product_attention(  # noqa: E731
                    q, k, v, attn_mask=mask, is_causal=causal and mask is None, scale=scale,
                    **extra)
                out = run().reshape(bh, seq, dim)
                torch.cuda.synchronize()
                num = den = 0.0
                for h in heads:
                    num += float(((out[h].float() - ref[h]) ** 2).sum())
                    den += float((ref[h] ** 2).sum())
                err = (num / den) ** 0.5 if den > 0 else float("inf")
                r["check"] = {"rel_l2_err": err, "heads": heads}
                if not err < 2e-2:  # bf16 outputs; NaN fails this comparison
                    r["outcome"] = "wrong"
                    results[name] = r
                    continue
                r["timing"] = time_cuda(torch, run, warmup, reps, flush)
                r["outcome"] = "ok"
        except Exception as e:  # noqa: BLE001 - a backend that cannot run this shape
            r["outcome"] = "unsupported"
            r["message"] = str(e).splitlines()[0][:300] if str(e) else type(e).__name__
        results[name] = r
    ok = {n: r for n, r in results.items() if r.get("outcome") == "ok"}
    if not ok:
        emit({"outcome": "unsupported", "name": "torch_sdpa", "backends": results,
              "message": "no SDPA backend ran this shape correctly"})
    best = min(ok, key=lambda n: ok[n]["timing"]["median_ms"])
    emit({"outcome": "ok", "name": "torch_sdpa", "backend": best, "timing": ok[best]["timing"],
          "check": ok[best]["check"], "backends": results, "torch": torch.__version__,
          "dtype": str(dtype).replace("torch.", "")})


if __name__ == "__main__":
    main()
