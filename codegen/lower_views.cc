// Pass 2 of the lowering: which buffer each view windows, and its static strides.
#include "absl/strings/str_cat.h"
#include "base/status.h"
#include "codegen/lower_internal.h"
#include "dsl/source.h"

namespace argus::codegen {

namespace ir = dsl::ir;
using ir::OpCode;

namespace {

class ViewPass {
 public:
  ViewPass(const ir::Module& m, const ir::Function& f) : m_(m), f_(f), facts_(f.vars.size()) {}

  absl::StatusOr<std::vector<ViewFact>> Run() {
    for (size_t i = 0; i < f_.tensors.size(); ++i) {
      const ir::TensorParam& t = f_.tensors[i];
      ViewFact v;
      v.root = ViewFact::Root::kTensor;
      v.tensor = static_cast<int>(i);
      for (const ir::SymInt& s : t.stride) v.stride.push_back(s.syms.empty() ? s.coeff : -1);
      facts_[t.var] = v;
    }
    // Twice: a view assigned late in a loop body reaches uses at its top.
    for (int round = 0; round < 2; ++round) RETURN_IF_ERROR(Block(f_.body));
    return facts_;
  }

 private:
  absl::Status Merge(const ir::Op& op, int var, ViewFact v) {
    ViewFact& cur = facts_[var];
    if (cur.root == ViewFact::Root::kNone) {
      cur = std::move(v);
      return absl::OkStatus();
    }
    if (cur.root != v.root || cur.alloc != v.alloc || cur.tensor != v.tensor) {
      return LoweringError(m_, op.loc,
                           absl::StrCat("view '", f_.vars[var].name,
                                        "' may window two different buffers; codegen needs one "
                                        "buffer per view variable"),
                           "use a separate variable per buffer");
    }
    for (size_t d = 0; d < cur.stride.size() && d < v.stride.size(); ++d) {
      if (cur.stride[d] != v.stride[d]) cur.stride[d] = -1;
    }
    return absl::OkStatus();
  }

  absl::Status Block(const ir::Block& b) {
    for (const ir::Op& op : b) {
      RETURN_IF_ERROR(One(op));
      for (const ir::Block& r : op.regions) RETURN_IF_ERROR(Block(r));
    }
    return absl::OkStatus();
  }

  absl::Status One(const ir::Op& op) {
    if (op.result < 0 || !f_.vars[op.result].type.is_view()) return absl::OkStatus();
    ViewFact v;
    switch (op.code) {
      case OpCode::kAllocShared:
      case OpCode::kAllocLocal:
        v.root = op.code == OpCode::kAllocShared ? ViewFact::Root::kShared : ViewFact::Root::kLocal;
        v.alloc = &op;
        v.stride = op.layout.stride;
        return Merge(op, op.result, v);
      default:
        break;
    }
    if (op.operands.empty()) return absl::OkStatus();
    const ViewFact& src = facts_[op.operands[0]];
    if (src.root == ViewFact::Root::kNone) return absl::OkStatus();  // next round
    v = src;
    switch (op.code) {
      case OpCode::kMov:
      case OpCode::kTile:
        break;
      case OpCode::kIndex:
        v.stride.erase(v.stride.begin() + op.ints[0]);
        break;
      case OpCode::kSlice: {
        int64_t& s = v.stride[op.ints[0]];
        if (s >= 0) s *= op.ints[1];
        break;
      }
      case OpCode::kTranspose:
        std::swap(v.stride[0], v.stride[1]);
        break;
      case OpCode::kReshape: {
        v.stride.assign(op.ints.size(), 1);
        for (int d = static_cast<int>(op.ints.size()) - 2; d >= 0; --d)
          v.stride[d] = v.stride[d + 1] * op.ints[d + 1];
        break;
      }
      default:
        return absl::OkStatus();
    }
    return Merge(op, op.result, v);
  }

  const ir::Module& m_;
  const ir::Function& f_;
  std::vector<ViewFact> facts_;
};

}  // namespace

absl::StatusOr<std::vector<ViewFact>> AnalyzeViews(const ir::Module& m, const ir::Function& f) {
  return ViewPass(m, f).Run();
}

}  // namespace argus::codegen
