"""Y[r] = sum_j X[r, j] at the bandwidth limit: one block of NT threads per row, U runs of VEC
elements per thread in flight (16-byte thread_copy loads), f32 sums; the end of a row whose
length is not a multiple of VEC goes element by element."""


@kernel(threads=NT)
def row_sum_vec(X: Tensor[${dtype}, "R", "N"], Y: Tensor[${out_dtype}, "R"], NT: const = 256,
                VEC: const = 8, U: const = 4):
    grid(R)
    r = block_id(0)
    t = thread_id()
    nv = N // VEC
    xs = local(${dtype}, (U, VEC))
    s = 0.0
    for i0 in range(0, nv, NT * U):
        for u in range(U):
            i = i0 + u * NT + t
            if i < nv:
                thread_copy(X[r, i * VEC:i * VEC + VEC], xs[u])
        for u in range(U):
            if i0 + u * NT + t < nv:
                for v in range(VEC):
                    s += f32(xs[u, v])
    for j in range(nv * VEC + t, N, NT):
        s += f32(X[r, j])
    s = block_reduce_sum(s)
    if t == 0:
        Y[r] = s
