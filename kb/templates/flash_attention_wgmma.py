"""Flash-attention forward on Hopper (FA3 style): warp-specialized like gemm_wgmma.py. Warp group 0
is the producer: one thread loads the block's Q tile once and streams K/V tiles by TMA into a ring
of STAGES shared-memory stages (an mbarrier pair per stage; K and V in rings of their own in
flash_attention_wgmma). Warp groups 1 and 2 are consumers,
64 query rows each (BM = 128): S = Q K^T on wgmma (Q and K from shared-memory descriptors, K
K-major), the online softmax on the wgmma accumulator in registers (row_max / row_sum are quad
shuffles; the 1/sqrt(D) scale is folded into the exp2 argument: one fma per score), and
O += P V on wgmma with P from registers (to_operand: the accumulator layout of two n8 column
tiles is the A layout of one k16 tile). flash_attention_wgmma_serial waits for each product
before the next;
flash_attention_wgmma (last, the default) overlaps them as FA3 does within a warp group: it
issues S(t) = Q K(t)^T and O += P(t-1) V(t-1) together, waits for S(t) only, runs the softmax
of tile t while the tensor cores finish P(t-1) V(t-1), then rescales O.
flash_attention_wgmma_pingpong adds FA3's inter-warp-group schedule: the CWG consumer warp
groups (two, or three for FA3's D64 configuration: BM = 64 * CWG query rows) issue their
products in turn around a ring of named barriers (group g syncs on barrier 3 + g before its
wgmmas and arrives on the next group's after them), so each group's softmax runs under the
others' wgmmas; it rescales O while S(t) runs (EARLY) and divides by l once per row. Where BM
does not divide S (BM = 192 at S = 8192), its last query block starts at S - BM.
(examples/flash_attention_wgmma_persistent.py runs it on a persistent grid.) Q, K and V are
[rows, D] with rows = heads * S (TMA boxes are 2-D); query head h reads key/value head h // G
(GQA); O is [BH, S, D] f32. S must be a multiple of BN and of BM (of 64 for the ping-pong).
D is 64 or 128, and 256 for the ping-pong (Gemma-2: four 64-wide chunks, BN = 64 so that O, S
and P fit the consumers' 240 registers and Q and two K/V stages the shared memory)."""


