// The fragment family: mma accumulators and operands in the instructions'
// real per-lane layouts (mma.h) — making, loading and storing them per
// thread, and the warp's mma.
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status.h"
#include "dsl/interp/machine.h"
#include "dsl/interp/memory.h"
#include "dsl/interp/scalar.h"

namespace argus::dsl::interp {

absl::Status Machine::ExecFragment(Thread& t, const Insn& in) {
  if (in.sync != ir::OpScope::kThread) return Park(t);  // mma
  switch (in.code) {
    case Bc::kFragment: {
      const ir::FragType& ft = k_.vars[in.op->result].type.frag;
      if (t.frag_pending[in.dst] > 0) return AccBusy(t, in.op, in.dst);
      t.frags[in.dst].assign(ft.Geom().PerLane(), 0.0f);
      return absl::OkStatus();
    }
    case Bc::kLoadFragment:
      return LoadFragment(t, in);
    case Bc::kStoreFragment:
      return StoreFragment(t, in);
    default:
      return absl::OkStatus();
  }
}

absl::Status Machine::LoadFragment(Thread& t, const Insn& in) {
  const ir::Op& op = *in.op;
  const View& v = t.views[slots_.view_slot[op.operands[0]]];
  FragGeom g = k_.vars[op.result].type.frag.Geom();
  std::vector<float>& fr = t.frags[slots_.frag_slot[op.result]];
  int n = g.PerLane();
  fr.resize(n);
  int unit, ul;
  if (!g.Locate(t.tid, &unit, &ul)) n = 0;
  for (int e = 0; e < n; ++e) {
    int r, c;
    g.Coord(unit, ul, e, &r, &c);
    int64_t idx[2] = {r, c}, p;
    RETURN_IF_ERROR(Access(t, &op, v, idx, 2, &p));
    fr[e] = static_cast<float>(v.buf->data[p].f);
  }
  return absl::OkStatus();
}

// store(acc, dst) writes the whole accumulator; store(acc, dst, at=(i, j))
// the elements in rows [i*h, i*h+h) and columns [j*w, j*w+w) of a (h, w)
// dst, relative to that sub-tile. Each thread writes the elements it holds.
absl::Status Machine::StoreFragment(Thread& t, const Insn& in) {
  const ir::Op& op = *in.op;
  const Slot* s = t.slots.data() + t.base;
  const View& v = t.views[slots_.view_slot[op.operands[1]]];
  FragGeom g = k_.vars[op.operands[0]].type.frag.Geom();
  int fs = slots_.frag_slot[op.operands[0]];
  if (t.frag_pending[fs] > 0) return AccBusy(t, &op, fs);
  const std::vector<float>& fr = t.frags[fs];
  bool part = op.operands.size() == 4;
  int unit, ul;
  if (!g.Locate(t.tid, &unit, &ul)) {
    if (part) return absl::OkStatus();  // holds none of the sub-tile
    return Err(t, &op,
               absl::StrCat("this thread holds no part of the accumulator (its ",
                            g.mma->wgmma ? "warp groups are " : "warps are ", g.first, "..",
                            g.first + g.wm * g.wn - 1, ")"));
  }
  int64_t r0 = 0, c0 = 0, h = g.bm, w = g.bn;
  if (part) {
    h = v.shape[0];
    w = v.shape[1];
    r0 = s[op.operands[2]].i * h;
    c0 = s[op.operands[3]].i * w;
    if (r0 < 0 || r0 >= g.bm || c0 < 0 || c0 >= g.bn)
      return Err(t, &op,
                 absl::StrCat("sub-tile (", s[op.operands[2]].i, ", ", s[op.operands[3]].i,
                              ") is outside the ", g.bm, "x", g.bn, " accumulator"));
  }
  for (int e = 0; e < g.PerLane(); ++e) {
    int r, c;
    g.Coord(unit, ul, e, &r, &c);
    if (r < r0 || r >= r0 + h || c < c0 || c >= c0 + w) continue;
    int64_t idx[2] = {r - r0, c - c0}, p;
    RETURN_IF_ERROR(Access(t, &op, v, idx, 2, &p));
    if (!v.buf->bulk_readers.empty()) RETURN_IF_ERROR(CheckBulkFree(t, &op, *v.buf, p));
    Slot x;
    x.f = fr[e];
    v.buf->data[p] = Convert(x, DType::kF32, v.buf->dt);
  }
  return absl::OkStatus();
}

// acc += a @ b for every instruction tile of this warp: each instruction's
// operands gathered from the lanes' registers, summed in double and rounded
// to f32 per k-step.
absl::Status Machine::Mma(Lanes& lanes, const Insn& in) {
  const ir::Op& op = *in.op;
  int n = static_cast<int>(lanes.size());
  if (n != k_.warp_size) return Err(*lanes[0], &op, "mma needs a full warp");
  FragGeom gc = k_.vars[op.operands[0]].type.frag.Geom();
  FragGeom ga = k_.vars[op.operands[1]].type.frag.Geom();
  const MmaInfo& mi = *gc.mma;
  int ic = slots_.frag_slot[op.operands[0]], ia = slots_.frag_slot[op.operands[1]],
      ib = slots_.frag_slot[op.operands[2]];
  RETURN_IF_ERROR(CheckAccFree(lanes, &op, ic));
  int TM = gc.TilesM(), TN = gc.TilesN(), TK = ga.TilesK();
  std::vector<double> A(mi.m * mi.k), B(mi.k * mi.n), C(mi.m * mi.n);
  for (int tm = 0; tm < TM; ++tm) {
    for (int tn = 0; tn < TN; ++tn) {
      for (int l = 0; l < n; ++l) {
        const std::vector<float>& acc = lanes[l]->frags[ic];
        for (int r = 0; r < mi.regs_c; ++r) {
          int row, col;
          mi.c_coord(l, r, &row, &col);
          C[row * mi.n + col] = acc[(tm * TN + tn) * mi.regs_c + r];
        }
      }
      for (int tk = 0; tk < TK; ++tk) {
        for (int l = 0; l < n; ++l) {
          const std::vector<float>& fa = lanes[l]->frags[ia];
          const std::vector<float>& fb = lanes[l]->frags[ib];
          for (int r = 0; r < mi.regs_a; ++r) {
            int row, col;
            mi.a_coord(l, r, &row, &col);
            A[row * mi.k + col] = fa[(tm * TK + tk) * mi.regs_a + r];
          }
          for (int r = 0; r < mi.regs_b; ++r) {
            int row, col;
            mi.b_coord(l, r, &row, &col);
            B[row * mi.n + col] = fb[(tk * TN + tn) * mi.regs_b + r];
          }
        }
        for (int i = 0; i < mi.m; ++i) {
          for (int j = 0; j < mi.n; ++j) {
            double sum = C[i * mi.n + j];
            for (int kk = 0; kk < mi.k; ++kk) sum += A[i * mi.k + kk] * B[kk * mi.n + j];
            C[i * mi.n + j] = static_cast<float>(sum);
          }
        }
      }
      for (int l = 0; l < n; ++l) {
        std::vector<float>& acc = lanes[l]->frags[ic];
        for (int r = 0; r < mi.regs_c; ++r) {
          int row, col;
          mi.c_coord(l, r, &row, &col);
          acc[(tm * TN + tn) * mi.regs_c + r] = static_cast<float>(C[row * mi.n + col]);
        }
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace argus::dsl::interp
