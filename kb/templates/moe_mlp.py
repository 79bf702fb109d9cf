"""Fused top-k SwiGLU expert MLP:
Y[t] = sum_k Wt[t, k] * (silu(X[t] @ Wg[e]) * (X[t] @ Wu[e])) @ Wd[e] with e = Ids[t, k].
One block per token; the hidden activations are produced FT at a time into shared memory."""


@kernel(threads=NT)
def moe_mlp(X: Tensor[${dtype}, "T", "D"], Ids: Tensor[i32, "T", "TOPK"],
            Wt: Tensor[f32, "T", "TOPK"], Wg: Tensor[${dtype}, "E", "D", "F"],
            Wu: Tensor[${dtype}, "E", "D", "F"], Wd: Tensor[${dtype}, "E", "F", "D"],
            Y: Tensor[f32, "T", "D"], NT: const = 64, FT: const = 16):
    grid(T)
    t = block_id(0)
    sH = shared(f32, (FT,))
    for j in range(thread_id(), D, NT):
        Y[t, j] = 0.0
    for k in range(TOPK):
        # The router's ids are in [0, E); the clamp makes that provable (the
        # verifier cannot see the values), at two instructions a pick.
        e = min(max(Ids[t, k], 0), E - 1)
        w = Wt[t, k]
        for f0 in range(0, F, FT):
            barrier()
            for ff in range(thread_id(), FT, NT):
                g = 0.0
                u = 0.0
                for dd in range(D):
                    xv = f32(X[t, dd])
                    g += xv * f32(Wg[e, dd, f0 + ff])
                    u += xv * f32(Wu[e, dd, f0 + ff])
                sH[ff] = g / (1.0 + exp(-g)) * u
            barrier()
            for j in range(thread_id(), D, NT):
                a = Y[t, j]
                for ff in range(FT):
                    a += w * sH[ff] * f32(Wd[e, f0 + ff, j])
                Y[t, j] = a
