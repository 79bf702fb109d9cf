# Chunked row sums: each thread walks the row in steps of the block size, and every step ends
# in a block-wide reduction of that chunk (a barrier inside a thread-strided loop, which every
# thread runs equally often because the block size divides the row length).
# dims: R=64,N=4096,C=16
@kernel(threads=256)
def chunk_sums(X: Tensor[f32, "R", "N"], Y: Tensor[f32, "R", "C"], NT: const = 256):
    grid(R)
    r = block_id(0)
    for j in range(thread_id(), N, NT):
        s = block_reduce_sum(X[r, j])
        if thread_id() == 0:
            Y[r, j // NT] = s
