"""Fused top-k SwiGLU experts as six launches on Hopper tensor cores:
Y[t] = sum_k Wt[t, k] * (silu(X[t] @ Wg[e]) * (X[t] @ Wu[e])) @ Wd[e] with e = Ids[t, k].

1. moe_count (a block per expert): Cnt[e], the number of (token, k) slots routed to e.
2. moe_place (a block per expert): a counting sort of the slots by expert into BM-row tiles of
   one expert each, in a padded row space of R = MT * BM rows: an expert of c rows gets
   (c + BM/2 - 1) // BM full tiles (the last one padded when more than BM/2 rows are left over)
   and then, when 1..BM/2 rows are left over, one *half tile* (TileH = 1) whose rows BM/2.. are
   all padding, so that the GEMMs' second consumer warp group skips its wgmmas and its store
   there (at E8 about one expert in two spills a few rows into a ninth tile: a full tile of
   work before). TileE[tile] is a tile's expert, Ord the live tiles with the full ones first
   and the half ones last (the order in which a GEMM with the knob *_TAIL walks them, so that
   the cheap tiles fill the last wave), RowTok[row] the token of a row (-1 for padding),
   SlotRow[t, k] the row of slot (t, k); a thread's slots are placed after those of the
   threads before it (a prefix sum). Live[0] is the number of tiles that hold rows (the rest of
   the MT up to R are never used).
3. moe_gather: Xg[row] = X[RowTok[row]] (the grouped GEMM's A operand, each tile's rows of one
   expert, so that TMA can load them).
4. moe_gateup: per (tile, BN columns of F), G = Xg Wg[e] and U = Xg Wu[e] on wgmma from one
   warp-specialized TMA pipeline (both weights' tiles in each stage), then
   H = silu(G) * U on the accumulators (fragment math), stored as bf16: with EPI = 1 (the
   default) through shared memory and TMA stores, gemm_wgmma_tma_store's epilogue, whose global
   writes overlap the next tile's main loop (measured 1-2 % faster than EPI = 0's stores from
   registers). Persistent: SMS blocks walk the Live[0] * (F / BN) live tiles in grouped order
   (GROUP row tiles across all column tiles, which share their Xg tiles and one or two
   experts' weights in L2), so the producer loads a block's next tile while its consumers
   finish the last one, and no block runs for the padding tiles; the K-step counter `it` runs
   on across tiles, and so does the ring.
   GU_TAIL = 1 walks the row tiles in Ord instead (the half tiles last, where no weight panel
   is shared between them).
5. moe_down: P = H Wd[e] per tile (bf16), the same pipeline with one weight; DN_TAIL = 1 walks
   the row tiles in Ord (at E8 the 16 column tiles per row tile make ~8.2 waves of 132, and
   the half tiles would fill the last one; measured: no gain at E8, 11 % slower at E64, where
   the half tiles of ~30 experts then share no weights).
6. moe_reduce: Y[t] = sum_k Wt[t, k] * P[SlotRow[t, k]].

The weights are seen as 2-D tensors (Wg, Wu: [E*D, F], Wd: [E*F, D]: the same memory as
[E, D, F] / [E, F, D]), so that expert e's K-tile k is row tile e*KT + k of one TMA tensor map.
Expert ids come from memory; clamps make every index provably in bounds at two instructions
each (a router's ids are in [0, E) anyway). The padding rows of a live tile compute on whatever
Xg holds there and are never read (those of a half tile are not computed at all).
"""


