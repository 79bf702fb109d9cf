"""Decode and skinny shapes of nn.Linear's layout (A [M, K] activations, B [N, K] the weight,
${dtype} in, f32 accumulate and out) on Hopper: swap-AB on wgmma."""


@kernel(threads=256, arch="sm_90a")
def gemm_wgmma_linear_swap(A: Tensor[${dtype}, "M", "K"], B: Tensor[${dtype}, "N", "K"],
                           C: Tensor[f32, "M", "N"], BM: const = 64, BX: const = 16,
                           BK: const = 64, STAGES: const = 8):
    """Decode and skinny shapes (small M): swap-AB, C^T = B @ A^T, so that the weight's rows fill
    wgmma's 64-row M side and the few rows of A sit in its N side (BX = 8..64), and every block
    streams one BM-row slab of the weight through a STAGES-deep ring (one producer warp group,
    one consumer). The accumulator holds C^T's (BM, BX) tile and goes to shared memory
    transposed; after a block barrier all threads copy it out with plain stores, each guarded by
    m < M and n < N, so any M and N. Boxes past the tensors' edges (the rows of A past M, the K
    tail) are zero-filled by the copy engine."""
    grid(cdiv(N, BM), cdiv(M, BX))
    bn = block_id(0)
    bx = block_id(1)
    KT = cdiv(K, BK)
    sW = shared(${dtype}, (STAGES, BM, BK), swizzle=Swizzle(3, 3, 3))
    sX = shared(${dtype}, (STAGES, BX, BK), swizzle=Swizzle(3, 3, 3))
    sC = shared(f32, (BX, BM))
    full = mbarrier(STAGES)
    empty = mbarrier(STAGES)
    acc = fragment(f32, (BM, BX), mma="wgmma_${dtype}", warpgroups=(1, 1), first_warpgroup=1)
    if warpgroup_id() == 0:
        setmaxnreg(40)
        if thread_id() == 0:
            for k in range(KT):
                s = k % STAGES
                mbarrier_wait(empty[s], (k // STAGES + 1) % 2)
                mbarrier_arrive_expect_tx(full[s], (BM * BK + BX * BK) * 2)
                tma_load(B.tile((BM, BK), (bn, k)), sW[s], full[s])
                tma_load(A.tile((BX, BK), (bx, k)), sX[s], full[s])
    else:
        setmaxnreg(232)
        for k in range(KT):
            s = k % STAGES
            mbarrier_wait(full[s], (k // STAGES) % 2)
            w = wgmma_operand(sW[s], acc, operand="A")
            x = wgmma_operand(sX[s].T, acc, operand="B")
            assert_tag(w, lambda r, c: B(bn * BM + r, k * BK + c))
            assert_tag(x, lambda r, c: A(bx * BX + c, k * BK + r))
            wgmma(acc, w, x)
            wgmma_commit()
            wgmma_wait(1)
            if k > 0 and thread_id() == 128:
                mbarrier_arrive(empty[(k - 1) % STAGES])
        wgmma_wait(0)
        store(acc, sC.T)
    barrier()
    for e in range(BX * BM // 256):
        q = e * 256 + thread_id()
        m = bx * BX + q // BM
        n = bn * BM + q % BM
        if m < M and n < N:
            C[m, n] = sC[q // BM, q % BM]
