# expect: 4:10: error: grid() cannot call 'thread_id'
@kernel(threads=64)
def k(A: Tensor[f32, "M", "K"]):
    grid(thread_id())
