# expect: 5:31: error: a named barrier counts whole warps: threads must be a multiple of 32 in 32..256, got 100
@kernel(threads=256, arch="sm_90a")
def k(X: Tensor[f32, "N"]):
    grid(1)
    named_barrier_sync(4 + 1, 100)
