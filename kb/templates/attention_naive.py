"""Attention forward, one query row per thread, no staging: the baseline. Query head h reads
key/value head h // G (G = H / HKV; 1 without GQA)."""


@kernel(threads=64)
def attention_naive(Q: Tensor[${dtype}, "BH", "S", HD], K: Tensor[${dtype}, "BHKV", "S", HD],
                    V: Tensor[${dtype}, "BHKV", "S", HD], O: Tensor[f32, "BH", "S", HD],
                    HD: const = 64, G: const = 1, CAUSAL: const = False):
    grid(cdiv(S, 64), BH)
    h = block_id(1)
    hk = h // G
    i = block_id(0) * 64 + thread_id()
    if i < S:
        scale = rsqrt(f32(HD))
        m = -3.0e38
        l = 0.0
        acc = local(f32, (HD,))
        for d in range(HD):
            acc[d] = 0.0
        for j in range(S):
            if not CAUSAL or j <= i:
                s = 0.0
                for d in range(HD):
                    s += f32(Q[h, i, d]) * f32(K[hk, j, d])
                s = s * scale
                m_new = max(m, s)
                corr = exp(m - m_new)
                p = exp(s - m_new)
                l = l * corr + p
                for d in range(HD):
                    acc[d] = acc[d] * corr + p * f32(V[hk, j, d])
                m = m_new
        for d in range(HD):
            O[h, i, d] = acc[d] / l
