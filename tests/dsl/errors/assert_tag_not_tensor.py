# expect: 6:32: error: a data tag must name a tensor parameter: lambda i, j: A(row, col)
@kernel(threads=64)
def k(A: Tensor[f32, "M", "K"], B: Tensor[bf16, "K", "N"], BM: const = 32):
    grid(cdiv(M, BM))
    s = shared(f32, (32, 32))
    assert_tag(s, lambda i, j: s(i, j))
