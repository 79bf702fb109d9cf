# verifier-bug: the tail block has no i < N guard
# seeded into examples/vector_add.py
# expect: oob line 12
# cex: out-of-bounds access to tensor
"""Z = X + Y, one element per thread."""


@kernel(threads=256)
def vector_add(X: Tensor[f32, "N"], Y: Tensor[f32, "N"], Z: Tensor[f32, "N"], BLOCK: const = 256):
    grid(cdiv(N, BLOCK))
    i = block_id(0) * BLOCK + thread_id()
    Z[i] = X[i] + Y[i]
