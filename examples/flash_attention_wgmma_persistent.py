"""Flash-attention forward on Hopper, flash_attention_wgmma_pingpong (flash_attention_wgmma.py)
on a persistent grid: SMS blocks take the (query block, head) tiles round-robin, tile
tt = block_id(0) + i * grid_dim(0) being query block NQ - 1 - tt % NQ of head tt // NQ (the
blocks at work together share a few heads' K/V in L2; longest causal rows first). The K/V
mbarrier rings and the consumers' named-barrier turn order run on across tiles; Q is reloaded per
tile once both consumer groups released it (qempty), and the producer loads the next tile's K(0)
and Q while the consumers finish the last P V and store O. Same tensors and limits as
flash_attention_wgmma.py. The verifier reports it unknown (mbarrier phases counted across the
tile loop, it = the sum of the earlier tiles' nkv)."""


@kernel(threads=384, arch="sm_90a")
def flash_attention_wgmma_persistent(Q: Tensor[bf16, "RQ", HD], K: Tensor[bf16, "RKV", HD],
                                     V: Tensor[bf16, "RKV", HD], O: Tensor[f32, "BH", "S", HD],
                                     HD: const = 128, G: const = 1, BM: const = 128,
                                     BN: const = 128, STAGES: const = 2, CAUSAL: const = False,
                                     SMS: const = 132):
    grid(min(S // BM * BH, SMS))
    NQ = S // BM
    # Tile tt = block_id(0) + i * grid_dim(0) is query block NQ - 1 - tt % NQ of head tt // NQ:
    # the blocks at work together share a few heads' K/V in L2, longest causal rows first.
    ntiles = cdiv(NQ * BH - block_id(0), grid_dim(0))
    KD = HD // 64
    sQ = shared(bf16, (KD, BM, 64), swizzle=Swizzle(3, 3, 3))
    sK = shared(bf16, (STAGES, KD, BN, 64), swizzle=Swizzle(3, 3, 3))
    sV = shared(bf16, (STAGES, KD, BN, 64), swizzle=Swizzle(3, 3, 3))
    # Q is reloaded per tile once both consumer groups issued its last S (qempty); the K and V
    # rings run on across tiles (their phases count every K/V tile of the block: it + t).
    qfull = mbarrier(1)
    qempty = mbarrier(1, arrivals=2)
    kfull = mbarrier(STAGES)
    kempty = mbarrier(STAGES, arrivals=2)
    vfull = mbarrier(STAGES)
    vempty = mbarrier(STAGES, arrivals=2)
    if warpgroup_id() == 0:
        setmaxnreg(24)
        if thread_id() == 0:
            it = 0
            for i in range(ntiles):
                tt = block_id(0) + i * grid_dim(0)
                qb, h = NQ - 1 - tt % NQ, tt // NQ
                hk = h // G
                nkv = S // BN
                if CAUSAL:
                    nkv = cdiv((qb + 1) * BM, BN)
                for t in range(nkv):
                    s = (it + t) % STAGES
                    mbarrier_wait(kempty[s], ((it + t) // STAGES + 1) % 2)
                    mbarrier_arrive_expect_tx(kfull[s], BN * HD * 2)
                    for c in range(KD):
                        tma_load(K.tile((BN, 64), (hk * (S // BN) + t, c)), sK[s, c], kfull[s])
                    if t == 0:
                        # K(0) of this tile is on its way while the previous one finishes.
                        mbarrier_wait(qempty[0], (i + 1) % 2)
                        mbarrier_arrive_expect_tx(qfull[0], BM * HD * 2)
                        for c in range(KD):
                            tma_load(Q.tile((BM, 64), (h * NQ + qb, c)), sQ[c], qfull[0])
                    mbarrier_wait(vempty[s], ((it + t) // STAGES + 1) % 2)
                    mbarrier_arrive_expect_tx(vfull[s], BN * HD * 2)
                    for c in range(KD):
                        tma_load(V.tile((BN, 64), (hk * (S // BN) + t, c)), sV[s, c], vfull[s])
                it = it + nkv
    else:
        setmaxnreg(240)
        scale = rsqrt(f32(HD)) * 1.4426950408889634
        leader = thread_id() % 128 == 0
        # Ping-pong as in flash_attention_wgmma_pingpong: both groups take nkv + 1 turns per
        # tile, so the turn order runs on across tiles from the one arrival here.
        mine = 3 + warpgroup_id()
        other = 6 - warpgroup_id()
        if warpgroup_id() == 2:
            named_barrier_arrive(4, 256)
        it = 0
        for i in range(ntiles):
            tt = block_id(0) + i * grid_dim(0)
            qb, h = NQ - 1 - tt % NQ, tt // NQ
            hk = h // G
            nkv = S // BN
            if CAUSAL:
                nkv = cdiv((qb + 1) * BM, BN)
            o = fragment(f32, (BM, HD), mma="wgmma_bf16", warpgroups=(2, 1), first_warpgroup=1)
            mbarrier_wait(qfull[0], i % 2)
            s0 = it % STAGES
            mbarrier_wait(kfull[s0], (it // STAGES) % 2)
            sc = fragment(f32, (BM, BN), mma="wgmma_bf16", warpgroups=(2, 1), first_warpgroup=1)
            named_barrier_sync(mine, 256)
            wgmma(sc, wgmma_operand(sQ[0], sc, operand="A"),
                  wgmma_operand(sK[s0, 0].T, sc, operand="B"))
            if KD > 1:
                wgmma(sc, wgmma_operand(sQ[1], sc, operand="A"),
                      wgmma_operand(sK[s0, 1].T, sc, operand="B"))
            wgmma_commit()
            named_barrier_arrive(other, 256)
            wgmma_wait(0)
            if leader:
                mbarrier_arrive(kempty[s0])
            if CAUSAL:
                if BN > qb * BM:
                    sc = select(col_index(sc) > row_index(sc) + qb * BM, -1.0e30, sc)
            m_i = row_max(sc)
            p = exp2(fma(sc, scale, m_i * -scale))
            l_i = row_sum(p)
            pa = to_operand(p, o)
            corr = row_fill(sc, 1.0)
            for t in range(1, nkv):
                s = (it + t) % STAGES
                sp = (it + t - 1) % STAGES
                mbarrier_wait(kfull[s], ((it + t) // STAGES) % 2)
                sc = fragment(f32, (BM, BN), mma="wgmma_bf16", warpgroups=(2, 1),
                              first_warpgroup=1)
                named_barrier_sync(mine, 256)
                a0 = wgmma_operand(sQ[0], sc, operand="A")
                b0 = wgmma_operand(sK[s, 0].T, sc, operand="B")
                assert_tag(a0, lambda r, j: Q(h * S + qb * BM + r, j))
                assert_tag(b0, lambda r, j: K(hk * S + t * BN + j, r))
                wgmma(sc, a0, b0)
                if KD > 1:
                    a1 = wgmma_operand(sQ[1], sc, operand="A")
                    b1 = wgmma_operand(sK[s, 1].T, sc, operand="B")
                    assert_tag(a1, lambda r, j: Q(h * S + qb * BM + r, 64 + j))
                    assert_tag(b1, lambda r, j: K(hk * S + t * BN + j, 64 + r))
                    wgmma(sc, a1, b1)
                wgmma_commit()
                o = o * corr
                mbarrier_wait(vfull[sp], ((it + t - 1) // STAGES) % 2)
                vb = wgmma_operand(sV[sp], o, operand="B")
                assert_tag(vb, lambda r, j: V(hk * S + (t - 1) * BN + r, j))
                wgmma(o, pa, vb)
                wgmma_commit()
                named_barrier_arrive(other, 256)
                wgmma_wait(1)
                if leader:
                    mbarrier_arrive(kempty[s])
                if CAUSAL:
                    if (t + 1) * BN > qb * BM:
                        sc = select(col_index(sc) + t * BN > row_index(sc) + qb * BM, -1.0e30,
                                    sc)
                m_new = max(m_i, row_max(sc))
                p = exp2(fma(sc, scale, m_new * -scale))
                corr = exp2((m_i - m_new) * scale)
                l_i = l_i * corr + row_sum(p)
                m_i = m_new
                wgmma_wait(0)
                if leader:
                    mbarrier_arrive(vempty[sp])
                pa = to_operand(p, o)
            # Every S of this tile is done: the producer may load the next tile's Q.
            if leader:
                mbarrier_arrive(qempty[0])
            sl = (it + nkv - 1) % STAGES
            mbarrier_wait(vfull[sl], ((it + nkv - 1) // STAGES) % 2)
            named_barrier_sync(mine, 256)
            o = o * corr
            wgmma(o, pa, wgmma_operand(sV[sl], o, operand="B"))
            wgmma_commit()
            named_barrier_arrive(other, 256)
            wgmma_wait(0)
            if leader:
                mbarrier_arrive(vempty[sl])
            store(o * (1.0 / l_i), O[h].tile((BM, HD), (qb, 0)))
            it = it + nkv
