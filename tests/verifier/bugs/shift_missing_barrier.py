# verifier-bug: a scalar shared store read by the neighbour thread with no barrier between
# seeded into tests/verifier/clean/shift_shared.py
# expect: shared_race line 17
# cex: racing write by thread
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
    if i < N:
        Y[i] = s[(t + 1) % 128]
