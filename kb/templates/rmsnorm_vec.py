"""RMSNorm over the last dim at the bandwidth limit: one block of NT threads per row, each thread
holding up to CH runs of VEC elements of its row in registers (16-byte thread_copy loads and
stores), so that X is read once and Y written once. Longer rows re-read their rest; a row whose
length is not a multiple of VEC ends element by element."""


@kernel(threads=NT)
def rmsnorm_vec(X: Tensor[${dtype}, "R", "N"], W: Tensor[${dtype}, "N"],
                Y: Tensor[${out_dtype}, "R", "N"], EPS: const = 1e-6, NT: const = 256,
                VEC: const = 8, CH: const = 4):
    grid(R)
    r = block_id(0)
    t = thread_id()
    nv = N // VEC
    rest = min(CH * NT, nv) * VEC  # elements past the registers' share
    xs = local(${dtype}, (CH, VEC))
    ss = 0.0
    for c in range(CH):
        i = c * NT + t
        if i < nv:
            thread_copy(X[r, i * VEC:i * VEC + VEC], xs[c])
            for v in range(VEC):
                ss += f32(xs[c, v]) * f32(xs[c, v])
    for j in range(rest + t, N, NT):
        ss += f32(X[r, j]) * f32(X[r, j])
    scale = rsqrt(block_reduce_sum(ss) / f32(N) + EPS)
    ws = local(${dtype}, (VEC,))
    ys = local(${out_dtype}, (VEC,))
    for c in range(CH):
        i = c * NT + t
        if i < nv:
            thread_copy(W[i * VEC:i * VEC + VEC], ws)
            for v in range(VEC):
                ys[v] = f32(xs[c, v]) * scale * f32(ws[v])
            thread_copy(ys, Y[r, i * VEC:i * VEC + VEC])
    for j in range(rest + t, N, NT):
        Y[r, j] = f32(X[r, j]) * scale * f32(W[j])
