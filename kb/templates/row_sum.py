"""Y[r] = sum_j X[r, j], one block of NT threads per row."""


@kernel(threads=NT)
def row_sum(X: Tensor[${dtype}, "R", "N"], Y: Tensor[f32, "R"], NT: const = 128):
    grid(R)
    r = block_id(0)
    s = 0.0
    for j in range(thread_id(), N, NT):
        s += f32(X[r, j])
    s = block_reduce_sum(s)
    if thread_id() == 0:
        Y[r] = s
