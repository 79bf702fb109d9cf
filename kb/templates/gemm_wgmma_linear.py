"""C = A @ B^T on Hopper, nn.Linear's layout: A [M, K] (activations), B [N, K] (the weight, each
row one output feature), ${dtype} in, f32 accumulate and out. The warp-specialized persistent
TMA + wgmma pipeline of gemm_wgmma_tma_store.py with a K-major B operand: the producer loads
(BN, 64) boxes of B's rows into a 128-byte-swizzled stage, exactly as it loads A, and the
consumers hand wgmma its transpose (wgmma_operand(sB[s].T, ...): the descriptor of a K-major B,
no transpose bit). Any M, N, K with 16-byte rows (K % 8 == 0; N % 4 == 0 for C's rows): the
boxes past the tensors' edges are zero-filled by the copy engine (the K tail and the ragged
last row and column tiles), and the TMA stores of the epilogue are clipped at M and N."""


@kernel(threads=384, arch="sm_90a")
def gemm_wgmma_linear(A: Tensor[${dtype}, "M", "K"], B: Tensor[${dtype}, "N", "K"],
                      C: Tensor[f32, "M", "N"], BM: const = 128, BN: const = 256,
                      BK: const = 64, STAGES: const = 4, SMS: const = 132, GROUP: const = 16,
                      EBUFS: const = 2):
    grid(min(cdiv(M, BM) * cdiv(N, BN), SMS))
    sA = shared(${dtype}, (STAGES, BM, BK), swizzle=Swizzle(3, 3, 3))
    sB = shared(${dtype}, (STAGES, BN, BK), swizzle=Swizzle(3, 3, 3))
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
                first = t // (GROUP * TN) * GROUP
                rows = min(TM - first, GROUP)
                bm = first + t % (GROUP * TN) % rows
                bn = t % (GROUP * TN) // rows
                for k in range(KT):
                    it = i * KT + k
                    s = it % STAGES
                    mbarrier_wait(empty[s], (it // STAGES + 1) % 2)
                    mbarrier_arrive_expect_tx(full[s], (BM * BK + BN * BK) * 2)
                    tma_load(A.tile((BM, BK), (bm, k)), sA[s], full[s])
                    tma_load(B.tile((BN, BK), (bn, k)), sB[s], full[s])
    else:
        setmaxnreg(232)
        wg = warpgroup_id() - 1
        for i in range(ntiles):
            t = block_id(0) + i * grid_dim(0)
            first = t // (GROUP * TN) * GROUP
            rows = min(TM - first, GROUP)
            bm = first + t % (GROUP * TN) % rows
            bn = t % (GROUP * TN) // rows
            acc = fragment(f32, (BM, BN), mma="wgmma_${dtype}", warpgroups=(2, 1),
                           first_warpgroup=1)
            for k in range(KT):
                it = i * KT + k
                s = it % STAGES
                mbarrier_wait(full[s], (it // STAGES) % 2)
                a = wgmma_operand(sA[s], acc, operand="A")
                b = wgmma_operand(sB[s].T, acc, operand="B")
                assert_tag(a, lambda r, c: A(bm * BM + r, k * BK + c))
                assert_tag(b, lambda r, c: B(bn * BN + c, k * BK + r))
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
                    tma_store(sC[wg, e % EBUFS], C.tile((64, 32), (bm * 2 + wg, bn * EN + j)))
                    tma_store_commit()
        if thread_id() % 128 == 0:
            tma_store_wait(0)
