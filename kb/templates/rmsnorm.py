"""RMSNorm over the last dim, f32 math: one warp per row (warp shuffles), ROWS rows per block."""


@kernel(threads=ROWS * 32)
def rmsnorm(X: Tensor[${dtype}, "R", "N"], W: Tensor[${dtype}, "N"], Y: Tensor[f32, "R", "N"],
            EPS: const = 1e-6, ROWS: const = 4):
    grid(cdiv(R, ROWS))
    r = block_id(0) * ROWS + warp_id()
    if r < R:
        ss = 0.0
        for j in range(lane_id(), N, 32):
            ss += f32(X[r, j]) * f32(X[r, j])
        ss = warp_reduce_sum(ss)
        scale = rsqrt(ss / f32(N) + EPS)
        for j in range(lane_id(), N, 32):
            Y[r, j] = f32(X[r, j]) * scale * f32(W[j])
