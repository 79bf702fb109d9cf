"""Z = X + Y, one element per thread."""


@kernel(threads=256)
def vector_add(X: Tensor[f32, "N"], Y: Tensor[f32, "N"], Z: Tensor[f32, "N"], BLOCK: const = 256):
    grid(cdiv(N, BLOCK))
    i = block_id(0) * BLOCK + thread_id()
    if i < N:
        Z[i] = X[i] + Y[i]
