"""Row softmax at the bandwidth limit: one block of NT threads per row, each thread holding up
to CH runs of VEC elements of its row in registers (16-byte thread_copy loads and stores), so
that rows up to NT * CH * VEC long are read once and written once. Longer rows re-read their
rest (from L2 while the row's block runs); a row whose length is not a multiple of VEC ends
element by element."""


@kernel(threads=NT)
def softmax_vec(X: Tensor[${dtype}, "R", "N"], Y: Tensor[${out_dtype}, "R", "N"],
                NT: const = 1024, VEC: const = 8, CH: const = 4):
    grid(R)
    r = block_id(0)
    t = thread_id()
    nv = N // VEC
    rest = min(CH * NT, nv) * VEC  # elements past the registers' share
    xs = local(${dtype}, (CH, VEC))
    m = -3.0e38
    for c in range(CH):
        i = c * NT + t
        if i < nv:
            thread_copy(X[r, i * VEC:i * VEC + VEC], xs[c])
            for v in range(VEC):
                m = max(m, f32(xs[c, v]))
    for j in range(rest + t, N, NT):
        m = max(m, f32(X[r, j]))
    m = block_reduce_max(m)
    s = 0.0
    for c in range(CH):
        if c * NT + t < nv:
            for v in range(VEC):
                s += exp(f32(xs[c, v]) - m)
    for j in range(rest + t, N, NT):
        s += exp(f32(X[r, j]) - m)
    inv = 1.0 / block_reduce_sum(s)
    ys = local(${out_dtype}, (VEC,))
    for c in range(CH):
        i = c * NT + t
        if i < nv:
            for v in range(VEC):
                ys[v] = exp(f32(xs[c, v]) - m) * inv
            thread_copy(ys, Y[r, i * VEC:i * VEC + VEC])
    for j in range(rest + t, N, NT):
        Y[r, j] = exp(f32(X[r, j]) - m) * inv
