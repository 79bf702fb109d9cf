# expect: 6:5: error: copy shapes differ: source global f32[32,32], destination shared f32[32,16]
@kernel(threads=64)
def k(A: Tensor[f32, "M", "K"], B: Tensor[bf16, "K", "N"], BM: const = 32):
    grid(cdiv(M, BM))
    s = shared(f32, (32, 16))
    copy(A.tile((32, 32), (0, 0)), s, thread_layout((8, 8)))
