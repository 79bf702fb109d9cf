"""Z = op(X, Y) elementwise at the bandwidth limit: each thread moves U runs of VEC elements with
16-byte thread_copy loads and stores (2048 threads per SM keep 32 bytes each in flight); the end
of a length that is not a multiple of VEC goes element by element, by the first block."""


@kernel(threads=BLOCK)
def elementwise_vec(X: Tensor[${dtype}, "N"], Y: Tensor[${dtype}, "N"],
                    Z: Tensor[${out_dtype}, "N"], BLOCK: const = 256, VEC: const = 8,
                    U: const = 4):
    grid(cdiv(N, BLOCK * VEC * U))
    t = thread_id()
    xs = local(${dtype}, (VEC,))
    ys = local(${dtype}, (VEC,))
    zs = local(${out_dtype}, (VEC,))
    for u in range(U):
        i = ((block_id(0) * U + u) * BLOCK + t) * VEC
        if i + VEC <= N:
            thread_copy(X[i:i + VEC], xs)
            thread_copy(Y[i:i + VEC], ys)
            for v in range(VEC):
                a = f32(xs[v])
                b = f32(ys[v])
                zs[v] = ${OP}
            thread_copy(zs, Z[i:i + VEC])
    if block_id(0) == 0:  # the end past the last whole run
        for j in range((N // VEC) * VEC + t, N, BLOCK):
            a = f32(X[j])
            b = f32(Y[j])
            Z[j] = ${OP}
