# expect: 6:5: error: copy_async() copies global to shared, found shared to global
@kernel(threads=64)
def k(A: Tensor[f32, "M", "K"], B: Tensor[bf16, "K", "N"], BM: const = 32):
    grid(cdiv(M, BM))
    s = shared(f32, (32, 32))
    copy_async(s, A.tile((32, 32), (0, 0)), thread_layout((8, 8)))
