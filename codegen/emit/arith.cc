// Scalar conversions and binary operators (docs/codegen.md "Arithmetic"):
// bf16/f16 compute in f32 and round to nearest even, float->int casts
// saturate, Python's // and % floor, shifts past the width give 0 / the sign.
#include "codegen/emit/emitter.h"

namespace argus::codegen::emit {

Value* Emitter::ToF32(Value* x) {
  return x->getType()->isFloatTy() ? x : b_.CreateFPExt(x, b_.getFloatTy());
}

Value* Emitter::FromF32(Value* x, DType t) {
  return t == DType::kF32 ? x : b_.CreateFPTrunc(x, Ty(t));
}

Value* Emitter::Convert(Value* x, DType from, DType to) {
  if (from == to) return x;
  bool ff = dsl::IsFloat(from), ft = dsl::IsFloat(to);
  if (ff && ft) return FromF32(ToF32(x), to);
  if (!ff && ft) {
    Value* f = (from == DType::kU32 || from == DType::kBool) ? b_.CreateUIToFP(x, b_.getFloatTy())
                                                             : b_.CreateSIToFP(x, b_.getFloatTy());
    return FromF32(f, to);
  }
  if (ff && !ft) {
    Value* f = ToF32(x);
    if (to == DType::kBool) return b_.CreateFCmpONE(f, llvm::ConstantFP::get(f->getType(), 0));
    I::ID id = to == DType::kU32 ? I::fptoui_sat : I::fptosi_sat;
    return Call(id, {f}, {Ty(to), b_.getFloatTy()});
  }
  if (to == DType::kBool) return b_.CreateICmpNE(x, llvm::Constant::getNullValue(x->getType()));
  if (from == DType::kBool || from == DType::kU32) return b_.CreateZExtOrTrunc(x, Ty(to));
  return b_.CreateSExtOrTrunc(x, Ty(to));
}

Value* Emitter::ToMem(Value* x, DType t) {
  return t == DType::kBool ? b_.CreateZExt(x, b_.getInt8Ty()) : x;
}

Value* Emitter::FromMem(Value* x, DType t) {
  return t == DType::kBool ? b_.CreateTrunc(x, b_.getInt1Ty()) : x;
}

Value* Emitter::FloatBin(ir::BinOp op, Value* x, Value* y, DType t) {
  x = ToF32(x);
  y = ToF32(y);
  Value* r = nullptr;
  switch (op) {
    case ir::BinOp::kAdd:
      r = b_.CreateFAdd(x, y);
      break;
    case ir::BinOp::kSub:
      r = b_.CreateFSub(x, y);
      break;
    case ir::BinOp::kMul:
      r = b_.CreateFMul(x, y);
      break;
    case ir::BinOp::kDiv:
      r = b_.CreateFDiv(x, y);
      break;
    case ir::BinOp::kMin:
      r = b_.CreateBinaryIntrinsic(I::minnum, x, y);
      break;
    case ir::BinOp::kMax:
      r = b_.CreateBinaryIntrinsic(I::maxnum, x, y);
      break;
    case ir::BinOp::kFloorDiv:
      r = b_.CreateUnaryIntrinsic(I::floor, b_.CreateFDiv(x, y));
      break;
    case ir::BinOp::kMod:
      r = b_.CreateFSub(x,
                        b_.CreateFMul(b_.CreateUnaryIntrinsic(I::floor, b_.CreateFDiv(x, y)), y));
      break;
    default:
      r = llvm::ConstantFP::get(b_.getFloatTy(), 0.0);
  }
  return FromF32(r, t);
}

// Python's floor division and modulo; power-of-two constants become shifts
// and masks.
Value* Emitter::IntFloorDivMod(bool mod, Value* x, Value* y, bool u) {
  if (auto* c = llvm::dyn_cast<llvm::ConstantInt>(y)) {
    if (c->getValue().isPowerOf2() && !c->isNegative()) {
      if (mod) return b_.CreateAnd(x, c->getValue() - 1);
      unsigned sh = c->getValue().logBase2();
      return u ? b_.CreateLShr(x, sh) : b_.CreateAShr(x, sh);
    }
  }
  if (u) return mod ? b_.CreateURem(x, y) : b_.CreateUDiv(x, y);
  Value* q = b_.CreateSDiv(x, y);
  Value* r = b_.CreateSRem(x, y);
  Value* zero = llvm::Constant::getNullValue(x->getType());
  Value* fix = b_.CreateAnd(b_.CreateICmpNE(r, zero), b_.CreateICmpSLT(b_.CreateXor(r, y), zero));
  if (mod) return b_.CreateSelect(fix, b_.CreateAdd(r, y), r);
  return b_.CreateSub(q, b_.CreateZExt(fix, x->getType()));
}

Value* Emitter::IntBin(ir::BinOp op, Value* x, Value* y, DType t) {
  bool u = t == DType::kU32 || t == DType::kBool;
  unsigned bits = x->getType()->getIntegerBitWidth();
  switch (op) {
    case ir::BinOp::kAdd:
      return b_.CreateAdd(x, y);
    case ir::BinOp::kSub:
      return b_.CreateSub(x, y);
    case ir::BinOp::kMul:
      return b_.CreateMul(x, y);
    case ir::BinOp::kDiv:
      return llvm::Constant::getNullValue(x->getType());
    case ir::BinOp::kFloorDiv:
    case ir::BinOp::kMod:
      return IntFloorDivMod(op == ir::BinOp::kMod, x, y, u);
    case ir::BinOp::kShl: {
      Value* ok = b_.CreateICmpULT(y, llvm::ConstantInt::get(y->getType(), bits));
      return b_.CreateSelect(ok, b_.CreateShl(x, y), llvm::Constant::getNullValue(x->getType()));
    }
    case ir::BinOp::kShr: {
      Value* ok = b_.CreateICmpULT(y, llvm::ConstantInt::get(y->getType(), bits));
      if (u)
        return b_.CreateSelect(ok, b_.CreateLShr(x, y), llvm::Constant::getNullValue(x->getType()));
      return b_.CreateSelect(ok, b_.CreateAShr(x, y), b_.CreateAShr(x, bits - 1));
    }
    case ir::BinOp::kAnd:
      return b_.CreateAnd(x, y);
    case ir::BinOp::kOr:
      return b_.CreateOr(x, y);
    case ir::BinOp::kXor:
      return b_.CreateXor(x, y);
    case ir::BinOp::kMin:
      return b_.CreateBinaryIntrinsic(u ? I::umin : I::smin, x, y);
    case ir::BinOp::kMax:
      return b_.CreateBinaryIntrinsic(u ? I::umax : I::smax, x, y);
  }
  return x;
}

Value* Emitter::Combine(ir::ReduceKind k, Value* x, Value* y, DType t) {
  if (dsl::IsFloat(t))
    return FloatBin(k == ir::ReduceKind::kMax ? ir::BinOp::kMax : ir::BinOp::kAdd, x, y, t);
  return IntBin(k == ir::ReduceKind::kMax ? ir::BinOp::kMax : ir::BinOp::kAdd, x, y, t);
}

}  // namespace argus::codegen::emit
