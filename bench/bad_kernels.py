"""Kernels that must fail on the GPU, for the worker's outcome mapping: an out-of-bounds store
4 GB past its buffer (`fault`) and a loop that never ends (`timeout`)."""


@kernel(threads=256)
def oob_store(X: Tensor[f32, "N"], Z: Tensor[f32, "N"]):
    grid(cdiv(N, 256))
    i = block_id(0) * 256 + thread_id()
    if i < N:
        Z[i + 1000000000] = X[i]


@kernel(threads=32)
def spin(X: Tensor[f32, "N"], Z: Tensor[f32, "N"]):
    grid(1)
    i = thread_id()
    k = 0
    while X[0] < 2.0:
        k += 1
        Z[i] = f32(k)
