// verifier/walk_scalar.cc: scalar ops — integer and bool values become Z3
// terms over the thread, block and iteration variables; floats and values the
// walker does not follow are unknown (fresh terms where an integer is needed).
#include "absl/strings/str_cat.h"
#include "verifier/walker.h"

namespace argus::verifier::engine {

void Walker::StepScalar(const Op& op) {
  using dsl::ir::BinOp;
  using dsl::ir::CmpOp;
  auto opnd = [&](int i) -> Val& { return vals_[op.operands[i]]; };
  switch (op.code) {
    case OpCode::kConst: {
      const dsl::ir::Type& t = f_.vars[op.result].type;
      if (IsIntType(t)) {
        SetScalar(op.result,
                  t.dtype == dsl::DType::kBool ? c_.bool_val(op.ints[0] != 0) : I(op.ints[0]));
      } else {
        vals_[op.result] = Val{};
      }
      return;
    }
    case OpCode::kMov:
      vals_[op.result] = opnd(0);
      return;
    case OpCode::kBinary: {
      if (!IsIntType(f_.vars[op.result].type)) {
        vals_[op.result] = Val{};
        return;
      }
      if (f_.vars[op.result].type.dtype == dsl::DType::kBool) {
        SetScalar(op.result, BoolBinary(static_cast<BinOp>(op.sub), BoolOf(op.operands[0]),
                                        BoolOf(op.operands[1])));
        return;
      }
      SetScalar(op.result, IntBinary(static_cast<BinOp>(op.sub), IntOf(op.operands[0]),
                                     IntOf(op.operands[1])));
      return;
    }
    case OpCode::kUnary: {
      if (!IsIntType(f_.vars[op.result].type)) {
        vals_[op.result] = Val{};
        return;
      }
      auto u = static_cast<dsl::ir::UnaryOp>(op.sub);
      if (u == dsl::ir::UnaryOp::kNot) {
        SetScalar(op.result, !BoolOf(op.operands[0]));
      } else if (u == dsl::ir::UnaryOp::kNeg) {
        SetScalar(op.result, -IntOf(op.operands[0]));
      } else {
        SetScalar(op.result, Fresh("bitnot"));
      }
      return;
    }
    case OpCode::kCompare: {
      if (!IsIntType(f_.vars[op.operands[0]].type)) {
        SetScalar(op.result, Fresh("fcmp", true));
        return;
      }
      expr a = IntOf(op.operands[0]), b = IntOf(op.operands[1]);
      std::optional<expr> r;
      r = ApplyCmp(static_cast<CmpOp>(op.sub), a, b);
      SetScalar(op.result, r);
      return;
    }
    case OpCode::kSelect: {
      if (!IsIntType(f_.vars[op.result].type)) {
        vals_[op.result] = Val{};
        return;
      }
      SetScalar(op.result,
                z3::ite(BoolOf(op.operands[0]), IntOf(op.operands[1]), IntOf(op.operands[2])));
      return;
    }
    case OpCode::kCast: {
      const dsl::ir::Type& t = f_.vars[op.result].type;
      if (IsIntType(t) && IsIntType(f_.vars[op.operands[0]].type)) {
        SetScalar(op.result, IntOf(op.operands[0]));
      } else {
        Havoc(op.result);
      }
      return;
    }
    case OpCode::kMath:
      if (op.result >= 0) Havoc(op.result);
      return;
    case OpCode::kSpecial:
      StepSpecial(op);
      return;
    default:  // not a scalar op
      return;
  }
}

void Walker::StepSpecial(const Op& op) {
  using dsl::ir::SpecialOp;
  switch (static_cast<SpecialOp>(op.sub)) {
    case SpecialOp::kThreadId:
      SetScalar(op.result, *tid_);
      break;
    case SpecialOp::kBlockId: {
      size_t d = static_cast<size_t>(op.ints.empty() ? 0 : op.ints[0]);
      SetScalar(op.result, d < blk_.size() ? blk_[d] : I(0));
      break;
    }
    case SpecialOp::kGridDim: {
      size_t d = static_cast<size_t>(op.ints.empty() ? 0 : op.ints[0]);
      SetScalar(op.result, d < grid_.size() ? grid_[d] : I(1));
      break;
    }
    case SpecialOp::kWarpId:
      SetScalar(op.result, *tid_ / I(f_.warp_size));
      break;
    case SpecialOp::kLaneId:
      SetScalar(op.result, z3::mod(*tid_, I(f_.warp_size)));
      break;
    case SpecialOp::kWarpSize:
      SetScalar(op.result, I(f_.warp_size));
      break;
    case SpecialOp::kWarpGroupId:
      SetScalar(op.result, *tid_ / I(128));
      break;
  }
}

}  // namespace argus::verifier::engine
