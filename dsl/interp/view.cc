// The view family: allocations and windows onto memory. A sub-view must lie
// within its parent (but for a TMA's tile, which may reach past the tensor's
// edge); views carry no data of their own.
#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/status.h"
#include "dsl/interp/machine.h"

namespace argus::dsl::interp {
namespace {

View LayoutView(Buffer* b, const ir::Layout& l) {
  View v;
  v.buf = b;
  v.rank = static_cast<int>(l.shape.size());
  for (int d = 0; d < v.rank; ++d) {
    v.shape[d] = l.shape[d];
    v.stride[d] = l.stride[d];
  }
  return v;
}

}  // namespace

absl::Status Machine::SubviewCheck(const Thread& t, const ir::Op* op, const View& parent, int d,
                                   int64_t lo, int64_t ext) const {
  if (lo < 0 || ext < 0 || lo + ext > parent.shape[d]) {
    return Err(t, op,
               absl::StrCat("sub-view of ", parent.buf->name, " out of bounds: dim ", d, " range [",
                            lo, ", ", lo + ext, ") outside extent ", parent.shape[d]));
  }
  return absl::OkStatus();
}

absl::Status Machine::ExecView(Thread& t, const Insn& in) {
  const ir::Op& op = *in.op;
  const Slot* s = t.slots.data() + t.base;
  const std::vector<int>& vs = slots_.view_slot;
  switch (in.code) {
    case Bc::kAllocShared:
      t.views[in.dst] = LayoutView(&shared_[in.imm], op.layout);
      return absl::OkStatus();
    case Bc::kAllocLocal:
      t.views[in.dst] = LayoutView(&t.locals[in.imm], op.layout);
      return absl::OkStatus();
    case Bc::kExtent:
      t.slots[t.base + in.dst].i = t.views[in.a].shape[op.ints[0]];
      return absl::OkStatus();
    default:
      break;
  }
  View v = t.views[vs[op.operands[0]]];
  switch (in.code) {
    case Bc::kTile:
      for (int d = 0; d < v.rank; ++d) {
        int64_t lo = s[op.operands[1 + d]].i * op.ints[d];
        if (op.sub && d < 2) {  // a TMA's box: it may reach past the edge, even start past it
          if (lo < 0) RETURN_IF_ERROR(SubviewCheck(t, &op, v, d, lo, 0));
          v.inside[d] = std::clamp<int64_t>(v.shape[d] - lo, 0, op.ints[d]);
        } else {
          RETURN_IF_ERROR(SubviewCheck(t, &op, v, d, lo, op.ints[d]));
        }
        v.off += lo * v.stride[d];
        v.shape[d] = op.ints[d];
      }
      break;
    case Bc::kIndex: {
      int d = static_cast<int>(op.ints[0]);
      int64_t i = s[op.operands[1]].i;
      RETURN_IF_ERROR(SubviewCheck(t, &op, v, d, i, 1));
      v.off += i * v.stride[d];
      for (int e = d; e + 1 < v.rank; ++e) {
        v.shape[e] = v.shape[e + 1];
        v.stride[e] = v.stride[e + 1];
      }
      --v.rank;
      break;
    }
    case Bc::kSlice: {
      int d = static_cast<int>(op.ints[0]);
      int64_t step = op.ints[1];
      int64_t lo = s[op.operands[1]].i, hi = s[op.operands[2]].i;
      if (hi < lo) hi = lo;
      RETURN_IF_ERROR(SubviewCheck(t, &op, v, d, lo, hi - lo));
      v.off += lo * v.stride[d];
      v.shape[d] = (hi - lo + step - 1) / step;
      v.stride[d] *= step;
      break;
    }
    case Bc::kTranspose:
      std::swap(v.shape[0], v.shape[1]);
      std::swap(v.stride[0], v.stride[1]);
      break;
    case Bc::kReshape: {
      // Only a contiguous row-major view (unit dims aside) reshapes.
      int64_t expect = 1;
      for (int d = v.rank - 1; d >= 0; --d) {
        if (v.shape[d] != 1 && v.stride[d] != expect)
          return Err(t, &op, "reshape of a view that is not contiguous row-major");
        expect *= v.shape[d];
      }
      v.rank = static_cast<int>(op.ints.size());
      int64_t st = 1;
      for (int d = v.rank - 1; d >= 0; --d) {
        v.shape[d] = op.ints[d];
        v.stride[d] = st;
        st *= op.ints[d];
      }
      break;
    }
    default:
      break;
  }
  t.views[vs[op.result]] = v;
  return absl::OkStatus();
}

}  // namespace argus::dsl::interp
