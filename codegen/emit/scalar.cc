// The kScalar family: constants, moves, arithmetic, comparisons, casts, math
// functions and the thread/block indices.
#include "codegen/emit/emitter.h"

namespace argus::codegen::emit {

absl::Status Emitter::ScalarOp(const ir::Op& op) {
  switch (op.code) {
    case OpCode::kConst:
      return Const(op);
    case OpCode::kMov:
      return Mov(op);
    case OpCode::kBinary: {
      DType t = VT(op.result).dtype;
      Value* x = GetAs(op.operands[0], t);
      Value* y = GetAs(op.operands[1], t);
      auto bop = static_cast<ir::BinOp>(op.sub);
      Set(op.result, dsl::IsFloat(t) ? FloatBin(bop, x, y, t) : IntBin(bop, x, y, t));
      return absl::OkStatus();
    }
    case OpCode::kUnary:
      return Unary(op);
    case OpCode::kCompare:
      return Compare(op);
    case OpCode::kSelect: {
      DType t = VT(op.result).dtype;
      Set(op.result,
          b_.CreateSelect(Get(op.operands[0]), GetAs(op.operands[1], t), GetAs(op.operands[2], t)));
      return absl::OkStatus();
    }
    case OpCode::kCast:
      Set(op.result, GetAs(op.operands[0], VT(op.result).dtype));
      return absl::OkStatus();
    case OpCode::kMath:
      return Math(op);
    case OpCode::kSpecial:
      return Special(op);
    default:
      return NotLowered(op);
  }
}

absl::Status Emitter::Const(const ir::Op& op) {
  const ir::Type& t = VT(op.result);
  if (dsl::IsFloat(t.dtype))
    Set(op.result, llvm::ConstantFP::get(Ty(t.dtype), op.fval));
  else
    Set(op.result, llvm::ConstantInt::get(Ty(t.dtype), op.ints.empty() ? 0 : op.ints[0], true));
  return absl::OkStatus();
}

// A move copies whatever the variable holds: a view's registers, the view a
// wgmma descriptor names, a fragment's elements (packed pairs where both
// sides keep them), or a converted scalar.
absl::Status Emitter::Mov(const ir::Op& op) {
  const ir::Type& t = VT(op.result);
  int src = op.operands[0];
  if (t.is_view()) {
    StoreView(op.result, LoadView(src));
  } else if (t.is_frag() && t.frag.is_desc()) {
    desc_src_[op.result] = desc_src_[src];
  } else if (t.is_frag()) {
    int n = t.frag.Geom().PerLane();
    if (FragPairs(op.result) && FragPairs(src)) {
      for (int e = 0; e < n; e += 2) FragSetPair(op.result, e, FragGetPair(src, e));
    } else {
      for (int e = 0; e < n; ++e) FragSet(op.result, e, FragGet(src, e));
    }
  } else {
    Set(op.result, GetAs(src, t.dtype));
  }
  return absl::OkStatus();
}

absl::Status Emitter::Unary(const ir::Op& op) {
  DType t = VT(op.result).dtype;
  Value* x = Get(op.operands[0]);
  Value* r;
  switch (static_cast<ir::UnaryOp>(op.sub)) {
    case ir::UnaryOp::kNeg:
      r = dsl::IsFloat(t) ? FromF32(b_.CreateFNeg(ToF32(x)), t) : b_.CreateNeg(x);
      break;
    case ir::UnaryOp::kNot:
      r = b_.CreateICmpEQ(x, llvm::Constant::getNullValue(x->getType()));
      break;
    default:
      r = b_.CreateNot(x);
  }
  Set(op.result, Convert(r, op.sub == 1 ? DType::kBool : t, t));
  return absl::OkStatus();
}

absl::Status Emitter::Compare(const ir::Op& op) {
  DType t = VT(op.operands[0]).dtype;
  Value* x = Get(op.operands[0]);
  Value* y = GetAs(op.operands[1], t);
  auto c = static_cast<ir::CmpOp>(op.sub);
  Value* r;
  if (dsl::IsFloat(t)) {
    static const llvm::CmpInst::Predicate kF[] = {llvm::CmpInst::FCMP_OLT, llvm::CmpInst::FCMP_OLE,
                                                  llvm::CmpInst::FCMP_OGT, llvm::CmpInst::FCMP_OGE,
                                                  llvm::CmpInst::FCMP_OEQ, llvm::CmpInst::FCMP_UNE};
    r = b_.CreateFCmp(kF[static_cast<int>(c)], ToF32(x), ToF32(y));
  } else {
    bool u = t == DType::kU32 || t == DType::kBool;
    static const llvm::CmpInst::Predicate kS[] = {llvm::CmpInst::ICMP_SLT, llvm::CmpInst::ICMP_SLE,
                                                  llvm::CmpInst::ICMP_SGT, llvm::CmpInst::ICMP_SGE,
                                                  llvm::CmpInst::ICMP_EQ,  llvm::CmpInst::ICMP_NE};
    static const llvm::CmpInst::Predicate kU[] = {llvm::CmpInst::ICMP_ULT, llvm::CmpInst::ICMP_ULE,
                                                  llvm::CmpInst::ICMP_UGT, llvm::CmpInst::ICMP_UGE,
                                                  llvm::CmpInst::ICMP_EQ,  llvm::CmpInst::ICMP_NE};
    r = b_.CreateICmp((u ? kU : kS)[static_cast<int>(c)], x, y);
  }
  Set(op.result, r);
  return absl::OkStatus();
}

// exp and log through the target's exp2/log2 with a scale; integer math is abs.
absl::Status Emitter::Math(const ir::Op& op) {
  DType t = VT(op.result).dtype;
  Value* x = GetAs(op.operands[0], t);
  if (!dsl::IsFloat(t)) {
    Set(op.result, b_.CreateBinaryIntrinsic(I::abs, x, b_.getFalse()));
    return absl::OkStatus();
  }
  Value* f = ToF32(x);
  Value* r;
  switch (static_cast<ir::MathOp>(op.sub)) {
    case ir::MathOp::kExp:
      r = ops_->Exp2(b_, b_.CreateFMul(f, llvm::ConstantFP::get(f->getType(), 1.4426950408889634)));
      break;
    case ir::MathOp::kExp2:
      r = ops_->Exp2(b_, f);
      break;
    case ir::MathOp::kLog:
      r = b_.CreateFMul(ops_->Log2(b_, f), llvm::ConstantFP::get(f->getType(), 0.6931471805599453));
      break;
    case ir::MathOp::kSqrt:
      r = b_.CreateUnaryIntrinsic(I::sqrt, f);
      break;
    case ir::MathOp::kRsqrt:
      r = ops_->Rsqrt(b_, f);
      break;
    default:
      r = b_.CreateUnaryIntrinsic(I::fabs, f);
  }
  Set(op.result, FromF32(r, t));
  return absl::OkStatus();
}

absl::Status Emitter::Special(const ir::Op& op) {
  Value* r = nullptr;
  switch (static_cast<ir::SpecialOp>(op.sub)) {
    case ir::SpecialOp::kThreadId:
      r = Tid();
      break;
    case ir::SpecialOp::kBlockId:
      r = ops_->BlockId(b_, static_cast<int>(op.ints.empty() ? 0 : op.ints[0]));
      break;
    case ir::SpecialOp::kGridDim:
      r = ops_->GridDim(b_, static_cast<int>(op.ints.empty() ? 0 : op.ints[0]));
      break;
    case ir::SpecialOp::kWarpId:
      r = Warp();
      break;
    case ir::SpecialOp::kLaneId:
      r = Lane();
      break;
    case ir::SpecialOp::kWarpSize:
      r = C32(f_.warp_size);
      break;
    case ir::SpecialOp::kWarpGroupId:
      r = b_.CreateLShr(Tid(), C32(7));
      break;
  }
  Set(op.result, Convert(r, DType::kI32, VT(op.result).dtype));
  return absl::OkStatus();
}

}  // namespace argus::codegen::emit
