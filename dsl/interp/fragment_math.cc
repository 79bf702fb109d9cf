// The fragment math family (docs/dsl.md "Fragment math"): elementwise ops,
// coordinates, row fills and accumulator-to-operand conversion, each on the
// elements a thread holds, and the warp's row reductions. Every fragment
// element is an f32.
#include <cmath>
#include <utility>
#include <vector>

#include "base/status.h"
#include "dsl/interp/machine.h"
#include "dsl/interp/scalar.h"

namespace argus::dsl::interp {
namespace {

// The third operand (select's else, fma's addend) is read only where used:
// reading a row operand's element costs a layout lookup.
template <class Third>
float FragEwApply(ir::FragEwOp fop, float x, float y, Third z) {
  switch (fop) {
    case ir::FragEwOp::kAdd:
      return x + y;
    case ir::FragEwOp::kSub:
      return x - y;
    case ir::FragEwOp::kMul:
      return x * y;
    case ir::FragEwOp::kDiv:
      return x / y;
    case ir::FragEwOp::kMax:
      return std::fmax(x, y);
    case ir::FragEwOp::kMin:
      return std::fmin(x, y);
    case ir::FragEwOp::kExp2:
      return static_cast<float>(std::exp2(static_cast<double>(x)));
    case ir::FragEwOp::kLt:
    case ir::FragEwOp::kLe:
    case ir::FragEwOp::kGt:
    case ir::FragEwOp::kGe:
    case ir::FragEwOp::kEq:
    case ir::FragEwOp::kNe: {
      auto c = static_cast<ir::CmpOp>(static_cast<int>(fop) - static_cast<int>(ir::FragEwOp::kLt));
      return ir::ApplyCmp(c, x, y) ? 1.0f : 0.0f;
    }
    case ir::FragEwOp::kSelect:
      return x != 0.0f ? y : z();
    case ir::FragEwOp::kFma:
      return std::fma(x, y, z());
  }
  return 0;
}

}  // namespace

// Fragments and scalars (broadcast) in; a row fragment in an accumulator-shaped
// op supplies each element its row's value.
void Machine::FragElementwise(const Thread& t, const ir::Op& op, const FragGeom& g, int n,
                              std::vector<float>* out) const {
  const Slot* s = t.slots.data() + t.base;
  const ir::Type& rt = k_.vars[op.result].type;
  struct Src {
    const std::vector<float>* f = nullptr;
    bool row_in_acc = false;
    float k = 0;
  };
  std::vector<Src> src(op.operands.size());
  for (size_t j = 0; j < op.operands.size(); ++j) {
    int v = op.operands[j];
    const ir::Type& vt = k_.vars[v].type;
    if (vt.is_frag()) {
      src[j].f = &t.frags[slots_.frag_slot[v]];
      src[j].row_in_acc = vt.frag.role == FragRole::kRow && rt.frag.role == FragRole::kAcc;
    } else {
      src[j].k = IsFloat(vt.dtype) ? static_cast<float>(s[v].f) : static_cast<float>(s[v].i);
    }
  }
  auto at = [&](size_t j, int e) -> float {
    if (j >= src.size()) return 0.0f;
    if (!src[j].f) return src[j].k;
    return (*src[j].f)[src[j].row_in_acc ? g.RowSlot(e) : e];
  };
  auto fop = static_cast<ir::FragEwOp>(op.sub);
  for (int e = 0; e < n; ++e)
    (*out)[e] = FragEwApply(fop, at(0, e), at(1, e), [&] { return at(2, e); });
}

// A wgmma in flight keeps its accumulator from being read and its register A
// from being overwritten.
absl::Status Machine::ExecFragMath(Thread& t, const Insn& in) {
  if (in.sync != ir::OpScope::kThread) return Park(t);  // row reductions
  const ir::Op& op = *in.op;
  const Slot* s = t.slots.data() + t.base;
  const ir::Type& rt = k_.vars[op.result].type;
  FragGeom g = rt.frag.Geom();
  int n = g.PerLane();
  std::vector<float> out(n);  // a thread holding none of it keeps zeros
  int unit = 0, lane = 0;
  if (!g.Locate(t.tid, &unit, &lane)) n = 0;
  for (int v : op.operands) {
    const ir::Type& vt = k_.vars[v].type;
    if (vt.is_frag() && vt.frag.role == FragRole::kAcc && t.frag_pending[slots_.frag_slot[v]] > 0)
      return AccBusy(t, &op, slots_.frag_slot[v]);
  }
  int res = slots_.frag_slot[op.result];
  if (t.frag_pending[res] > 0) return AccBusy(t, &op, res);
  switch (in.code) {
    case Bc::kFragEw:
      FragElementwise(t, op, g, n, &out);
      break;
    case Bc::kFragCoord:
      for (int e = 0; e < n; ++e) {
        int r, c;
        g.Coord(unit, lane, e, &r, &c);
        out[e] = static_cast<float>(op.ints[0] == 0 ? r : c);
      }
      break;
    case Bc::kFragRowFill:
      for (int e = 0; e < n; ++e) out[e] = static_cast<float>(s[op.operands[1]].f);
      break;
    case Bc::kToOperand: {
      // Each A element from the accumulator element at the same (row, col).
      FragGeom gc = k_.vars[op.operands[0]].type.frag.Geom();
      const std::vector<float>& acc = t.frags[slots_.frag_slot[op.operands[0]]];
      for (int e = 0; e < n; ++e) {
        int r0, c0, q = 0;
        g.Coord(unit, lane, e, &r0, &c0);
        for (; q < gc.PerLane(); ++q) {
          int r1, c1;
          gc.Coord(unit, lane, q, &r1, &c1);
          if (r1 == r0 && c1 == c0) break;
        }
        if (q == gc.PerLane()) return Err(t, &op, "to_operand: element not held by this lane");
        out[e] = static_cast<float>(Round(rt.dtype, acc[q]));
      }
      break;
    }
    default:
      return Err(t, &op, "not a fragment math op");
  }
  t.frags[res] = std::move(out);
  return absl::OkStatus();
}

// row_max / row_sum: in each lane, its elements of a row combined in element
// order; then x = x op shfl_xor(x, b) for each column lane bit b, ascending
// (docs/dsl.md) -- the order codegen emits, so the f32 sums agree bit for bit.
absl::Status Machine::FragRowReduce(Lanes& lanes, const Insn& in) {
  const ir::Op& op = *in.op;
  int n = static_cast<int>(lanes.size());
  if (n != k_.warp_size) return Err(*lanes[0], &op, "row reductions need a full warp");
  FragGeom g = k_.vars[op.operands[0]].type.frag.Geom();
  FragGeom gr = k_.vars[op.result].type.frag.Geom();
  bool is_max = op.sub == static_cast<uint8_t>(ir::ReduceKind::kMax);
  auto comb = [&](float a, float b) { return is_max ? std::fmax(a, b) : a + b; };
  int ic = slots_.frag_slot[op.operands[0]], ir_ = slots_.frag_slot[op.result];
  RETURN_IF_ERROR(CheckAccFree(lanes, &op, ic));
  int R = gr.PerLane();
  std::vector<std::vector<float>> p(n, std::vector<float>(R, 0.0f));
  for (int l = 0; l < n; ++l) {
    const std::vector<float>& acc = lanes[l]->frags[ic];
    std::vector<bool> seen(R, false);
    for (int e = 0; e < g.PerLane(); ++e) {
      int slot = g.RowSlot(e);
      p[l][slot] = seen[slot] ? comb(p[l][slot], acc[e]) : acc[e];
      seen[slot] = true;
    }
  }
  int bits = AccColumnLaneBits(*g.mma);
  for (int b = 1; b < n; b <<= 1) {
    if (!(bits & b)) continue;
    std::vector<std::vector<float>> q = p;
    for (int l = 0; l < n; ++l) {
      for (int j = 0; j < R; ++j) q[l][j] = comb(p[l][j], p[l ^ b][j]);
    }
    p.swap(q);
  }
  for (int l = 0; l < n; ++l) lanes[l]->frags[ir_] = p[l];
  return absl::OkStatus();
}

}  // namespace argus::dsl::interp