@kernel(threads=384, arch="sm_90a")
def flash_attention_wgmma_serial(Q: Tensor[bf16, "RQ", HD], K: Tensor[bf16, "RKV", HD],
                                 V: Tensor[bf16, "RKV", HD], O: Tensor[f32, "BH", "S", HD],
                                 HD: const = 128, G: const = 1, BM: const = 128,
                                 BN: const = 128, STAGES: const = 2, CAUSAL: const = False):
    grid(S // BM, BH)
    # The longest causal rows first (the blocks of a head run in launch order).
    qb, h = S // BM - 1 - block_id(0), block_id(1)
    hk = h // G
    KD = HD // 64
    sQ = shared(bf16, (KD, BM, 64), swizzle=Swizzle(3, 3, 3))
    sK = shared(bf16, (STAGES, KD, BN, 64), swizzle=Swizzle(3, 3, 3))
    sV = shared(bf16, (STAGES, KD, BN, 64), swizzle=Swizzle(3, 3, 3))
    qbar = mbarrier(1)
    full = mbarrier(STAGES)                # the producer's arrive + the K and V bytes
    empty = mbarrier(STAGES, arrivals=2)   # one arrival per consumer warp group
    o = fragment(f32, (BM, HD), mma="wgmma_bf16", warpgroups=(2, 1), first_warpgroup=1)
    nkv = S // BN
    if CAUSAL:
        nkv = cdiv((qb + 1) * BM, BN)
    if warpgroup_id() == 0:                # producer
        setmaxnreg(24)
        if thread_id() == 0:
            mbarrier_arrive_expect_tx(qbar[0], BM * HD * 2)
            for c in range(KD):
                tma_load(Q.tile((BM, 64), (h * (S // BM) + qb, c)), sQ[c], qbar[0])
            for t in range(nkv):
                s = t % STAGES
                mbarrier_wait(empty[s], (t // STAGES + 1) % 2)
                mbarrier_arrive_expect_tx(full[s], 2 * BN * HD * 2)
                for c in range(KD):
                    tma_load(K.tile((BN, 64), (hk * (S // BN) + t, c)), sK[s, c], full[s])
                    tma_load(V.tile((BN, 64), (hk * (S // BN) + t, c)), sV[s, c], full[s])
    else:                                  # consumers: warp group 1 + g owns rows 64g..64g+63
        setmaxnreg(240)
        # log2(e) / sqrt(HD): the softmax runs in base 2 on the unscaled scores.
        scale = rsqrt(f32(HD)) * 1.4426950408889634
        m_i = row_fill(o, -1.0e30)
        l_i = row_fill(o, 0.0)
        mbarrier_wait(qbar[0], 0)
        for t in range(nkv):
            s = t % STAGES
            mbarrier_wait(full[s], (t // STAGES) % 2)
            sc = fragment(f32, (BM, BN), mma="wgmma_bf16", warpgroups=(2, 1), first_warpgroup=1)
            # D = 64 or 128: one or two 64-wide K chunks, written out (a loop around the wgmmas
            # would keep ptxas from chaining them).
            a0 = wgmma_operand(sQ[0], sc, operand="A")
            b0 = wgmma_operand(sK[s, 0].T, sc, operand="B")
            assert_tag(a0, lambda i, j: Q(h * S + qb * BM + i, j))
            assert_tag(b0, lambda i, j: K(hk * S + t * BN + j, i))
            wgmma(sc, a0, b0)
            if KD > 1:
                a1 = wgmma_operand(sQ[1], sc, operand="A")
                b1 = wgmma_operand(sK[s, 1].T, sc, operand="B")
                assert_tag(a1, lambda i, j: Q(h * S + qb * BM + i, 64 + j))
                assert_tag(b1, lambda i, j: K(hk * S + t * BN + j, 64 + i))
                wgmma(sc, a1, b1)
            wgmma_commit()
            wgmma_wait(0)
            if CAUSAL:
                if (t + 1) * BN > qb * BM:
                    sc = select(col_index(sc) + t * BN > row_index(sc) + qb * BM, -1.0e30, sc)
            m_new = max(m_i, row_max(sc))
            p = exp2(fma(sc, scale, m_new * -scale))
            corr = exp2((m_i - m_new) * scale)
            l_i = l_i * corr + row_sum(p)
            o = o * corr
            m_i = m_new
            vb = wgmma_operand(sV[s], o, operand="B")
            assert_tag(vb, lambda i, j: V(hk * S + t * BN + i, j))
            wgmma(o, to_operand(p, o), vb)
            wgmma_commit()
            wgmma_wait(0)
            if thread_id() % 128 == 0:
                mbarrier_arrive(empty[s])
        store(o / l_i, O[h].tile((BM, HD), (qb, 0)))


@kernel(threads=128 * (CWG + 1), arch="sm_90a")
def flash_attention_wgmma_pingpong(Q: Tensor[bf16, "RQ", HD], K: Tensor[bf16, "RKV", HD],
                                   V: Tensor[bf16, "RKV", HD], O: Tensor[f32, "BH", "S", HD],
                                   HD: const = 128, G: const = 1, BN: const = 128,
                                   STAGES: const = 2, CAUSAL: const = False,
                                   EARLY: const = True, CWG: const = 2):
    grid(cdiv(S, 64 * CWG), BH)
    BM = 64 * CWG  # CWG consumer warp groups of 64 query rows each
    # The longest causal rows first (the blocks of a head run in launch order). When BM does
    # not divide S (BM = 192), the last block starts at S - BM and so overlaps the one before
    # it; both compute and store the same rows there.
    qb, h = cdiv(S, BM) - 1 - block_id(0), block_id(1)
    q0 = min(qb * BM, S - BM)
    hk = h // G
    KD = HD // 64
    sQ = shared(bf16, (KD, BM, 64), swizzle=Swizzle(3, 3, 3))
    sK = shared(bf16, (STAGES, KD, BN, 64), swizzle=Swizzle(3, 3, 3))
    sV = shared(bf16, (STAGES, KD, BN, 64), swizzle=Swizzle(3, 3, 3))
    qbar = mbarrier(1)
    # K and V have rings of their own: K(t) goes back to the producer as soon as S(t) is done,
    # V(t) once P(t) V(t) is.
    kfull = mbarrier(STAGES)
    kempty = mbarrier(STAGES, arrivals=CWG)
    vfull = mbarrier(STAGES)
    vempty = mbarrier(STAGES, arrivals=CWG)
    o = fragment(f32, (BM, HD), mma="wgmma_bf16", warpgroups=(CWG, 1), first_warpgroup=1)
    nkv = S // BN
    if CAUSAL:
        nkv = cdiv(q0 + BM, BN)
    if warpgroup_id() == 0:
        # FA3's register split: 24/240 with two consumer groups, 32/160 with three.
        setmaxnreg(24 + (CWG - 2) * 8)
        if thread_id() == 0:
            mbarrier_arrive_expect_tx(qbar[0], BM * HD * 2)
            # 64-row boxes, as q0 is a multiple of 64 but not always of BM: box r of column
            # block c into rows 64 r of sQ[c].
            qr = (h * S + q0) // 64
            for c in range(KD):
                for r in range(CWG):
                    tma_load(Q.tile((64, 64), (qr + r, c)), sQ[c].tile((64, 64), (r, 0)), qbar[0])
            for t in range(nkv):
                s = t % STAGES
                mbarrier_wait(kempty[s], (t // STAGES + 1) % 2)
                mbarrier_arrive_expect_tx(kfull[s], BN * HD * 2)
                for c in range(KD):
                    tma_load(K.tile((BN, 64), (hk * (S // BN) + t, c)), sK[s, c], kfull[s])
                mbarrier_wait(vempty[s], (t // STAGES + 1) % 2)
                mbarrier_arrive_expect_tx(vfull[s], BN * HD * 2)
                for c in range(KD):
                    tma_load(V.tile((BN, 64), (hk * (S // BN) + t, c)), sV[s, c], vfull[s])
    else:
        setmaxnreg(240 - (CWG - 2) * 80)
        scale = rsqrt(f32(HD)) * 1.4426950408889634
        leader = thread_id() % 128 == 0
        # Ping-pong: warp group g issues its products once the other one has issued its own.
        # Named barrier 3 + g (above warpgroup_barrier()'s 1..3) completes with g's 128 threads
        # syncing and the other group's 128 arriving, so the tensor cores alternate between the
        # groups and each one's softmax runs under the other's products.
        mine = 3 + warpgroup_id()
        other = 4 + warpgroup_id() % CWG  # the next group in the ring
        if warpgroup_id() == CWG:
            named_barrier_arrive(4, 256)   # warp group 1 goes first
        mbarrier_wait(qbar[0], 0)
        # Tile 0: S(0) and its softmax (O is still zero: nothing to rescale).
        mbarrier_wait(kfull[0], 0)
        sc = fragment(f32, (BM, BN), mma="wgmma_bf16", warpgroups=(CWG, 1), first_warpgroup=1)
        named_barrier_sync(mine, 256)
        wgmma(sc, wgmma_operand(sQ[0], sc, operand="A"),
              wgmma_operand(sK[0, 0].T, sc, operand="B"))
        if KD > 1:
            wgmma(sc, wgmma_operand(sQ[1], sc, operand="A"),
                  wgmma_operand(sK[0, 1].T, sc, operand="B"))
        if KD > 2:
            wgmma(sc, wgmma_operand(sQ[2], sc, operand="A"),
                  wgmma_operand(sK[0, 2].T, sc, operand="B"))
            wgmma(sc, wgmma_operand(sQ[3], sc, operand="A"),
                  wgmma_operand(sK[0, 3].T, sc, operand="B"))
        wgmma_commit()
        named_barrier_arrive(other, 256)
        wgmma_wait(0)
        if leader:
            mbarrier_arrive(kempty[0])
        if CAUSAL:
            if BN > q0:
                sc = select(col_index(sc) > row_index(sc) + q0, -1.0e30, sc)
        m_i = row_max(sc)
        p = exp2(fma(sc, scale, m_i * -scale))
        l_i = row_sum(p)
        # P(t) in registers as the A operand of P(t) V(t): carried into the next iteration,
        # rewritten only after the wgmma_wait that covers its last reader.
        pa = to_operand(p, o)
        corr = row_fill(sc, 1.0)
        for t in range(1, nkv):
            s = t % STAGES
            sp = (t - 1) % STAGES
            mbarrier_wait(kfull[s], (t // STAGES) % 2)
            sc = fragment(f32, (BM, BN), mma="wgmma_bf16", warpgroups=(CWG, 1),
                          first_warpgroup=1)
            named_barrier_sync(mine, 256)
            a0 = wgmma_operand(sQ[0], sc, operand="A")
            b0 = wgmma_operand(sK[s, 0].T, sc, operand="B")
            assert_tag(a0, lambda i, j: Q(h * S + q0 + i, j))
            assert_tag(b0, lambda i, j: K(hk * S + t * BN + j, i))
            wgmma(sc, a0, b0)
            if KD > 1:
                a1 = wgmma_operand(sQ[1], sc, operand="A")
                b1 = wgmma_operand(sK[s, 1].T, sc, operand="B")
                assert_tag(a1, lambda i, j: Q(h * S + q0 + i, 64 + j))
                assert_tag(b1, lambda i, j: K(hk * S + t * BN + j, 64 + i))
                wgmma(sc, a1, b1)
            if KD > 2:  # D = 256: chunks 2 and 3
                a2 = wgmma_operand(sQ[2], sc, operand="A")
                b2 = wgmma_operand(sK[s, 2].T, sc, operand="B")
                assert_tag(a2, lambda i, j: Q(h * S + q0 + i, 128 + j))
                assert_tag(b2, lambda i, j: K(hk * S + t * BN + j, 128 + i))
                wgmma(sc, a2, b2)
                a3 = wgmma_operand(sQ[3], sc, operand="A")
                b3 = wgmma_operand(sK[s, 3].T, sc, operand="B")
                assert_tag(a3, lambda i, j: Q(h * S + q0 + i, 192 + j))
                assert_tag(b3, lambda i, j: K(hk * S + t * BN + j, 192 + i))
                wgmma(sc, a3, b3)
            wgmma_commit()
            if EARLY:
                # FA3's order: O(t-1) is rescaled while S(t) runs, before P(t-1) V(t-1)
                # accumulates into it; after the wait only P's conversion is left.
                o = o * corr
            mbarrier_wait(vfull[sp], ((t - 1) // STAGES) % 2)
            vb = wgmma_operand(sV[sp], o, operand="B")
            assert_tag(vb, lambda i, j: V(hk * S + (t - 1) * BN + i, j))
            wgmma(o, pa, vb)
            wgmma_commit()
            named_barrier_arrive(other, 256)
            wgmma_wait(1)                  # S(t) has landed; P(t-1) V(t-1) may still run
            if leader:
                mbarrier_arrive(kempty[s])
            if CAUSAL:
                if (t + 1) * BN > q0:
                    sc = select(col_index(sc) + t * BN > row_index(sc) + q0, -1.0e30, sc)
            m_new = max(m_i, row_max(sc))
            p = exp2(fma(sc, scale, m_new * -scale))
            corr = exp2((m_i - m_new) * scale)
            l_i = l_i * corr + row_sum(p)
            m_i = m_new
            wgmma_wait(0)
            if leader:
                mbarrier_arrive(vempty[sp])
            if not EARLY:
                o = o * corr
            pa = to_operand(p, o)
        sl = (nkv - 1) % STAGES
        mbarrier_wait(vfull[sl], ((nkv - 1) // STAGES) % 2)
        named_barrier_sync(mine, 256)
        if EARLY:
            o = o * corr
        wgmma(o, pa, wgmma_operand(sV[sl], o, operand="B"))
        wgmma_commit()
        named_barrier_arrive(other, 256)
        wgmma_wait(0)
        if leader:
            mbarrier_arrive(vempty[sl])
        # One reciprocal per row, not a division per element.
        store(o * (1.0 / l_i), O[h, q0:q0 + BM, :])


@kernel(threads=384, arch="sm_90a")
def flash_attention_wgmma(Q: Tensor[bf16, "RQ", HD], K: Tensor[bf16, "RKV", HD],
                          V: Tensor[bf16, "RKV", HD], O: Tensor[f32, "BH", "S", HD],
                          HD: const = 128, G: const = 1, BM: const = 128, BN: const = 128,
                          STAGES: const = 2, CAUSAL: const = False):
    grid(S // BM, BH)
    # The longest causal rows first (the blocks of a head run in launch order).
    qb, h = S // BM - 1 - block_id(0), block_id(1)
    hk = h // G
    KD = HD // 64
    sQ = shared(bf16, (KD, BM, 64), swizzle=Swizzle(3, 3, 3))
    sK = shared(bf16, (STAGES, KD, BN, 64), swizzle=Swizzle(3, 3, 3))
    sV = shared(bf16, (STAGES, KD, BN, 64), swizzle=Swizzle(3, 3, 3))
    qbar = mbarrier(1)
    # K and V have rings of their own: K(t) goes back to the producer as soon as S(t) is done,
    # V(t) once P(t) V(t) is.
    kfull = mbarrier(STAGES)
    kempty = mbarrier(STAGES, arrivals=2)
    vfull = mbarrier(STAGES)
    vempty = mbarrier(STAGES, arrivals=2)
    o = fragment(f32, (BM, HD), mma="wgmma_bf16", warpgroups=(2, 1), first_warpgroup=1)
    nkv = S // BN
    if CAUSAL:
        nkv = cdiv((qb + 1) * BM, BN)
    if warpgroup_id() == 0:
        setmaxnreg(24)
        if thread_id() == 0:
            mbarrier_arrive_expect_tx(qbar[0], BM * HD * 2)
            for c in range(KD):
                tma_load(Q.tile((BM, 64), (h * (S // BM) + qb, c)), sQ[c], qbar[0])
            for t in range(nkv):
                s = t % STAGES
                mbarrier_wait(kempty[s], (t // STAGES + 1) % 2)
                mbarrier_arrive_expect_tx(kfull[s], BN * HD * 2)
                for c in range(KD):
                    tma_load(K.tile((BN, 64), (hk * (S // BN) + t, c)), sK[s, c], kfull[s])
                mbarrier_wait(vempty[s], (t // STAGES + 1) % 2)
                mbarrier_arrive_expect_tx(vfull[s], BN * HD * 2)
                for c in range(KD):
                    tma_load(V.tile((BN, 64), (hk * (S // BN) + t, c)), sV[s, c], vfull[s])
    else:
        setmaxnreg(240)
        scale = rsqrt(f32(HD)) * 1.4426950408889634
        leader = thread_id() % 128 == 0
        mbarrier_wait(qbar[0], 0)
        # Tile 0: S(0) and its softmax (O is still zero: nothing to rescale).
        mbarrier_wait(kfull[0], 0)
        sc = fragment(f32, (BM, BN), mma="wgmma_bf16", warpgroups=(2, 1), first_warpgroup=1)
        wgmma(sc, wgmma_operand(sQ[0], sc, operand="A"),
              wgmma_operand(sK[0, 0].T, sc, operand="B"))
        if KD > 1:
            wgmma(sc, wgmma_operand(sQ[1], sc, operand="A"),
                  wgmma_operand(sK[0, 1].T, sc, operand="B"))
        wgmma_commit()
        wgmma_wait(0)
        if leader:
            mbarrier_arrive(kempty[0])
        if CAUSAL:
            if BN > qb * BM:
                sc = select(col_index(sc) > row_index(sc) + qb * BM, -1.0e30, sc)
        m_i = row_max(sc)
        p = exp2(fma(sc, scale, m_i * -scale))
        l_i = row_sum(p)
        # P(t) in registers as the A operand of P(t) V(t): carried into the next iteration,
        # rewritten only after the wgmma_wait that covers its last reader.
        pa = to_operand(p, o)
        for t in range(1, nkv):
            s = t % STAGES
            sp = (t - 1) % STAGES
            mbarrier_wait(kfull[s], (t // STAGES) % 2)
            sc = fragment(f32, (BM, BN), mma="wgmma_bf16", warpgroups=(2, 1), first_warpgroup=1)
            a0 = wgmma_operand(sQ[0], sc, operand="A")
            b0 = wgmma_operand(sK[s, 0].T, sc, operand="B")
            assert_tag(a0, lambda i, j: Q(h * S + qb * BM + i, j))
            assert_tag(b0, lambda i, j: K(hk * S + t * BN + j, i))
            wgmma(sc, a0, b0)
            if KD > 1:
                a1 = wgmma_operand(sQ[1], sc, operand="A")
                b1 = wgmma_operand(sK[s, 1].T, sc, operand="B")
                assert_tag(a1, lambda i, j: Q(h * S + qb * BM + i, 64 + j))
                assert_tag(b1, lambda i, j: K(hk * S + t * BN + j, 64 + i))
                wgmma(sc, a1, b1)
            wgmma_commit()
            mbarrier_wait(vfull[sp], ((t - 1) // STAGES) % 2)
            vb = wgmma_operand(sV[sp], o, operand="B")
            assert_tag(vb, lambda i, j: V(hk * S + (t - 1) * BN + i, j))
            wgmma(o, pa, vb)
            wgmma_commit()
            wgmma_wait(1)                  # S(t) has landed; P(t-1) V(t-1) may still run
            if leader:
                mbarrier_arrive(kempty[s])
            if CAUSAL:
                if (t + 1) * BN > qb * BM:
                    sc = select(col_index(sc) + t * BN > row_index(sc) + qb * BM, -1.0e30, sc)
            m_new = max(m_i, row_max(sc))
            p = exp2(fma(sc, scale, m_new * -scale))
            corr = exp2((m_i - m_new) * scale)
            l_i = l_i * corr + row_sum(p)
            m_i = m_new
            wgmma_wait(0)
            if leader:
                mbarrier_arrive(vempty[sp])
            o = o * corr
            pa = to_operand(p, o)
        sl = (nkv - 1) % STAGES
        mbarrier_wait(vfull[sl], ((nkv - 1) // STAGES) % 2)
        wgmma(o, pa, wgmma_operand(sV[sl], o, operand="B"))
        wgmma_commit()
        wgmma_wait(0)
        if leader:
            mbarrier_arrive(vempty[sl])
        store(o / l_i, O[h].tile((BM, HD), (qb, 0)))
