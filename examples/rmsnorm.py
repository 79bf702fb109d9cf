"""RMSNorm over the last dim, bf16 in and out, f32 math: one warp per row (warp shuffles)."""


@device
def square(x: f32) -> f32:
    return x * x


@kernel(threads=128)
def rmsnorm(X: Tensor[bf16, "R", "N"], W: Tensor[bf16, "N"], Y: Tensor[bf16, "R", "N"],
            EPS: const = 1e-6, ROWS: const = 4):
    grid(cdiv(R, ROWS))
    r = block_id(0) * ROWS + warp_id()
    if r < R:
        ss = 0.0
        for j in range(lane_id(), N, 32):
            ss += square(f32(X[r, j]))
        off = 16
        while off > 0:
            ss += shfl_xor(ss, off)
            off = off // 2
        scale = rsqrt(ss / f32(N) + EPS)
        for j in range(lane_id(), N, 32):
            Y[r, j] = bf16(f32(X[r, j]) * scale * f32(W[j]))
