"""Residual add + RMSNorm in one pass, as a transformer block runs them: H = X + Res (the new
residual stream, written in the output dtype) and Y = H / sqrt(mean(H^2) + EPS) * W, normalizing
H as stored. One block of NT threads per row, up to CH runs of VEC elements per thread in
registers (16-byte thread_copy loads and stores): X and Res read once, H and Y written once.
Longer rows re-read their rest; a row whose length is not a multiple of VEC ends element by
element."""


@kernel(threads=NT)
def add_rmsnorm(X: Tensor[${dtype}, "R", "N"], Res: Tensor[${dtype}, "R", "N"],
                W: Tensor[${dtype}, "N"], H: Tensor[${out_dtype}, "R", "N"],
                Y: Tensor[${out_dtype}, "R", "N"], EPS: const = 1e-6, NT: const = 256,
                VEC: const = 8, CH: const = 4):
    grid(R)
    r = block_id(0)
    t = thread_id()
    nv = N // VEC
    rest = min(CH * NT, nv) * VEC  # elements past the registers' share
    xs = local(${dtype}, (VEC,))
    rs = local(${dtype}, (VEC,))
    hs = local(${out_dtype}, (CH, VEC))
    ss = 0.0
    for c in range(CH):
        i = c * NT + t
        if i < nv:
            thread_copy(X[r, i * VEC:i * VEC + VEC], xs)
            thread_copy(Res[r, i * VEC:i * VEC + VEC], rs)
            for v in range(VEC):
                hs[c, v] = f32(xs[v]) + f32(rs[v])
                ss += f32(hs[c, v]) * f32(hs[c, v])
            thread_copy(hs[c], H[r, i * VEC:i * VEC + VEC])
    for j in range(rest + t, N, NT):
        H[r, j] = f32(X[r, j]) + f32(Res[r, j])
        ss += f32(H[r, j]) * f32(H[r, j])
    scale = rsqrt(block_reduce_sum(ss) / f32(N) + EPS)
    ws = local(${dtype}, (VEC,))
    ys = local(${out_dtype}, (VEC,))
    for c in range(CH):
        i = c * NT + t
        if i < nv:
            thread_copy(W[i * VEC:i * VEC + VEC], ws)
            for v in range(VEC):
                ys[v] = f32(hs[c, v]) * scale * f32(ws[v])
            thread_copy(ys, Y[r, i * VEC:i * VEC + VEC])
    for j in range(rest + t, N, NT):
        Y[r, j] = f32(H[r, j]) * scale * f32(W[j])
