"""Z = op(X, Y) elementwise; each thread handles VEC elements BLOCK apart."""


@kernel(threads=BLOCK)
def elementwise(X: Tensor[${dtype}, "N"], Y: Tensor[${dtype}, "N"], Z: Tensor[${dtype}, "N"],
                BLOCK: const = 256, VEC: const = 1):
    grid(cdiv(N, BLOCK * VEC))
    base = block_id(0) * BLOCK * VEC + thread_id()
    for v in range(VEC):
        i = base + v * BLOCK
        if i < N:
            a = f32(X[i])
            b = f32(Y[i])
            Z[i] = ${dtype}(${OP})
