# Each thread stages one element in shared memory and reads its neighbour's.
# dims: N=1000
@kernel(threads=128)
def shift(X: Tensor[f32, "N"], Y: Tensor[f32, "N"]):
    grid(cdiv(N, 128))
    t = thread_id()
    i = block_id(0) * 128 + t
    s = shared(f32, (128,))
    if i < N:
        s[t] = X[i]
    else:
        s[t] = 0.0
    barrier()
    if i < N:
        Y[i] = s[(t + 1) % 128]
