# verifier-bug: a block reduction (an implied barrier) under a thread-dependent branch
# seeded into examples/softmax.py
# expect: barrier_divergence line 16
# cex: does not reach it
"""Row softmax: Y[r, :] = exp(X[r, :] - max) / sum, one block per row."""


@kernel(threads=128)
def softmax(X: Tensor[f32, "R", "N"], Y: Tensor[f32, "R", "N"], NT: const = 128):
    grid(R)
    r = block_id(0)
    m = -3.0e38
    for j in range(thread_id(), N, NT):
        m = max(m, X[r, j])
    if thread_id() < 64:
        m = block_reduce_max(m)
    s = 0.0
    for j in range(thread_id(), N, NT):
        s += exp(X[r, j] - m)
    s = block_reduce_sum(s)
    inv = 1.0 / s
    for j in range(thread_id(), N, NT):
        Y[r, j] = exp(X[r, j] - m) * inv
