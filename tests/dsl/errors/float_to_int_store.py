# expect: 5:22: error: stored value has type f32, expected i32
@kernel(threads=64)
def k(A: Tensor[i32, "N"]):
    grid(1)
    A[thread_id()] = 0.5
