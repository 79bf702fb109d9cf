# verifier-bug: threads past the end do not fill their slot, and their neighbour reads it
# seeded into tests/verifier/clean/shift_shared.py
# expect: uninitialized_read line 16
# cex: uninitialized
# dims: N=1000
@kernel(threads=128)
def shift(X: Tensor[f32, "N"], Y: Tensor[f32, "N"]):
    grid(cdiv(N, 128))
    t = thread_id()
    i = block_id(0) * 128 + t
    s = shared(f32, (128,))
    if i < N:
        s[t] = X[i]
    barrier()
    if i < N:
        Y[i] = s[(t + 1) % 128]
