"""LayerNorm over the last dim, f32 math: one warp per row, ROWS rows per block."""


@kernel(threads=ROWS * 32)
def layernorm(X: Tensor[${dtype}, "R", "N"], W: Tensor[${dtype}, "N"], Bias: Tensor[${dtype}, "N"],
              Y: Tensor[f32, "R", "N"], EPS: const = 1e-5, ROWS: const = 4):
    grid(cdiv(R, ROWS))
    r = block_id(0) * ROWS + warp_id()
    if r < R:
        s = 0.0
        for j in range(lane_id(), N, 32):
            s += f32(X[r, j])
        mean = warp_reduce_sum(s) / f32(N)
        v = 0.0
        for j in range(lane_id(), N, 32):
            dlt = f32(X[r, j]) - mean
            v += dlt * dlt
        rstd = rsqrt(warp_reduce_sum(v) / f32(N) + EPS)
        for j in range(lane_id(), N, 32):
            Y[r, j] = (f32(X[r, j]) - mean) * rstd * f32(W[j]) + f32(Bias[j])
