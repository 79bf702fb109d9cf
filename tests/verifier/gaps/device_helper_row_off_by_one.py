# verifier-bug: the @device grouped-order helper returns the row tile one past its own: the last group's loads and stores leave A and C (the bounds flow through the call)
# seeded into tests/verifier/clean/device_tile_scheduler.py
# expect: oob line 62
# cex: out-of-bounds access to tensor A at (4096,
# dims: M=4096,N=4096,K=4096
"""kb/templates/gemm_wgmma_tma_store.py with its tile scheduler in @device functions: the grouped
tile order (grouped_row, grouped_col) and the clamp of the last column tile (clamp_last, an early
return). The verifier computes a device function's integer result from its arguments, so the
bounds of the TMA tiles and the stores' tag flow are proved through the calls."""


@device
def grouped_row(t: i32, tm: i32, tn: i32, group: i32) -> i32:
    first = t // (group * tn) * group
    rows = min(tm - first, group)
    return first + t % (group * tn) % rows + 1


@device
def clamp_last(x: i32, last: i32) -> i32:
    if x > last:
        return last
    return x


@device
def grouped_col(t: i32, tm: i32, tn: i32, group: i32) -> i32:
    first = t // (group * tn) * group
    rows = min(tm - first, group)
    return t % (group * tn) // rows


@kernel(threads=384, arch="sm_90a")
def gemm_wgmma_tma_store(A: Tensor[bf16, "M", "K"], B: Tensor[bf16, "K", "N"],
                         C: Tensor[f32, "M", "N"], BM: const = 128, BN: const = 256,
                         BK: const = 64, STAGES: const = 4, SMS: const = 132, GROUP: const = 16,
                         EBUFS: const = 2):
    grid(min(cdiv(M, BM) * cdiv(N, BN), SMS))
    sA = shared(bf16, (STAGES, BM, BK), swizzle=Swizzle(3, 3, 3))
    sB = shared(bf16, (STAGES, BN // 64, BK, 64), swizzle=Swizzle(3, 3, 3))
    sC = shared(f32, (2, EBUFS, 64, 32), swizzle=Swizzle(3, 2, 3))
    full = mbarrier(STAGES)
    empty = mbarrier(STAGES, arrivals=2)
    TM = cdiv(M, BM)
    TN = cdiv(N, BN)
    KT = cdiv(K, BK)
    EN = BN // 32
    ntiles = cdiv(TM * TN - block_id(0), grid_dim(0))
    if warpgroup_id() == 0:
        setmaxnreg(40)
        if thread_id() == 0:
            for i in range(ntiles):
                t = block_id(0) + i * grid_dim(0)
                bm = grouped_row(t, TM, TN, GROUP)
                bn = grouped_col(t, TM, TN, GROUP)
                bc = clamp_last(bn * (BN // 64), N // 64 - BN // 64)
                for k in range(KT):
                    it = i * KT + k
                    s = it % STAGES
                    mbarrier_wait(empty[s], (it // STAGES + 1) % 2)
                    mbarrier_arrive_expect_tx(full[s], (BM * BK + BK * BN) * 2)
                    tma_load(A.tile((BM, BK), (bm, k)), sA[s], full[s])
                    for j in range(BN // 64):
                        tma_load(B.tile((BK, 64), (k, bc + j)), sB[s, j], full[s])
    else:
        setmaxnreg(232)
        wg = warpgroup_id() - 1
        for i in range(ntiles):
            t = block_id(0) + i * grid_dim(0)
            bm = grouped_row(t, TM, TN, GROUP)
            bn = grouped_col(t, TM, TN, GROUP)
            bc = clamp_last(bn * (BN // 64), N // 64 - BN // 64)
            acc = fragment(f32, (BM, BN), mma="wgmma_bf16", warpgroups=(2, 1), first_warpgroup=1)
            for k in range(KT):
                it = i * KT + k
                s = it % STAGES
                mbarrier_wait(full[s], (it // STAGES) % 2)
                a = wgmma_operand(sA[s], acc, operand="A")
                b = wgmma_operand(sB[s], acc, operand="B")
                assert_tag(a, lambda r, c: A(bm * BM + r, k * BK + c))
                assert_tag(b, lambda r, c: B(k * BK + r, bc * 64 + c))
                wgmma(acc, a, b)
                wgmma_commit()
                wgmma_wait(1)
                if k > 0 and thread_id() % 128 == 0:
                    mbarrier_arrive(empty[(it - 1) % STAGES])
            wgmma_wait(0)
            if thread_id() % 128 == 0:
                mbarrier_arrive(empty[(i * KT + KT - 1) % STAGES])
            for j in range(EN):
                e = i * EN + j
                if thread_id() % 128 == 0:
                    tma_store_wait(EBUFS - 1)
                warpgroup_barrier()
                store(acc, sC[wg, e % EBUFS], at=(wg, j))
                fence_proxy_async()
                warpgroup_barrier()
                if thread_id() % 128 == 0:
                    tma_store(sC[wg, e % EBUFS], C.tile((64, 32), (bm * 2 + wg, bc * 2 + j)))
                    tma_store_commit()
        if thread_id() % 128 == 0:
            tma_store_wait(0)
