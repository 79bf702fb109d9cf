# verifier-bug: a shuffle under a lane-dependent branch: the upper half-warp's lanes never provide the values the lower half reads
# written for the verifier's corpus
# expect: warp_divergence line 14
# cex: does not reach it
# dims: R=64,N=1024
@kernel(threads=128)
def rowsum(X: Tensor[f32, "R", "N"], Y: Tensor[f32, "R"], ROWS: const = 4):
    grid(cdiv(R, ROWS))
    r = block_id(0) * ROWS + warp_id()
    ss = 0.0
    for j in range(lane_id(), N, 32):
        ss += X[r, j]
    if lane_id() < 16:
        ss += shfl_xor(ss, 16)
    if lane_id() == 0:
        Y[r] = ss
