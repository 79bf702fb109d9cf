"""LayerNorm over the last dim at the bandwidth limit: one block of NT threads per row, each
thread holding up to CH runs of VEC elements of its row in registers (16-byte thread_copy loads
and stores): X read once, Y written once. Longer rows re-read their rest; a row whose length is
not a multiple of VEC ends element by element."""


@kernel(threads=NT)
def layernorm_vec(X: Tensor[${dtype}, "R", "N"], W: Tensor[${dtype}, "N"],
                  Bias: Tensor[${dtype}, "N"], Y: Tensor[${out_dtype}, "R", "N"],
                  EPS: const = 1e-5, NT: const = 256, VEC: const = 8, CH: const = 4):
    grid(R)
    r = block_id(0)
    t = thread_id()
    nv = N // VEC
    rest = min(CH * NT, nv) * VEC  # elements past the registers' share
    xs = local(${dtype}, (CH, VEC))
    s = 0.0
    for c in range(CH):
        i = c * NT + t
        if i < nv:
            thread_copy(X[r, i * VEC:i * VEC + VEC], xs[c])
            for v in range(VEC):
                s += f32(xs[c, v])
    for j in range(rest + t, N, NT):
        s += f32(X[r, j])
    mean = block_reduce_sum(s) / f32(N)
    q = 0.0
    for c in range(CH):
        if c * NT + t < nv:
            for v in range(VEC):
                q += (f32(xs[c, v]) - mean) * (f32(xs[c, v]) - mean)
    for j in range(rest + t, N, NT):
        q += (f32(X[r, j]) - mean) * (f32(X[r, j]) - mean)
    rstd = rsqrt(block_reduce_sum(q) / f32(N) + EPS)
    ws = local(${dtype}, (VEC,))
    bs = local(${dtype}, (VEC,))
    ys = local(${out_dtype}, (VEC,))
    for c in range(CH):
        i = c * NT + t
        if i < nv:
            thread_copy(W[i * VEC:i * VEC + VEC], ws)
            thread_copy(Bias[i * VEC:i * VEC + VEC], bs)
            for v in range(VEC):
                ys[v] = (f32(xs[c, v]) - mean) * rstd * f32(ws[v]) + f32(bs[v])
            thread_copy(ys, Y[r, i * VEC:i * VEC + VEC])
    for j in range(rest + t, N, NT):
        Y[r, j] = (f32(X[r, j]) - mean) * rstd * f32(W[j]) + f32(Bias[j])
