"""Rotary position embedding of Q and K in one launch (rotate-half / NeoX form): for every token
t, head and i < D/2, with c = Cos[t, i], s = Sin[t, i]:
    out[i] = x[i] c - x[i + D/2] s,    out[i + D/2] = x[i + D/2] c + x[i] s.
One block per token; each thread rotates runs of VEC pairs of a head with 16-byte thread_copy
loads and stores (D/2 a multiple of VEC; other head dims go element by element)."""


@kernel(threads=NT)
def rope(Q: Tensor[${dtype}, "T", "HQ", "D"], K: Tensor[${dtype}, "T", "HK", "D"],
         Cos: Tensor[${dtype}, "T", "D2"], Sin: Tensor[${dtype}, "T", "D2"],
         QO: Tensor[${out_dtype}, "T", "HQ", "D"], KO: Tensor[${out_dtype}, "T", "HK", "D"],
         NT: const = 128, VEC: const = 8):
    grid(T)
    tok = block_id(0)
    x1 = local(${dtype}, (VEC,))
    x2 = local(${dtype}, (VEC,))
    cs = local(${dtype}, (VEC,))
    sn = local(${dtype}, (VEC,))
    o1 = local(${out_dtype}, (VEC,))
    o2 = local(${out_dtype}, (VEC,))
    if D2 % VEC == 0:
        per = D2 // VEC  # runs per head
        for w in range(thread_id(), (HQ + HK) * per, NT):
            h = w // per
            i = (w % per) * VEC
            thread_copy(Cos[tok, i:i + VEC], cs)
            thread_copy(Sin[tok, i:i + VEC], sn)
            if h < HQ:
                thread_copy(Q[tok, h, i:i + VEC], x1)
                thread_copy(Q[tok, h, D2 + i:D2 + i + VEC], x2)
            else:
                thread_copy(K[tok, h - HQ, i:i + VEC], x1)
                thread_copy(K[tok, h - HQ, D2 + i:D2 + i + VEC], x2)
            for v in range(VEC):
                o1[v] = f32(x1[v]) * f32(cs[v]) - f32(x2[v]) * f32(sn[v])
                o2[v] = f32(x2[v]) * f32(cs[v]) + f32(x1[v]) * f32(sn[v])
            if h < HQ:
                thread_copy(o1, QO[tok, h, i:i + VEC])
                thread_copy(o2, QO[tok, h, D2 + i:D2 + i + VEC])
            else:
                thread_copy(o1, KO[tok, h - HQ, i:i + VEC])
                thread_copy(o2, KO[tok, h - HQ, D2 + i:D2 + i + VEC])
    else:
        for w in range(thread_id(), (HQ + HK) * D2, NT):
            h = w // D2
            i = w % D2
            c = f32(Cos[tok, i])
            s = f32(Sin[tok, i])
            if h < HQ:
                a = f32(Q[tok, h, i])
                b = f32(Q[tok, h, D2 + i])
                QO[tok, h, i] = a * c - b * s
                QO[tok, h, D2 + i] = b * c + a * s
            else:
                a = f32(K[tok, h - HQ, i])
                b = f32(K[tok, h - HQ, D2 + i])
                KO[tok, h - HQ, i] = a * c - b * s
                KO[tok, h - HQ, D2 + i] = b * c + a * s