@kernel(threads=1024)
def moe_count(Ids: Tensor[i32, "T", "TOPK"], Cnt: Tensor[i32, "E"]):
    grid(E)
    ex = block_id(0)
    n = 0
    for i in range((T * TOPK - thread_id() + 1023) // 1024):
        s = thread_id() + i * 1024
        if min(max(Ids[s // TOPK, s % TOPK], 0), E - 1) == ex:
            n += 1
    total = block_reduce_sum(n)
    if thread_id() == 0:
        Cnt[ex] = total


@kernel(threads=1024)
def moe_place(Ids: Tensor[i32, "T", "TOPK"], Cnt: Tensor[i32, "E"], TileE: Tensor[i32, "MT"],
              TileH: Tensor[i32, "MT"], Ord: Tensor[i32, "MT"], RowTok: Tensor[i32, "R"],
              SlotRow: Tensor[i32, "T", "TOPK"], Live: Tensor[i32, 1], BM: const = 128):
    grid(E)
    ex = block_id(0)
    tid = thread_id()
    sc = shared(i32, (1024,))
    HB = BM // 2
    # An expert of c rows has (c + BM - HB - 1) // BM full tiles (the last one padded when more
    # than HB rows are left over) and then one half tile when 1..HB rows are left over.
    p0 = 0  # tiles of the experts before this one
    f0 = 0  # full tiles of the experts before this one
    h0 = 0  # half tiles of the experts before this one
    nf = 0  # full tiles of all experts
    for ee in range(E):
        c = Cnt[ee]
        f = (c + BM - HB - 1) // BM
        nf += f
        if ee < ex:
            p0 += (c + BM - 1) // BM
            f0 += f
            h0 += (c + BM - 1) // BM - f
    tot = Cnt[ex]
    fx = (tot + BM - HB - 1) // BM
    hx = (tot + BM - 1) // BM - fx
    n = 0
    for i in range((T * TOPK - tid + 1023) // 1024):
        s = tid + i * 1024
        if min(max(Ids[s // TOPK, s % TOPK], 0), E - 1) == ex:
            n += 1
    # Inclusive prefix sum of the threads' counts (Hillis-Steele).
    sc[tid] = n
    barrier()
    for b in range(10):
        v = sc[tid]
        if tid >= (1 << b):
            v += sc[tid - (1 << b)]
        barrier()
        sc[tid] = v
        barrier()
    r = p0 * BM + sc[tid] - n
    for i in range((T * TOPK - tid + 1023) // 1024):
        s = tid + i * 1024
        if min(max(Ids[s // TOPK, s % TOPK], 0), E - 1) == ex:
            rr = min(max(r, 0), R - 1)
            RowTok[rr] = s // TOPK
            SlotRow[s // TOPK, s % TOPK] = rr
            r += 1
    # This expert's tiles (TileH: 1 for a half tile, whose rows HB.. are all padding), their
    # places in Ord (the full tiles of all experts, then the half tiles: an order that puts the
    # cheap tiles last) and its padding rows; one block also the unused tail's rows and the
    # live tile count (the GEMMs read no TileE past it).
    for i in range(tid, fx + hx, 1024):
        t = min(max(p0 + i, 0), MT - 1)
        TileE[t] = ex
        TileH[t] = select(i < fx, 0, 1)
        Ord[min(max(select(i < fx, f0 + i, nf + h0), 0), MT - 1)] = t
    for j in range(tid, (fx + hx) * BM - tot, 1024):
        RowTok[min(max(p0 * BM + tot + j, 0), R - 1)] = -1
    if ex == E - 1:
        end = max((p0 + fx + hx) * BM, 0)
        if tid == 0:
            Live[0] = end // BM
        for j in range(end + tid, R, 1024):
            RowTok[j] = -1


@kernel(threads=256)
def moe_gather(X: Tensor[${dtype}, "T", "D"], RowTok: Tensor[i32, "R"],
               Xg: Tensor[${dtype}, "R", "D"], GW: const = 2048):
    grid(R)
    r = block_id(0)
    tok = RowTok[r]
    if tok >= 0:
        t = min(tok, T - 1)
        for c in range(D // GW):  # 16-byte vectors, GW elements per pass
            copy(X.tile((1, GW), (t, c)), Xg.tile((1, GW), (r, c)),
                 thread_layout((1, GW // 8), vec=8))


@kernel(threads=384, arch="sm_90a")
def moe_gateup(Xg: Tensor[bf16, "R", "D"], Live: Tensor[i32, 1], TileE: Tensor[i32, "MT"],
               TileH: Tensor[i32, "MT"], Ord: Tensor[i32, "MT"], Wg: Tensor[bf16, "ED", "F"],
               Wu: Tensor[bf16, "ED", "F"], H: Tensor[bf16, "R", "F"],
               BM: const = 128, BN: const = 128, BK: const = 64, STAGES: const = 4,
               GROUP: const = 8, SMS: const = 132, GU_TAIL: const = 0, EPI: const = 1,
               EBUFS: const = 2):
    grid(min(MT * (F // BN), SMS))
    NT = F // BN
    KT = D // BK
    TM = min(max(Live[0], 0), MT)  # the live row tiles (moe_place's count)
    ntiles = cdiv(TM * NT - block_id(0), grid_dim(0))
    sA = shared(bf16, (STAGES, BM, BK), swizzle=Swizzle(3, 3, 3))
    sG = shared(bf16, (STAGES, BN // 64, BK, 64), swizzle=Swizzle(3, 3, 3))
    sU = shared(bf16, (STAGES, BN // 64, BK, 64), swizzle=Swizzle(3, 3, 3))
    sC = shared(bf16, (2, EBUFS, 64, 64), swizzle=Swizzle(3, 3, 3))  # EPI = 1: H sub-tiles
    full = mbarrier(STAGES)
    empty = mbarrier(STAGES, arrivals=2)
    if warpgroup_id() == 0:
        setmaxnreg(40)
        if thread_id() == 0:
            for i in range(ntiles):
                t = block_id(0) + i * grid_dim(0)
                first = t // (GROUP * NT) * GROUP  # grouped order, as gemm_wgmma_tma_store's
                rows = min(TM - first, GROUP)
                bm = first + t % (GROUP * NT) % rows
                if GU_TAIL > 0:  # the full tiles first, the half tiles last
                    bm = min(max(Ord[bm], 0), MT - 1)
                bn = t % (GROUP * NT) // rows
                e = min(max(TileE[bm], 0), ED // D - 1)
                for k in range(KT):
                    it = i * KT + k
                    s = it % STAGES
                    mbarrier_wait(empty[s], (it // STAGES + 1) % 2)
                    mbarrier_arrive_expect_tx(full[s], (BM * BK + 2 * BK * BN) * 2)
                    tma_load(Xg.tile((BM, BK), (bm, k)), sA[s], full[s])
                    for j in range(BN // 64):
                        tma_load(Wg.tile((BK, 64), (e * KT + k, bn * (BN // 64) + j)),
                                 sG[s, j], full[s])
                        tma_load(Wu.tile((BK, 64), (e * KT + k, bn * (BN // 64) + j)),
                                 sU[s, j], full[s])
    else:
        setmaxnreg(232)
        wg = warpgroup_id() - 1
        for i in range(ntiles):
            t = block_id(0) + i * grid_dim(0)
            first = t // (GROUP * NT) * GROUP  # grouped order, as gemm_wgmma_tma_store's
            rows = min(TM - first, GROUP)
            bm = first + t % (GROUP * NT) % rows
            if GU_TAIL > 0:
                bm = min(max(Ord[bm], 0), MT - 1)
            bn = t % (GROUP * NT) // rows
            e = min(max(TileE[bm], 0), ED // D - 1)
            live = warpgroup_id() == 1 or TileH[bm] == 0  # a half tile's rows HB.. are padding
            g = fragment(f32, (BM, BN), mma="wgmma_bf16", warpgroups=(2, 1), first_warpgroup=1)
            u = fragment(f32, (BM, BN), mma="wgmma_bf16", warpgroups=(2, 1), first_warpgroup=1)
            for k in range(KT):
                it = i * KT + k
                s = it % STAGES
                mbarrier_wait(full[s], (it // STAGES) % 2)
                ag = wgmma_operand(sA[s], g, operand="A")
                au = wgmma_operand(sA[s], u, operand="A")
                bg = wgmma_operand(sG[s], g, operand="B")
                bu = wgmma_operand(sU[s], u, operand="B")
                assert_tag(ag, lambda r, c: Xg(bm * BM + r, k * BK + c))
                assert_tag(au, lambda r, c: Xg(bm * BM + r, k * BK + c))
                assert_tag(bg, lambda r, c: Wg(e * D + k * BK + r, bn * BN + c))
                assert_tag(bu, lambda r, c: Wu(e * D + k * BK + r, bn * BN + c))
                if live:
                    wgmma(g, ag, bg)
                    wgmma(u, au, bu)
                wgmma_commit()
                wgmma_wait(1)
                if k > 0 and thread_id() % 128 == 0:
                    mbarrier_arrive(empty[(it - 1) % STAGES])
            wgmma_wait(0)
            if thread_id() % 128 == 0:
                mbarrier_arrive(empty[(i * KT + KT - 1) % STAGES])
            if EPI == 0:
                if live:
                    store(g / (1.0 + exp2(g * -1.4426950408889634)) * u,
                          H.tile((BM, BN), (bm, bn)))
            else:
                # gemm_wgmma_tma_store's epilogue: each warp group's 64 x BN part of H, 64 x 64
                # at a time, through one of EBUFS shared buffers and a TMA store, whose global
                # writes overlap the next tile's main loop (a half tile's padding rows get 0).
                h = g / (1.0 + exp2(g * -1.4426950408889634)) * u
                for j in range(BN // 64):
                    q = i * (BN // 64) + j
                    if thread_id() % 128 == 0:
                        tma_store_wait(EBUFS - 1)
                    warpgroup_barrier()
                    store(h, sC[wg, q % EBUFS], at=(wg, j))
                    fence_proxy_async()
                    warpgroup_barrier()
                    if thread_id() % 128 == 0:
                        tma_store(sC[wg, q % EBUFS],
                                  H.tile((64, 64), (bm * 2 + wg, bn * (BN // 64) + j)))
                        tma_store_commit()
        if EPI > 0 and thread_id() % 128 == 0:
            tma_store_wait(0)


@kernel(threads=384, arch="sm_90a")
def moe_down(H: Tensor[bf16, "R", "F"], Live: Tensor[i32, 1], TileE: Tensor[i32, "MT"],
             TileH: Tensor[i32, "MT"], Ord: Tensor[i32, "MT"], Wd: Tensor[bf16, "EF", "D"],
             P: Tensor[bf16, "R", "D"],
             BM: const = 128, BN: const = 256, BK: const = 64, STAGES: const = 4,
             GROUP: const = 8, SMS: const = 132, DN_TAIL: const = 0):
    grid(min(MT * (D // BN), SMS))
    NT = D // BN
    KT = F // BK
    TM = min(max(Live[0], 0), MT)
    ntiles = cdiv(TM * NT - block_id(0), grid_dim(0))
    sA = shared(bf16, (STAGES, BM, BK), swizzle=Swizzle(3, 3, 3))
    sB = shared(bf16, (STAGES, BN // 64, BK, 64), swizzle=Swizzle(3, 3, 3))
    full = mbarrier(STAGES)
    empty = mbarrier(STAGES, arrivals=2)
    if warpgroup_id() == 0:
        setmaxnreg(40)
        if thread_id() == 0:
            for i in range(ntiles):
                t = block_id(0) + i * grid_dim(0)
                first = t // (GROUP * NT) * GROUP  # grouped order, as gemm_wgmma_tma_store's
                rows = min(TM - first, GROUP)
                bm = first + t % (GROUP * NT) % rows
                if DN_TAIL > 0:  # the full tiles first, the half tiles last
                    bm = min(max(Ord[bm], 0), MT - 1)
                bn = t % (GROUP * NT) // rows
                e = min(max(TileE[bm], 0), EF // F - 1)
                for k in range(KT):
                    it = i * KT + k
                    s = it % STAGES
                    mbarrier_wait(empty[s], (it // STAGES + 1) % 2)
                    mbarrier_arrive_expect_tx(full[s], (BM * BK + BK * BN) * 2)
                    tma_load(H.tile((BM, BK), (bm, k)), sA[s], full[s])
                    for j in range(BN // 64):
                        tma_load(Wd.tile((BK, 64), (e * KT + k, bn * (BN // 64) + j)),
                                 sB[s, j], full[s])
    else:
        setmaxnreg(232)
        for i in range(ntiles):
            t = block_id(0) + i * grid_dim(0)
            first = t // (GROUP * NT) * GROUP  # grouped order, as gemm_wgmma_tma_store's
            rows = min(TM - first, GROUP)
            bm = first + t % (GROUP * NT) % rows
            if DN_TAIL > 0:
                bm = min(max(Ord[bm], 0), MT - 1)
            bn = t % (GROUP * NT) // rows
            e = min(max(TileE[bm], 0), EF // F - 1)
            live = warpgroup_id() == 1 or TileH[bm] == 0
            acc = fragment(f32, (BM, BN), mma="wgmma_bf16", warpgroups=(2, 1), first_warpgroup=1)
            for k in range(KT):
                it = i * KT + k
                s = it % STAGES
                mbarrier_wait(full[s], (it // STAGES) % 2)
                a = wgmma_operand(sA[s], acc, operand="A")
                b = wgmma_operand(sB[s], acc, operand="B")
                assert_tag(a, lambda r, c: H(bm * BM + r, k * BK + c))
                assert_tag(b, lambda r, c: Wd(e * F + k * BK + r, bn * BN + c))
                if live:
                    wgmma(acc, a, b)
                wgmma_commit()
                wgmma_wait(1)
                if k > 0 and thread_id() % 128 == 0:
                    mbarrier_arrive(empty[(it - 1) % STAGES])
            wgmma_wait(0)
            if thread_id() % 128 == 0:
                mbarrier_arrive(empty[(i * KT + KT - 1) % STAGES])
            if live:
                store(acc, P.tile((BM, BN), (bm, bn)))


@kernel(threads=256)
def moe_reduce(P: Tensor[bf16, "R", "D"], SlotRow: Tensor[i32, "T", "TOPK"],
               Wt: Tensor[f32, "T", "TOPK"], Y: Tensor[f32, "T", "D"]):
    grid(T)
    t = block_id(0)
    for j in range(thread_id(), D, 256):
        a = 0.0
        for k in range(TOPK):
            a += Wt[t, k] * f32(P[min(max(SlotRow[t, k], 0), R - 1), j])
        Y[t, j] = a

