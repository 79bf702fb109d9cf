"""argus_helper_timing: what the runner's PyTorch baseline helpers (argus-sdpa-baseline.py,
argus-moe-baseline.py, argus-torch-baseline.py) share: one-JSON-object replies, importing PyTorch
with a CUDA device, and CUDA-event timing with an L2 flush.

It sits beside them (installed as bin/argus_helper_timing.py; every bundle that carries a helper
carries it too) and is imported from the helper's own directory.
"""
import json
import statistics
import sys


def emit(obj):
    """Prints the helper's one JSON reply and exits 0 (whatever the outcome)."""
    print(json.dumps(obj))
    sys.exit(0)


def cuda_torch():
    """PyTorch with a CUDA device, or the helper's "unsupported" reply (and exit)."""
    try:
        import torch
    except Exception as e:  # noqa: BLE001 - any import failure means no baseline
        emit({"outcome": "unsupported", "message": f"PyTorch not importable: {e}"})
    if not torch.cuda.is_available():
        emit({"outcome": "unsupported", "message": "PyTorch sees no CUDA device"})
    return torch


def time_cuda(torch, run, warmup, reps, flush):
    """Median-of-reps timing of run() between CUDA events; `flush` (a CUDA tensor) is zeroed
    before each rep, outside the events, to flush the L2. Returns the runner's timing dict."""
    for _ in range(warmup):
        run()
    times = []
    for _ in range(reps):
        flush.zero_()
        a = torch.cuda.Event(enable_timing=True)
        b = torch.cuda.Event(enable_timing=True)
        a.record()
        run()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b))
    times.sort()
    return {"reps": reps, "median_ms": statistics.median(times), "min_ms": times[0],
            "max_ms": times[-1], "p10_ms": times[len(times) // 10],
            "p90_ms": times[(len(times) * 9) // 10]}
