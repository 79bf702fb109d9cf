# expect: 6:11: error: slice of 40 elements does not fit dim 0 of extent 32
@kernel(threads=32)
def k(X: Tensor[f32, "N"]):
    grid(1)
    s = shared(f32, (32,))
    t = s[thread_id():thread_id() + 40]
