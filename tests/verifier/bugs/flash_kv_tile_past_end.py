# verifier-bug: the K/V loop runs one tile past the sequence
# seeded into examples/flash_attention.py
# expect: oob line 32
# cex: out-of-bounds access to tensor K
# dims: BH=4,S=256
"""Flash-attention forward (online softmax), one query row per thread. K/V tiles are staged in
shared memory; each thread keeps its running max, denominator and output row in registers."""


@kernel(threads=64)
def flash_attention(Q: Tensor[bf16, "BH", "S", HD], K: Tensor[bf16, "BH", "S", HD],
                    V: Tensor[bf16, "BH", "S", HD], O: Tensor[f32, "BH", "S", HD],
                    HD: const = 64, BQ: const = 64, BKV: const = 32, CAUSAL: const = False):
    grid(cdiv(S, BQ), BH)
    h = block_id(1)
    i = block_id(0) * BQ + thread_id()
    scale = rsqrt(f32(HD))
    q = local(f32, (HD,))
    acc = local(f32, (HD,))
    for d in range(HD):
        q[d] = 0.0
        acc[d] = 0.0
    if i < S:
        for d in range(HD):
            q[d] = f32(Q[h, i, d]) * scale
    sK = shared(bf16, (BKV, HD))
    sV = shared(bf16, (BKV, HD))
    m = -3.0e38
    l = 0.0
    tl = thread_layout((16, 4), vec=HD // 4)
    for t in range(S // BKV + 1):
        copy(K[h].tile((BKV, HD), (t, 0)), sK, tl)
        copy(V[h].tile((BKV, HD), (t, 0)), sV, tl)
        barrier()
        if i < S:
            for jj in range(BKV):
                j = t * BKV + jj
                if not CAUSAL or j <= i:
                    s = 0.0
                    for d in range(HD):
                        s += q[d] * f32(sK[jj, d])
                    m_new = max(m, s)
                    corr = exp(m - m_new)
                    p = exp(s - m_new)
                    l = l * corr + p
                    for d in range(HD):
                        acc[d] = acc[d] * corr + p * f32(sV[jj, d])
                    m = m_new
        barrier()
    if i < S:
        for d in range(HD):
            O[h, i, d] = acc[d] / l
