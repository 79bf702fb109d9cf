# verifier-bug: a local array indexed one past its end (a loop bound off by one)
# written for the verifier's corpus
# expect: oob line 12
# cex: out-of-bounds access to local array at (4)
# dims: N=1024
@kernel(threads=128)
def k(X: Tensor[f32, "N"], Y: Tensor[f32, "N"]):
    grid(cdiv(N, 128))
    i = block_id(0) * 128 + thread_id()
    a = local(f32, (4,))
    for q in range(5):
        a[q] = X[i]
    Y[i] = a[0]
