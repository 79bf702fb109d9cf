# Row sums, one warp per row: the shuffle tree sits under a branch on the warp's row (the same
# for every lane of a warp), so every lane it names takes part.
# dims: R=64,N=1024
@kernel(threads=128)
def rowsum(X: Tensor[f32, "R", "N"], Y: Tensor[f32, "R"], ROWS: const = 4):
    grid(cdiv(R, ROWS))
    r = block_id(0) * ROWS + warp_id()
    if r < R:
        ss = 0.0
        for j in range(lane_id(), N, 32):
            ss += X[r, j]
        ss += shfl_xor(ss, 16)
        ss += shfl_xor(ss, 8)
        ss += shfl_xor(ss, 4)
        ss += shfl_xor(ss, 2)
        ss += shfl_xor(ss, 1)
        if lane_id() == 0:
            Y[r] = ss
