# expect: 4:5: error: a kernel must start with grid(...)
@kernel(threads=64)
def k(A: Tensor[f32, "M", "K"]):
    x = 1
    grid(M)
