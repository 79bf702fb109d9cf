// The kCollective family: shuffles within a (logical) warp, butterfly warp
// reductions, and block reductions through one shared slot per warp.
#include "codegen/emit/emitter.h"

namespace argus::codegen::emit {

absl::Status Emitter::CollectiveOp(const ir::Op& op) {
  switch (op.code) {
    case OpCode::kShfl:
      return Shuffle(op);
    case OpCode::kWarpReduce: {
      DType t = VT(op.result).dtype;
      Set(op.result, WarpReduce(static_cast<ir::ReduceKind>(op.sub), Get(op.operands[0]), t));
      return absl::OkStatus();
    }
    case OpCode::kBlockReduce: {
      DType t = VT(op.result).dtype;
      Set(op.result, BlockReduce(op, Get(op.operands[0]), t));
      return absl::OkStatus();
    }
    default:
      return NotLowered(op);
  }
}

Value* Emitter::ShflValue(Value* x, DType t, const std::function<Value*(Value*)>& shfl) {
  Type* i32 = b_.getInt32Ty();
  switch (t) {
    case DType::kF32:
      return b_.CreateBitCast(shfl(b_.CreateBitCast(x, i32)), x->getType());
    case DType::kBF16:
    case DType::kF16: {
      Value* w = b_.CreateZExt(b_.CreateBitCast(x, b_.getInt16Ty()), i32);
      return b_.CreateBitCast(b_.CreateTrunc(shfl(w), b_.getInt16Ty()), x->getType());
    }
    case DType::kBool:
      return b_.CreateTrunc(shfl(b_.CreateZExt(x, i32)), x->getType());
    case DType::kI64: {
      Value* lo = shfl(b_.CreateTrunc(x, i32));
      Value* hi = shfl(b_.CreateTrunc(b_.CreateLShr(x, 32), i32));
      return b_.CreateOr(b_.CreateZExt(lo, x->getType()),
                         b_.CreateShl(b_.CreateZExt(hi, x->getType()), 32));
    }
    default:
      return shfl(x);
  }
}

// The source lane within the logical warp; logical warps narrower than the
// hardware's address their lanes from the hardware warp's.
absl::Status Emitter::Shuffle(const ir::Op& op) {
  int ws = f_.warp_size;
  DType t = VT(op.result).dtype;
  Value* x = GetAs(op.operands[0], t);
  Value* arg = Get(op.operands[1]);
  Value* lane = Lane();
  Value* src = nullptr;
  switch (static_cast<ir::ShflKind>(op.sub)) {
    case ir::ShflKind::kXor:
      src = b_.CreateXor(lane, b_.CreateAnd(arg, C32(ws - 1)));
      break;
    case ir::ShflKind::kDown: {
      Value* s = b_.CreateAdd(lane, arg);
      Value* ok = b_.CreateAnd(b_.CreateICmpSGE(arg, C32(0)), b_.CreateICmpSLT(s, C32(ws)));
      src = b_.CreateSelect(ok, s, lane);
      break;
    }
    case ir::ShflKind::kIdx:
      src = b_.CreateAnd(arg, C32(ws - 1));
      break;
  }
  int hw = ops_->hw_warp();
  if (hw != ws) {  // logical warps inside a hardware warp
    Value* hwlane = b_.CreateAnd(Tid(), C32(hw - 1));
    src = b_.CreateAdd(b_.CreateSub(hwlane, lane), src);
  }
  Set(op.result, ShflValue(x, t, [&](Value* w) { return ops_->ShflIdx(b_, w, src); }));
  return absl::OkStatus();
}

Value* Emitter::WarpReduce(ir::ReduceKind k, Value* x, DType t) {
  for (int off = f_.warp_size / 2; off >= 1; off /= 2) {
    Value* y = ShflValue(x, t, [&](Value* w) { return ops_->ShflXor(b_, w, off); });
    x = Combine(k, x, y, t);
  }
  return x;
}

Value* Emitter::BlockReduce(const ir::Op& op, Value* x, DType t) {
  auto k = static_cast<ir::ReduceKind>(op.sub);
  int nw = (f_.threads + f_.warp_size - 1) / f_.warp_size;
  Type* mt = MemTy(t);
  llvm::GlobalVariable* gv =
      NewSharedGlobal(*ms_->mod, llvm::ArrayType::get(mt, nw), "block_reduce", 8);
  ms_->shared_bytes += nw * 8;
  Value* w = WarpReduce(k, x, t);
  BasicBlock* wr = BasicBlock::Create(ctx_, "br.write", fn_);
  BasicBlock* cont = BasicBlock::Create(ctx_, "br.cont", fn_);
  b_.CreateCondBr(b_.CreateICmpEQ(Lane(), C32(0)), wr, cont);
  b_.SetInsertPoint(wr);
  b_.CreateStore(ToMem(w, t), b_.CreateGEP(mt, gv, Warp()));
  b_.CreateBr(cont);
  b_.SetInsertPoint(cont);
  ops_->Barrier(b_);
  Value* total = FromMem(b_.CreateLoad(mt, b_.CreateConstGEP1_32(mt, gv, 0)), t);
  for (int i = 1; i < nw; ++i)
    total = Combine(k, total, FromMem(b_.CreateLoad(mt, b_.CreateConstGEP1_32(mt, gv, i)), t), t);
  ops_->Barrier(b_);
  return total;
}

}  // namespace argus::codegen::emit
