# dims: R=9216,D=4096,F=14336,ED=32768,MT=72
"""A persistent grouped GEMM over a tile count read from memory (kb/templates/moe_wgmma.py's
moe_gateup at the E8 shape: K/BK = 64, 112 column tiles, 72 row tiles): the blocks walk
cdiv(TM * NT - block_id(0), grid_dim(0)) tiles, TM = Live[0] clamped, and the K-step counter
it = i * KT + k runs the stage ring on across tiles. The phase checks compose the producer's
and the consumers' (i, k) nests with the ring's rounds; at these constants they are only fast
with the div/mod terms flattened (verifier/arith_norm.h)."""


@kernel(threads=384, arch="sm_90a")
def live_tiles(Xg: Tensor[bf16, "R", "D"], Live: Tensor[i32, 1], TileE: Tensor[i32, "MT"],
               Wg: Tensor[bf16, "ED", "F"], Wu: Tensor[bf16, "ED", "F"], H: Tensor[bf16, "R", "F"],
               BM: const = 128, BN: const = 128, BK: const = 64, STAGES: const = 4,
               GROUP: const = 8, SMS: const = 132):
    grid(min(MT * (F // BN), SMS))
    NT = F // BN
    KT = D // BK
    TM = min(max(Live[0], 0), MT)
    ntiles = cdiv(TM * NT - block_id(0), grid_dim(0))
    sA = shared(bf16, (STAGES, BM, BK), swizzle=Swizzle(3, 3, 3))
    sG = shared(bf16, (STAGES, BN // 64, BK, 64), swizzle=Swizzle(3, 3, 3))
    sU = shared(bf16, (STAGES, BN // 64, BK, 64), swizzle=Swizzle(3, 3, 3))
    full = mbarrier(STAGES)
    empty = mbarrier(STAGES, arrivals=2)
    if warpgroup_id() == 0:
        setmaxnreg(40)
        if thread_id() == 0:
            for i in range(ntiles):
                t = block_id(0) + i * grid_dim(0)
                first = t // (GROUP * NT) * GROUP
                rows = min(TM - first, GROUP)
                bm = first + t % (GROUP * NT) % rows
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
        for i in range(ntiles):
            t = block_id(0) + i * grid_dim(0)
            first = t // (GROUP * NT) * GROUP
            rows = min(TM - first, GROUP)
            bm = first + t % (GROUP * NT) % rows
            bn = t % (GROUP * NT) // rows
            e = min(max(TileE[bm], 0), ED // D - 1)
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
                wgmma(g, ag, bg)
                wgmma(u, au, bu)
                wgmma_commit()
                wgmma_wait(1)
                if k > 0 and thread_id() % 128 == 0:
                    mbarrier_arrive(empty[(it - 1) % STAGES])
            wgmma_wait(0)
            if thread_id() % 128 == 0:
                mbarrier_arrive(empty[(i * KT + KT - 1) % STAGES])
            store(g * u, H.tile((BM, BN), (bm, bn)))
