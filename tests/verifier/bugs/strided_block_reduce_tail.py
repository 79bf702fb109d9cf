# verifier-bug: an off-by-one loop bound: the block's last thread runs one chunk reduction fewer
# seeded into tests/verifier/clean/strided_block_reduce.py
# expect: barrier_divergence line 11
# cex: does not reach it
# dims: R=64,N=4096,C=16
@kernel(threads=256)
def chunk_sums(X: Tensor[f32, "R", "N"], Y: Tensor[f32, "R", "C"], NT: const = 256):
    grid(R)
    r = block_id(0)
    for j in range(thread_id(), N - 1, NT):
        s = block_reduce_sum(X[r, j])
        if thread_id() == 0:
            Y[r, j // NT] = s
