# dims: R=4096,F=1408,D=2048,EF=90112,MT=32
"""A grouped GEMM tile of a MoE (kb/templates/moe_wgmma.py's moe_down): row tile bm belongs to
expert TileE[bm], whose weights are row tiles e*KT.. of the 2-D Wd. The expert id is read from
a tensor the kernel never writes, so the producer's copy of it (which picks the TMA tile) and
the consumers' (in the tag assertion) are the same value."""


@kernel(threads=384, arch="sm_90a")
def expert_tile(H: Tensor[bf16, "R", "F"], TileE: Tensor[i32, "MT"], Wd: Tensor[bf16, "EF", "D"],
                P: Tensor[f32, "R", "D"],
                BM: const = 128, BN: const = 256, BK: const = 64, STAGES: const = 4):
    grid(R // BM, D // BN)
    bm, bn = block_id(0), block_id(1)
    KT = F // BK
    e = min(max(TileE[bm], 0), EF // F - 1)
    sA = shared(bf16, (STAGES, BM, BK), swizzle=Swizzle(3, 3, 3))
    sB = shared(bf16, (STAGES, BN // 64, BK, 64), swizzle=Swizzle(3, 3, 3))
    full = mbarrier(STAGES)
    empty = mbarrier(STAGES, arrivals=2)
    acc = fragment(f32, (BM, BN), mma="wgmma_bf16", warpgroups=(2, 1), first_warpgroup=1)
    if warpgroup_id() == 0:
        setmaxnreg(40)
        if thread_id() == 0:
            for k in range(KT):
                s = k % STAGES
                mbarrier_wait(empty[s], (k // STAGES + 1) % 2)
                mbarrier_arrive_expect_tx(full[s], (BM * BK + BK * BN) * 2)
                tma_load(H.tile((BM, BK), (bm, k)), sA[s], full[s])
                for j in range(BN // 64):
                    tma_load(Wd.tile((BK, 64), (e * KT + k, bn * (BN // 64) + j)), sB[s, j],
                             full[s])
    else:
        setmaxnreg(232)
        for k in range(KT):
            s = k % STAGES
            mbarrier_wait(full[s], (k // STAGES) % 2)
            a = wgmma_operand(sA[s], acc, operand="A")
            b = wgmma_operand(sB[s], acc, operand="B")
            assert_tag(a, lambda i, j: H(bm * BM + i, k * BK + j))
            assert_tag(b, lambda i, j: Wd(e * F + k * BK + i, bn * BN + j))
            wgmma(acc, a, b)
            wgmma_commit()
            wgmma_wait(1)
            if k > 0 and thread_id() % 128 == 0:
                mbarrier_arrive(empty[(k - 1) % STAGES])
        wgmma_wait(0)
        store(acc, P.tile((BM, BN), (bm, bn)))
