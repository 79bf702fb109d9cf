"""Row softmax: Y[r, :] = exp(X[r, :] - max) / sum, one block of NT threads per row."""


@kernel(threads=NT)
def softmax(X: Tensor[${dtype}, "R", "N"], Y: Tensor[f32, "R", "N"], NT: const = 128):
    grid(R)
    r = block_id(0)
    m = -3.0e38
    for j in range(thread_id(), N, NT):
        m = max(m, f32(X[r, j]))
    m = block_reduce_max(m)
    s = 0.0
    for j in range(thread_id(), N, NT):
        s += exp(f32(X[r, j]) - m)
    s = block_reduce_sum(s)
    inv = 1.0 / s
    for j in range(thread_id(), N, NT):
        Y[r, j] = exp(f32(X[r, j]) - m) * inv
