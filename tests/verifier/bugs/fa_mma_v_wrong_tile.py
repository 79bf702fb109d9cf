# verifier-bug: the prefetch refills V with the current tile: P's columns (keys of tile t) meet V rows of tile t - 1
# seeded into examples/flash_attention_mma.py
# expect: mma_k_mismatch line 69
# cex: A column k=
# cex: (K dim 1 of K(
# cex: B row k=
# cex: (V dim 1 of V(
# cex: written at
# cex: in iteration t=
# cex: to_operand
# dims: BH=4,S=256
"""Flash-attention forward on tensor cores (FA2 style). One warp per 16 query rows; S = Q K^T and
O += P V on mma.sync m16n8k16 (bf16 in, f32 accumulate); the online softmax runs on the
accumulator fragments in registers (row_max / row_sum are a quad shuffle), and P goes from the
S accumulator straight into the A operand of the P V product (to_operand: no shared memory round
trip). K/V tiles are double-buffered in shared memory by cp.async. Layout [BH, S, HD]; S must be
a multiple of BQ and BKV (and BQ of BKV when CAUSAL)."""


@kernel(threads=BQ // 16 * 32, arch="sm_90a")
def flash_attention_mma(Q: Tensor[bf16, "BH", "S", HD], K: Tensor[bf16, "BH", "S", HD],
                        V: Tensor[bf16, "BH", "S", HD], O: Tensor[f32, "BH", "S", HD],
                        HD: const = 128, BQ: const = 64, BKV: const = 64, KC: const = 32,
                        CAUSAL: const = False):
    grid(cdiv(S, BQ), BH)
    qb, h = block_id(0), block_id(1)
    sQ = shared(bf16, (BQ, HD), swizzle=Swizzle(3, 3, 3 + HD // 128))
    sK = shared(bf16, (2, BKV, HD), swizzle=Swizzle(3, 3, 3 + HD // 128))
    sV = shared(bf16, (2, BKV, HD), swizzle=Swizzle(3, 3, 3 + HD // 128))
    copier = thread_layout((BQ // 16 * 4, 8), vec=8)
    o = fragment(f32, (BQ, HD), mma="mma_sync_m16n8k16_bf16", warps=(BQ // 16, 1))
    # log2(e) / sqrt(HD): the softmax runs in base 2 (exp2 is one SFU instruction).
    scale = rsqrt(f32(HD)) * 1.4426950408889634
    nkv = S // BKV
    if CAUSAL:
        nkv = ((qb + 1) * BQ) // BKV
    cp_async(Q[h].tile((BQ, HD), (qb, 0)), sQ, copier)
    cp_async(K[h].tile((BKV, HD), (0, 0)), sK[0], copier)
    cp_async(V[h].tile((BKV, HD), (0, 0)), sV[0], copier)
    commit_group()
    m_i = row_fill(o, -1.0e30)
    l_i = row_fill(o, 0.0)
    for t in range(nkv):
        buf = t % 2
        # Prefetch the next tile (the last iteration reloads its own tile into the idle
        # buffer: every iteration commits one full group).
        nt = min(t + 1, nkv - 1)
        cp_async(K[h].tile((BKV, HD), (nt, 0)), sK[1 - buf], copier)
        cp_async(V[h].tile((BKV, HD), (t, 0)), sV[1 - buf], copier)
        commit_group()
        wait_group(1)
        barrier()
        s = fragment(f32, (BQ, BKV), mma="mma_sync_m16n8k16_bf16", warps=(BQ // 16, 1))
        for kc in range(HD // KC):
            a = ldmatrix(sQ.tile((BQ, KC), (0, kc)), s, operand="A")
            b = ldmatrix(sK[buf].T.tile((KC, BKV), (kc, 0)), s, operand="B")
            mma(s, a, b)
        s = s * scale
        if CAUSAL:
            s = select(col_index(s) + t * BKV > row_index(s) + qb * BQ, -1.0e30, s)
        m_new = max(m_i, row_max(s))
        p = exp2(s - m_new)
        corr = exp2(m_i - m_new)
        l_i = l_i * corr + row_sum(p)
        o = o * corr
        m_i = m_new
        pa = to_operand(p, o)
        vb = ldmatrix(sV[buf], o, operand="B")
        mma(o, pa, vb)
        barrier()
    store(o / l_i, O[h].tile((BQ, HD), (qb, 0)))
