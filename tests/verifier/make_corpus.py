#!/usr/bin/env python3
"""Regenerates tests/verifier/bugs/*.py: each a correct example with one seeded bug.

Every entry: (name, base example, [(old, new)] edits, check, marker, what the counterexample
must show (substrings of the text report), dims, description). The expected line is the line of
`marker` in the generated file. Run from the repo root: tests/verifier/make_corpus.py
"""
import os

G = "M=4096,N=4096,K=4096"
WS = "../tests/verifier/clean/gemm_wgmma_ws"
WS1 = "../tests/verifier/clean/gemm_wgmma_ws_wait1"
SYNC = "../tests/verifier/clean/gemm_wgmma_sync"
FA_NO_ASSERTS = [
    ("            # Proved by the verifier (with P V's K-slice check: P's column j meets V's row j).\n", ""),
    ("            assert_tag(a, lambda i, j: Q(h, qb * BQ + i, kc * KC + j))\n", ""),
    ("            assert_tag(b, lambda i, j: K(h, t * BKV + j, kc * KC + i))\n", ""),
    ("        assert_tag(vb, lambda i, j: V(h, t * BKV + i, j))\n", ""),
]
FA3 = "flash_attention_wgmma"
FA3_DIMS = "RQ=4096,RKV=4096,BH=8,S=512"
FA3_DEF = "def flash_attention_wgmma("
BUGS = [
    ("strided_block_reduce_tail", "../tests/verifier/clean/strided_block_reduce",
     [("range(thread_id(), N, NT)", "range(thread_id(), N - 1, NT)")],
     "barrier_divergence", "s = block_reduce_sum(X[r, j])", ["does not reach it"], "R=64,N=4096,C=16",
     "an off-by-one loop bound: the block's last thread runs one chunk reduction fewer"),
    ("shift_missing_barrier", "../tests/verifier/clean/shift_shared", [("    barrier()\n", "")],
     "shared_race", "Y[i] = s[(t + 1) % 128]", ["racing write by thread"], "N=1000",
     "a scalar shared store read by the neighbour thread with no barrier between"),
    ("shift_unwritten_slot", "../tests/verifier/clean/shift_shared", [("    else:\n        s[t] = 0.0\n", "")],
     "uninitialized_read", "Y[i] = s[(t + 1) % 128]", ["uninitialized"], "N=1000",
     "threads past the end do not fill their slot, and their neighbour reads it"),
    ("b_fragment_transposed", "gemm_mma",
     [("BN: const = 128", "BN: const = 32"), ("copy_b = thread_layout((16, 16), vec=8)", "copy_b = thread_layout((32, 8), vec=4)"),
      ("b = load_fragment(sB[k % STAGES], acc", "b = load_fragment(sB[k % STAGES].T, acc")],
     "tag_assert", "assert_tag(b,", ["expected B(", "found B("], G,
     "the B fragment is loaded through a transposed view: lanes get B's elements in the wrong order"),
    ("iter_tag_wrong_stage", "../tests/verifier/clean/gemm_mma_iter_tag",
     [('tag(sA[nxt % STAGES], lambda i, j: nxt, "iter")', 'tag(sA[nxt % STAGES], lambda i, j: k, "iter")')],
     "tag_assert", 'assert_tag(a, lambda i, j: k, "iter")', ["expected iter=", "found iter=", "written at"], G,
     "the custom 'iter' tag of a refilled stage names the current iteration, not the one it fills"),
    ("tags_reset_before_assert", "../tests/verifier/clean/tags_doc_example",
     [("    barrier()\n    tag(", "    barrier()\n    reset_tags(s)\n    tag(")],
     "tag_assert", "assert_tag(s, lambda i, j: A(r0 + i, c0 + j))", ["reset_tags"], "M=256,K=256",
     "reset_tags forgets the data tags the assertion relies on"),
    ("stage_off_by_one", "gemm_mma", [("ldmatrix(sA[k % STAGES]", "ldmatrix(sA[(k + 1) % STAGES]")],
     "tag_assert", "assert_tag(a,", ["expected A(", "found A(", "written at", "in iteration k="], G,
     "pipeline stage index off by one: the A fragment is read from the stage being refilled"),
    ("missing_wait", "gemm_mma", [("        wait_group(STAGES - 2)\n", "")],
     "read_before_wait", "a = ldmatrix", ["written at", "cp_async"], G,
     "no wait_group before reading the stage an async copy fills"),
    ("wait_too_weak", "gemm_mma", [("wait_group(STAGES - 2)", "wait_group(STAGES - 1)")],
     "read_before_wait", "a = ldmatrix", ["written at"], G,
     "wait_group lets the group that fills the current stage stay in flight"),
    ("missing_barrier_after_wait", "gemm_mma", [("        barrier()\n        nxt", "        nxt")],
     "shared_race", "a = ldmatrix", ["racing write by thread", "async copy in flight"], G,
     "no barrier between the wait and the reads: other threads' copies are not visible"),
    ("wrong_tile_offset", "gemm_mma", [("cp_async(A.tile((BM, BK), (bm, nxt))", "cp_async(A.tile((BM, BK), (bm, k))")],
     "tag_assert", "assert_tag(a,", ["expected A(", "found A(", "in iteration k="], G,
     "the refill copies tile k instead of tile k + STAGES - 1"),
    ("k_slice_mismatch", "gemm_mma", [("b = load_fragment(sB[k % STAGES]", "b = load_fragment(sB[nxt % STAGES]")],
     "mma_k_mismatch", "mma(acc, a, b)", ["A column k=", "B row k="], G,
     "A and B fragments taken from different K slices"),
    ("fewer_buffers_than_stages", "gemm_mma", [("sA = shared(bf16, (STAGES, BM, BK)", "sA = shared(bf16, (STAGES - 1, BM, BK)")],
     "oob", "cp_async(A.tile((BM, BK), (bm, nxt))", ["out-of-bounds access to shared buffer sA"], G,
     "STAGES - 1 buffers for STAGES stages: the refill indexes past the buffer"),
    ("fewer_buffers_modulo", "gemm_mma",
     [("sA = shared(bf16, (STAGES, BM, BK)", "sA = shared(bf16, (STAGES - 1, BM, BK)"),
      ("sA[nxt % STAGES]", "sA[nxt % (STAGES - 1)]"), ("ldmatrix(sA[k % STAGES]", "ldmatrix(sA[k % (STAGES - 1)]"),
      ("sA[s], copy_a", "sA[s % (STAGES - 1)], copy_a")],
     "tag_assert", "assert_tag(a,", ["expected A(", "found A("], G,
     "one buffer for a two-stage pipeline: the refill overwrites the stage being read"),
    ("prologue_wrong_stage", "gemm_mma", [("cp_async(A.tile((BM, BK), (bm, s)), sA[s]", "cp_async(A.tile((BM, BK), (bm, s)), sA[s + 1]")],
     "uninitialized_read", "a = ldmatrix", ["uninitialized"], G,
     "the prologue fills the wrong stage: iteration 0 reads a stage no one wrote"),
    ("commit_before_copies", "gemm_mma",
     [("        if nxt < KT:\n", "        commit_group()\n        if nxt < KT:\n"),
      ("copy_b)\n        commit_group()\n        a =", "copy_b)\n        a =")],
     "read_before_wait", "a = ldmatrix", ["written at"], G,
     "the producer commits its group before issuing the copies, so they join the next group"),
    ("b_tile_swapped", "gemm_mma", [("cp_async(B.tile((BK, BN), (nxt, bn))", "cp_async(B.tile((BK, BN), (bn, nxt))")],
     "tag_assert", "assert_tag(b,", ["expected B(", "found B("], "M=4096,N=4096,K=8192",
     "B tile coordinates swapped in the refill"),
    ("mfma_missing_wait", "gemm_mfma", [("        wait_group(0)\n", "")],
     "read_before_wait", "a = load_fragment(sA, acc, operand=\"A\")", ["written at"], G,
     "AMD LDS-direct copies read before their wait"),
    ("mfma_a_tile_transposed", "gemm_mfma", [("copy_async(A.tile((BM, BK), (bm, k))", "copy_async(A.tile((BM, BK), (k, bm))")],
     "tag_assert", "assert_tag(a,", ["expected A(", "found A("], G,
     "A tile coordinates transposed (block row and K tile swapped)"),
    ("mfma16_missing_trailing_barrier", "gemm_mfma", [("        mfma_f32_16x16x16_bf16(acc, a, b)\n        barrier()\n", "        mfma_f32_16x16x16_bf16(acc, a, b)\n")],
     "shared_race", "def gemm_mfma16@@a = load_fragment(sA", ["racing"], G,
     "no barrier at the end of the K loop: the next iteration's copy overwrites data still being read"),
    ("smem_missing_barrier", "gemm_smem", [("        barrier()\n        for kk", "        for kk")],
     "shared_race", "acc[r] += sA[row0 + r, kk] * b", ["racing write by thread"], G,
     "no barrier between the tile copy and the reads"),
    ("smem_missing_trailing_barrier", "gemm_smem", [("                acc[r] += sA[row0 + r, kk] * b\n        barrier()\n", "                acc[r] += sA[row0 + r, kk] * b\n")],
     "shared_race", "acc[r] += sA[row0 + r, kk] * b", ["racing", "in iteration k="], G,
     "no barrier at the end of the loop: the next copy races with this iteration's reads"),
    ("smem_tail_tile_unmasked", "gemm_smem", [("for k in range(K // BK)", "for k in range(cdiv(K, BK))")],
     "oob", "copy(A.tile((BM, BK), (bm, k)), sA, tl)", ["out-of-bounds access to tensor A"], "M=4096,N=4096,K=1000",
     "the tail K tile is copied without a mask (K not a multiple of BK)"),
    ("smem_reads_padding", "gemm_smem", [("b = sB[kk, col]", "b = sB[kk, col + 1]")],
     "uninitialized_read", "b = sB[kk, col + 1]", ["uninitialized"], G,
     "reads the padding column of sB, which no copy writes"),
    ("smem_barrier_divergent", "gemm_smem", [("        barrier()\n        for kk", "        if thread_id() < 128:\n            barrier()\n        for kk")],
     "barrier_divergence", "barrier()", ["does not reach it"], G,
     "a barrier inside a branch that depends on the thread id"),
    ("vector_add_no_guard", "vector_add", [("    if i < N:\n        Z[i] = X[i] + Y[i]", "    Z[i] = X[i] + Y[i]")],
     "oob", "Z[i] = X[i] + Y[i]", ["out-of-bounds access to tensor"], "",
     "the tail block has no i < N guard"),
    ("naive_guard_off_by_one", "gemm_naive", [("if i < M and j < N", "if i <= M and j < N")],
     "oob", "acc += A[i, k] * B[k, j]", ["out-of-bounds access to tensor A"], "",
     "guard i <= M lets row M through"),
    ("softmax_reduce_divergent", "softmax", [("    m = block_reduce_max(m)\n", "    if thread_id() < 64:\n        m = block_reduce_max(m)\n")],
     "barrier_divergence", "m = block_reduce_max(m)", ["does not reach it"], "",
     "a block reduction (an implied barrier) under a thread-dependent branch"),
    ("flash_kv_tile_past_end", "flash_attention", [("for t in range(S // BKV)", "for t in range(S // BKV + 1)")],
     "oob", "copy(K[h].tile((BKV, HD), (t, 0)), sK, tl)", ["out-of-bounds access to tensor K"], "BH=4,S=256",
     "the K/V loop runs one tile past the sequence"),
    ("flash_missing_trailing_barrier", "flash_attention", [("                    m = m_new\n        barrier()\n", "                    m = m_new\n")],
     "shared_race", "s += q[d] * f32(sK[jj, d])", ["racing", "in iteration t="], "BH=4,S=256",
     "no barrier before the next K/V tile overwrites the one being read"),
    ("flash_missing_barrier", "flash_attention", [("        barrier()\n        if i < S:\n            for jj", "        if i < S:\n            for jj")],
     "shared_race", "s += q[d] * f32(sK[jj, d])", ["racing"], "BH=4,S=256",
     "no barrier between staging K/V and reading them"),
    # Tensor-core flash attention: tags through fragment math (S = Q K^T's column tags are the
    # key positions; to_operand(P) carries them into P V's K coordinate). The *_wrong_tile
    # entries drop the example's tag assertions: P V's implied K-slice check alone refutes them.
    ("fa_mma_v_wrong_tile", "flash_attention_mma",
     [("cp_async(V[h].tile((BKV, HD), (nt, 0))", "cp_async(V[h].tile((BKV, HD), (t, 0))")] + FA_NO_ASSERTS,
     "mma_k_mismatch", "mma(o, pa, vb)",
     ["A column k=", "(K dim 1 of K(", "B row k=", "(V dim 1 of V(", "written at", "in iteration t=", "to_operand"],
     "BH=4,S=256",
     "the prefetch refills V with the current tile: P's columns (keys of tile t) meet V rows of tile t - 1"),
    ("fa_mma_k_wrong_tile", "flash_attention_mma",
     [("cp_async(K[h].tile((BKV, HD), (nt, 0))", "cp_async(K[h].tile((BKV, HD), (t, 0))")] + FA_NO_ASSERTS,
     "mma_k_mismatch", "mma(o, pa, vb)", ["A column k=", "(K dim 1", "B row k=", "(V dim 1", "mma at line"], "BH=4,S=256",
     "the prefetch refills K with the current tile: P is built from S of the wrong keys, V is right"),
    ("fa_mma_qk_k_slice", "flash_attention_mma",
     [("sK[buf].T.tile((KC, BKV), (kc, 0))", "sK[buf].T.tile((KC, BKV), (0, 0))")],
     "mma_k_mismatch", "mma(s, a, b)", ["(Q dim 2", "(K dim 2", "iteration kc="], "BH=4,S=256",
     "Q K^T takes the first head-dim slice of K for every slice of Q (rank-3 tags, transposed B view)"),
    ("fa_mma_v_wrong_stage", "flash_attention_mma",
     [("ldmatrix(sV[buf], o", "ldmatrix(sV[1 - buf], o")],
     "read_before_wait", "vb = ldmatrix(sV", ["written at", "cp_async(V"], "BH=4,S=256",
     "P V reads the V stage the prefetch is still filling"),
    # Hopper: TMA + mbarrier pipelines, wgmma (tests/verifier/clean/gemm_wgmma_*.py)
    ("hopper_parity_wrong", WS, [("mbarrier_wait(full[s], (k // STAGES) % 2)", "mbarrier_wait(full[s], k % 2)")],
     "mbarrier_parity", "mbarrier_wait(full[s]", ["expected parity", "filled in iteration k=", "returns once phase"], G,
     "the consumer's full-barrier parity flips every iteration instead of every pass over the ring"),
    ("hopper_parity_shifted", WS, [("mbarrier_wait(full[s], (k // STAGES) % 2)", "mbarrier_wait(full[s], (k // STAGES + 1) % 2)")],
     "read_before_wait", "a = wgmma_operand(sA[s]", ["filled in iteration k=", "observes phase -1", "tma_load(A.tile"], G,
     "the consumer waits with the other parity: on the first pass it returns at once, before the TMA lands"),
    ("hopper_wait_wrong_stage", WS, [("mbarrier_wait(full[s], (k // STAGES) % 2)", "mbarrier_wait(full[(k + 1) % STAGES], (k // STAGES) % 2)")],
     "read_before_wait", "a = wgmma_operand(sA[s]", ["written at", "in iteration k=", "observes phase"], G,
     "the consumer waits on the next stage's barrier and reads its own stage unsynchronized"),
    ("hopper_tma_wrong_tile", WS, [("tma_load(A.tile((BM, BK), (bm, k))", "tma_load(A.tile((BM, BK), (bm, k + 1))")],
     "tag_assert", "assert_tag(a,", ["expected A(", "found A(", "tma_load"], G,
     "the producer loads the next K tile of A into the stage"),
    ("hopper_missing_empty_wait", WS, [("                if k >= STAGES:\n                    mbarrier_wait(empty[s], (k // STAGES - 1) % 2)\n", "")],
     "stage_overwrite", "tma_load(A.tile((BM, BK)", ["before its consumers released it", "read at line"], G,
     "the producer refills a stage without waiting on its empty barrier"),
    ("hopper_release_before_wgmma_done", WS, [("            wgmma_wait(0)\n            if thread_id()", "            wgmma_wait(1)\n            if thread_id()"),
                                              ("        store(acc", "        wgmma_wait(0)\n        store(acc")],
     "stage_overwrite", "tma_load(A.tile((BM, BK)", ["before its consumers released it"], G,
     "the consumers release the stage while the wgmma reading it may still be in flight"),
    ("hopper_acc_read_before_wait", WS1, [("        wgmma_wait(0)\n        store(acc", "        store(acc")],
     "wgmma_read_before_wait", "store(acc, C.tile", ["wgmma group", "known complete"], G,
     "the epilogue stores the accumulator with the last wgmma group still in flight"),
    ("hopper_tx_bytes_short", WS, [("(BM * BK + BK * BN) * 2", "(BM * BK) * 2")],
     "mbarrier_tx", "mbarrier_arrive_expect_tx(full[s]", ["transaction bytes", "completes before the data lands"], G,
     "expect_tx counts only A's bytes: the phase completes while B is in flight"),
    ("hopper_arrivals_mismatch", WS, [("empty = mbarrier(STAGES, arrivals=2)", "empty = mbarrier(STAGES)")],
     "mbarrier_count", "mbarrier_arrive(empty[s])", ["expects 1 arrivals per phase", "brings 2"], G,
     "two consumer warp groups arrive on an empty barrier that expects one arrival"),
    ("hopper_deadlock", WS, [("                if k >= STAGES:\n                    mbarrier_wait(empty[s], (k // STAGES - 1) % 2)\n",
                              "                mbarrier_wait(empty[s], (k // STAGES) % 2)\n")],
     "mbarrier_hang", "mbarrier_wait(empty[s]", ["deadlock"], G,
     "the producer's first pass waits for a release no consumer can give yet"),
    ("hopper_setmaxnreg_divergent", WS, [("        setmaxnreg(232)\n", "        if thread_id() < 320:\n            setmaxnreg(232)\n")],
     "warpgroup_divergence", "setmaxnreg(232)", ["does not reach it"], G,
     "setmaxnreg (warp-group collective) under a branch that splits a warp group"),
    ("hopper_wgmma_divergent", WS, [("            wgmma(acc, a, b)\n", "            if thread_id() % 128 < 64:\n                wgmma(acc, a, b)\n")],
     "warpgroup_divergence", "wgmma(acc, a, b)", ["does not reach it"], G,
     "wgmma issued by half of each consumer warp group"),
    ("hopper_store_in_producer", WS, [("        setmaxnreg(40)\n", "        setmaxnreg(40)\n        store(acc, C.tile((BM, BN), (bm, bn)))\n")],
     "warpgroup_divergence", "store(acc, C.tile", ["holds no part of its accumulator"], G,
     "the producer warp group stores an accumulator only the consumer warp groups hold"),
    ("hopper_barrier_in_role", WS, [("        setmaxnreg(232)\n", "        setmaxnreg(232)\n        barrier()\n")],
     "barrier_divergence", "        barrier()", ["does not reach it"], G,
     "a block-wide barrier inside the consumer role: the producer warp group never reaches it"),
    ("hopper_missing_proxy_fence", SYNC, [("        fence_proxy_async()\n", "")],
     "proxy_fence", "a = wgmma_operand(sA", ["fence_proxy_async", "written at"], G,
     "ordinary copies feed wgmma (the async proxy) without fence_proxy_async"),
    ("hopper_wgmma_smem_race", SYNC, [("        wgmma_wait(0)\n        barrier()\n", "        wgmma_wait(0)\n")],
     "shared_race", "a = wgmma_operand(sA", ["racing write", "until the wgmma_wait"], G,
     "no barrier after wgmma_wait: the next iteration's copy overwrites a tile the other warp group's wgmma still reads"),
    # FA3-style Hopper attention (kb/templates/flash_attention_wgmma.py; S = 512: four K/V tiles, two
    # passes over the 2-stage rings). The first two and the last are in the overlapped kernel
    # (peeled first and last iterations, P(t-1) carried into iteration t as a register operand).
    ("fa3_parity_shifted", FA3,
     [(FA3_DEF + "@@mbarrier_wait(kfull[s], (t // STAGES) % 2)", "mbarrier_wait(kfull[s], (t // STAGES + 1) % 2)")],
     "mbarrier_parity", FA3_DEF + "@@mbarrier_wait(kfull[s]", ["expected parity", "filled in iteration t=", "returns once phase"],
     FA3_DIMS, "the loop's wait on kfull uses the parity of the next round (the peeled first wait fixes the convention)"),
    ("fa3_s_read_before_wait", FA3,
     [(FA3_DEF + "@@            wgmma_wait(1)                  # S(t) has landed; P(t-1) V(t-1) may still run\n", "")],
     "wgmma_read_before_wait", FA3_DEF + "@@m_new = max(m_i, row_max(sc))", ["expected wgmma group", "known complete"],
     FA3_DIMS, "the softmax reads S(t) with no wgmma_wait covering its wgmma (the wait(1) after the two commits is gone)"),
    ("fa3_k_not_transposed", FA3,
     [("BN: const = 128, STAGES", "BN: const = 64, STAGES"),
      ("b0 = wgmma_operand(sK[s, 0].T, sc", "b0 = wgmma_operand(sK[s, 0], sc"),
      ("            assert_tag(b0, lambda i, j: K(hk * S + t * BN + j, i))\n", "")],
     "mma_k_mismatch", "wgmma(sc, a0, b0)", ["A column k=", "B row k=", "(K dim 0 of K("],
     FA3_DIMS, "S = Q K^T's B operand taken from the K tile without .T (row-major where wgmma needs K-major; BN = 64 so the shapes agree): B's rows are key positions, not head-dim columns"),
    ("fa3_p_rewritten_in_flight", FA3,
     [(FA3_DEF + "@@            m_i = m_new\n            wgmma_wait(0)\n", "            m_i = m_new\n            pa = to_operand(p, o)\n            wgmma_wait(0)\n"),
      (FA3_DEF + "@@            o = o * corr\n            pa = to_operand(p, o)\n", "            o = o * corr\n")],
     "wgmma_operand_overwrite", FA3_DEF + "@@for t in range(1, nkv)@@pa = to_operand(p, o)",
     ["expected wgmma group", "known complete", "iteration t="],
     FA3_DIMS, "P(t) is written into the register operand before the wgmma_wait(0) that covers P(t-1) V(t-1), which still reads it"),
    # The ping-pong FA3 kernel: named barriers order the two consumer warp groups' wgmmas.
    ("fa3_pingpong_sync_count", FA3,
     [("        named_barrier_sync(mine, 256)\n", "        named_barrier_sync(mine, 128)\n")],
     "named_barrier_count", "named_barrier_sync(mine, 128)", ["different thread counts (128, 256)", "threads on barrier 5"],
     FA3_DIMS, "a consumer group's first sync counts only its own 128 threads: its barrier (3 + warp group: 4, 5) is used with counts 128 and 256 (the other group's arrivals complete a generation early)"),
    ("fa3_pingpong_arrive_half_warp", FA3,
     [("        named_barrier_arrive(other, 256)\n        wgmma_wait(0)\n",
       "        if thread_id() % 32 < 16:\n            named_barrier_arrive(other, 256)\n        wgmma_wait(0)\n")],
     "warpgroup_divergence", "if thread_id() % 32 < 16:@@named_barrier_arrive(other, 256)", ["does not reach it"],
     FA3_DIMS, "half of each warp arrives on the other group's barrier (named barriers are reached by whole warp groups)"),
    ("fa3_pingpong3_release_count", FA3,
     [("EARLY: const = True, CWG: const = 2", "EARLY: const = True, CWG: const = 3"),
      ("    kempty = mbarrier(STAGES, arrivals=CWG)\n", "    kempty = mbarrier(STAGES, arrivals=2)\n")],
     "mbarrier_count", "def flash_attention_wgmma_pingpong(@@mbarrier_arrive(kempty[0])",
     ["expects 2 arrivals per phase", "brings 3"],
     FA3_DIMS, "three consumer warp groups (CWG = 3) but K stages that count two releases per phase: a stage goes back to the producer before the third group's S(t) has read it"),
    ("fa3_pv_wrong_tile", FA3,
     [(FA3_DEF + "@@tma_load(V.tile((BN, 64), (hk * (S // BN) + t, c)), sV[s, c], vfull[s])",
       "tma_load(V.tile((BN, 64), (hk * (S // BN) + nkv - 1 - t, c)), sV[s, c], vfull[s])"),
      (FA3_DEF + "@@            assert_tag(vb, lambda i, j: V(hk * S + (t - 1) * BN + i, j))\n", "")],
     "mma_k_mismatch", FA3_DEF + "@@wgmma(o, pa, vb)", ["A column k=", "B row k=", "to_operand", "written at", "in iteration t="],
     FA3_DIMS, "the producer streams the V tiles in reverse: P(t-1), carried into iteration t as the register A operand, meets another tile's V rows"),
    ("wgmma_store_rows_swapped", "gemm_wgmma",
     [("store(acc, C.tile((BM, BN), (bm, bn)))", "store(acc, C.tile((BM, BN), (bm ^ 1, bn)))")],
     "tag_flow", "store(acc, C.tile((BM, BN), (bm ^ 1, bn)))", ["of 'acc' to C(", "but the wgmma operand tags put it at C("], G,
     "the epilogue stores each accumulator tile into its neighbour's rows (bm ^ 1): in bounds, every element written once, all in the wrong place"),
    ("tma_store_silu_groups_swapped", "gemm_wgmma_tma_store",
     [("store(acc, sC[wg, e % EBUFS], at=(wg, j))",
       "store(acc / (1.0 + exp2(acc * -1.4426950408889634)), sC[wg, e % EBUFS], at=(wg, j))"),
      ("C.tile((64, 32), (bm * 2 + wg, bc * 2 + j))", "C.tile((64, 32), (bm * 2 + 1 - wg, bc * 2 + j))")],
     "tag_flow", "C.tile((64, 32), (bm * 2 + 1 - wg, bc * 2 + j))", ["made of accumulator 'acc' element by element", "but the wgmma operand tags put it at C("], G,
     "a silu epilogue (fragment math on the accumulator) whose TMA stores send each consumer warp group's rows to the other group's: the stored value is no accumulator, but each element is made of the accumulator's element there"),
    ("tma_subtile_loop_short", "../tests/verifier/clean/tma_subtile_loop",
     [("for r in range(BM // 64):  # A in 64-row boxes, one sub-tile of the stage each",
       "for r in range(BM // 64 - 1):  # one box short: the last 64 rows are never filled")],
     "uninitialized_read", "a = wgmma_operand(sA[s]", ["found uninitialized", "at (64,"], G,
     "a loop of 64-row TMA boxes one short of the stage: the second consumer warp group reads rows that no load fills"),
    ("fa3_pingpong3_q_box_short", FA3,
     [("EARLY: const = True, CWG: const = 2", "EARLY: const = True, CWG: const = 3"),
      ("                for r in range(CWG):\n", "                for r in range(CWG - 1):\n"),
      ("def flash_attention_wgmma_pingpong(@@            mbarrier_arrive_expect_tx(qbar[0], BM * HD * 2)\n",
       "            mbarrier_arrive_expect_tx(qbar[0], (BM - 64) * HD * 2)\n")],
     "uninitialized_read", "def flash_attention_wgmma_pingpong(@@wgmma_operand(sQ[0]",
     ["found uninitialized"],
     FA3_DIMS, "three consumer warp groups, but the producer loads only two of the three 64-row Q boxes (and announces their bytes): the third group's S = Q K^T reads rows of sQ that nothing fills"),
]

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def main():
    out = os.path.join(HERE, "bugs")
    os.makedirs(out, exist_ok=True)
    for name, base, edits, check, marker, cex, dims, desc in BUGS:
        # A base named by its example name may have moved to the KB's templates.
        path = os.path.join(ROOT, "examples", base + ".py")
        if not os.path.exists(path):
            path = os.path.join(ROOT, "kb", "templates", base + ".py")
        text = open(path).read()
        text = "\n".join(l for l in text.split("\n") if not l.startswith("# "))
        for old, new in edits:
            # "anchor@@old": the first `old` after the first `anchor` (one kernel of several).
            at = 0
            if "@@" in old:
                anchor, old = old.split("@@")
                at = text.index(anchor)
            assert old in text[at:], (name, old)
            text = text[:at] + text[at:].replace(old, new, 1)
        header = [f"# verifier-bug: {desc}", f"# seeded into {os.path.normpath(os.path.join('examples', base))}.py", None]
        for c in cex:
            header.append(f"# cex: {c}")
        if dims:
            header.append(f"# dims: {dims}")
        body_lines = text.split("\n")
        nhead = len(header)
        start = 0
        # "a@@b@@marker": the first line with `marker` after the first with `a`, then with `b`.
        *anchors, marker = marker.split("@@")
        for anchor in anchors:
            start = next(i for i, l in enumerate(body_lines) if i >= start and anchor in l)
        line = next(i for i, l in enumerate(body_lines) if i >= start and marker in l) + 1 + nhead
        header[2] = f"# expect: {check} line {line}"
        with open(os.path.join(out, name + ".py"), "w") as f:
            f.write("\n".join(header) + "\n" + text)


if __name__ == "__main__":
    main()
