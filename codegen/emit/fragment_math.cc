// The kFragmentMath family (docs/dsl.md "Fragment math"): per-element f32
// code on the fragment arrays, in the element order the interpreter uses;
// row reductions finish across the lanes that share a row with shuffles.
#include "absl/strings/str_cat.h"
#include "base/status.h"
#include "codegen/emit/emitter.h"
#include "llvm/IR/IntrinsicsNVPTX.h"

namespace argus::codegen::emit {

absl::Status Emitter::FragmentMathOp(const ir::Op& op) {
  switch (op.code) {
    case OpCode::kFragEw:
      return FragElementwise(op);
    case OpCode::kFragRowReduce:
      return FragRowReduce(op);
    case OpCode::kFragCoord:
      return FragCoordOp(op);
    case OpCode::kFragRowFill: {
      int n = VT(op.result).frag.Geom().PerLane();
      Value* x = GetAs(op.operands[1], DType::kF32);
      for (int e = 0; e < n; ++e) FragSet(op.result, e, x);
      return absl::OkStatus();
    }
    case OpCode::kToOperand:
      return ToOperand(op);
    default:
      return NotLowered(op);
  }
}

// One element of an elementwise op; `third` reads the third operand's
// element (select, fma) where the op has one.
Value* Emitter::FragEwValue(ir::FragEwOp fop, Value* x, Value* y,
                            const std::function<Value*()>& third) {
  Type* f32 = b_.getFloatTy();
  auto cmp = [&](llvm::CmpInst::Predicate p) {
    return b_.CreateUIToFP(b_.CreateFCmp(p, x, y), f32);
  };
  switch (fop) {
    case ir::FragEwOp::kAdd:
      return b_.CreateFAdd(x, y);
    case ir::FragEwOp::kSub:
      return b_.CreateFSub(x, y);
    case ir::FragEwOp::kMul:
      return b_.CreateFMul(x, y);
    case ir::FragEwOp::kDiv:
      return b_.CreateFDiv(x, y);
    case ir::FragEwOp::kMax:
      return b_.CreateBinaryIntrinsic(I::maxnum, x, y);
    case ir::FragEwOp::kMin:
      return b_.CreateBinaryIntrinsic(I::minnum, x, y);
    case ir::FragEwOp::kExp2:
      return ops_->Exp2Ftz(b_, x);
    case ir::FragEwOp::kLt:
      return cmp(llvm::CmpInst::FCMP_OLT);
    case ir::FragEwOp::kLe:
      return cmp(llvm::CmpInst::FCMP_OLE);
    case ir::FragEwOp::kGt:
      return cmp(llvm::CmpInst::FCMP_OGT);
    case ir::FragEwOp::kGe:
      return cmp(llvm::CmpInst::FCMP_OGE);
    case ir::FragEwOp::kEq:
      return cmp(llvm::CmpInst::FCMP_OEQ);
    case ir::FragEwOp::kNe:
      return cmp(llvm::CmpInst::FCMP_UNE);
    case ir::FragEwOp::kSelect: {
      Value* c =
          x->getType()->isFloatTy() ? b_.CreateFCmpUNE(x, llvm::ConstantFP::get(f32, 0.0)) : x;
      return b_.CreateSelect(c, y, third());
    }
    case ir::FragEwOp::kFma:
      return b_.CreateIntrinsic(I::fma, {f32}, {x, y, third()});
  }
  return nullptr;
}

// Scalar operands are converted once; a row-vector operand of an accumulator
// result supplies each element's row slot.
absl::Status Emitter::FragElementwise(const ir::Op& op) {
  const ir::Type& rt = VT(op.result);
  dsl::FragGeom g = rt.frag.Geom();
  int n = g.PerLane();
  auto fop = static_cast<ir::FragEwOp>(op.sub);
  std::vector<Value*> scalar(op.operands.size(), nullptr);
  for (size_t j = 0; j < op.operands.size(); ++j) {
    int v = op.operands[j];
    if (VT(v).is_frag()) continue;
    DType t = VT(v).dtype;
    scalar[j] = t == DType::kBool ? Get(v) : Convert(Get(v), t, DType::kF32);
  }
  auto at = [&](size_t j, int e) -> Value* {
    if (scalar[j]) return scalar[j];
    int v = op.operands[j];
    bool row_in_acc = VT(v).frag.role == dsl::FragRole::kRow && rt.frag.role == dsl::FragRole::kAcc;
    return FragGet(v, row_in_acc ? g.RowSlot(e) : e);
  };
  for (int e = 0; e < n; ++e) {
    Value* x = at(0, e);
    Value* y = op.operands.size() > 1 ? at(1, e) : nullptr;
    FragSet(op.result, e, FragEwValue(fop, x, y, [&] { return at(2, e); }));
  }
  return absl::OkStatus();
}

absl::Status Emitter::FragRowReduce(const ir::Op& op) {
  int n = VT(op.result).frag.Geom().PerLane();
  int acc = op.operands[0];
  dsl::FragGeom ga = VT(acc).frag.Geom();
  bool is_max = op.sub == static_cast<uint8_t>(ir::ReduceKind::kMax);
  auto comb = [&](Value* a, Value* b) {
    return is_max ? b_.CreateBinaryIntrinsic(I::maxnum, a, b) : b_.CreateFAdd(a, b);
  };
  std::vector<Value*> part(n, nullptr);
  if (is_max) {
    // max is exact in any order: a pairwise tree per row (log depth, where
    // the element-order chain puts 32+ dependent maxes before the exp2s).
    std::vector<std::vector<Value*>> row(n);
    for (int e = 0; e < ga.PerLane(); ++e) row[ga.RowSlot(e)].push_back(FragGet(acc, e));
    for (int j = 0; j < n; ++j) {
      std::vector<Value*>& v = row[j];
      while (v.size() > 1) {
        std::vector<Value*> next;
        for (size_t i = 0; i + 1 < v.size(); i += 2) next.push_back(comb(v[i], v[i + 1]));
        if (v.size() % 2) next.push_back(v.back());
        v.swap(next);
      }
      part[j] = v.empty() ? nullptr : v[0];
    }
  } else {
    for (int e = 0; e < ga.PerLane(); ++e) {
      int slot = ga.RowSlot(e);
      Value* x = FragGet(acc, e);
      part[slot] = part[slot] ? comb(part[slot], x) : x;
    }
  }
  int bits = dsl::AccColumnLaneBits(*ga.mma);
  for (int b = 1; b < ga.mma->warp_size; b <<= 1) {
    if (!(bits & b)) continue;
    for (int j = 0; j < n; ++j) {
      Value* o = ShflValue(part[j], DType::kF32, [&](Value* w) { return ops_->ShflXor(b_, w, b); });
      part[j] = comb(part[j], o);
    }
  }
  for (int j = 0; j < n; ++j) FragSet(op.result, j, part[j]);
  return absl::OkStatus();
}

absl::Status Emitter::FragCoordOp(const ir::Op& op) {
  int n = VT(op.result).frag.Geom().PerLane();
  for (int e = 0; e < n; ++e) {
    Value *row, *col;
    RETURN_IF_ERROR(FragCoord(op, op.result, e, &row, &col));
    FragSet(op.result, e, b_.CreateSIToFP(op.ints[0] == 0 ? row : col, b_.getFloatTy()));
  }
  return absl::OkStatus();
}

namespace {

// For each operand element, the accumulator element with the same
// coordinates — the same one in every lane, or the layouts cannot convert.
absl::Status OperandSources(const ir::Module& m, const ir::Op& op, const dsl::FragGeom& g,
                            const dsl::FragGeom& gc, std::vector<int>* src) {
  int n = g.PerLane();
  src->assign(n, 0);
  for (int e = 0; e < n; ++e) {
    int q = -1;
    for (int l = 0; l < g.mma->warp_size; ++l) {
      int r0, c0, ql = -1;
      g.Coord(0, l, e, &r0, &c0);
      for (int k = 0; k < gc.PerLane() && ql < 0; ++k) {
        int r1, c1;
        gc.Coord(0, l, k, &r1, &c1);
        if (r1 == r0 && c1 == c0) ql = k;
      }
      if (ql < 0 || (q >= 0 && ql != q))
        return LoweringError(m, op.loc, "to_operand: the layouts differ across lanes");
      q = ql;
    }
    (*src)[e] = q;
  }
  return absl::OkStatus();
}

}  // namespace

// Elements 2j, 2j+1 share a .b32 operand register: one cvt.rn.bf16x2.f32
// per pair (its first source goes to the high half).
absl::Status Emitter::ToOperand(const ir::Op& op) {
  const ir::Type& rt = VT(op.result);
  int n = rt.frag.Geom().PerLane();
  int acc = op.operands[0];
  std::vector<int> src;
  RETURN_IF_ERROR(OperandSources(m_, op, rt.frag.Geom(), VT(acc).frag.Geom(), &src));
  for (int e = 0; e + 1 < n; e += 2) {
    Value* lo = FragGet(acc, src[e]);
    Value* hi = FragGet(acc, src[e + 1]);
    if (rt.dtype == DType::kBF16) {
      Value* w = Call(I::nvvm_ff2bf16x2_rn, {hi, lo});
      FragSetPair(op.result, e, b_.CreateBitCast(w, b_.getInt32Ty()));
    } else {
      FragSet(op.result, e, b_.CreateBitCast(b_.CreateFPTrunc(lo, Ty(rt.dtype)), b_.getInt16Ty()));
      FragSet(op.result, e + 1,
              b_.CreateBitCast(b_.CreateFPTrunc(hi, Ty(rt.dtype)), b_.getInt16Ty()));
    }
  }
  return absl::OkStatus();
}

}  // namespace argus::codegen::emit
