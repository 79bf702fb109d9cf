# expect: 6:19: error: the lambda takes 1 parameters, the value has 2 dims
@kernel(threads=64)
def k(A: Tensor[f32, "M", "K"], B: Tensor[bf16, "K", "N"], BM: const = 32):
    grid(cdiv(M, BM))
    s = shared(f32, (32, 32))
    assert_tag(s, lambda i: A(i, 0))
