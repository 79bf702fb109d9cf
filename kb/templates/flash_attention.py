"""Flash-attention forward (online softmax), one query row per thread. K/V tiles of BKV rows are
staged in shared memory; query head h reads key/value head h // G (GQA)."""


@kernel(threads=BQ)
def flash_attention(Q: Tensor[${dtype}, "BH", "S", HD], K: Tensor[${dtype}, "BHKV", "S", HD],
                    V: Tensor[${dtype}, "BHKV", "S", HD], O: Tensor[f32, "BH", "S", HD],
                    HD: const = 64, G: const = 1, BQ: const = 64, BKV: const = 32,
                    CAUSAL: const = False, CC: const = 4):
    grid(cdiv(S, BQ), BH)
    h = block_id(1)
    hk = h // G
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
    sK = shared(${dtype}, (BKV, HD))
    sV = shared(${dtype}, (BKV, HD))
    m = -3.0e38
    l = 0.0
    # CC threads copy one row, HD // CC elements each (the KB picks 8-element,
    # 16-byte vectors from D = 32 up; vec is at most 16).
    tl = thread_layout((BQ // CC, CC), vec=HD // CC)
    for t in range(S // BKV):
        copy(K[hk].tile((BKV, HD), (t, 0)), sK, tl)
        copy(V[hk].tile((BKV, HD), (t, 0)), sV, tl)
        barrier()
        assert_tag(sK, lambda r, d: K(hk, t * BKV + r, d))
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
