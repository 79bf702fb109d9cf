// The kMemory family's element loads and stores and cp.async groups, and the
// addressing every memory access shares: an element's address is
// swizzle(offset + sum idx * stride) within its view's buffer (copy.cc moves
// whole tiles).
#include "absl/strings/str_cat.h"
#include "base/status.h"
#include "codegen/emit/emitter.h"
#include "llvm/IR/IntrinsicsAMDGPU.h"
#include "llvm/IR/IntrinsicsNVPTX.h"

namespace argus::codegen::emit {

absl::Status Emitter::MemoryOp(const ir::Op& op) {
  switch (op.code) {
    case OpCode::kLoad:
    case OpCode::kStore:
    case OpCode::kBufferLoad:
      return ElementAccess(op);
    case OpCode::kCopy:
    case OpCode::kThreadCopy:
      return Copy(op);
    case OpCode::kCommitGroup:
      if (!amd_) Call(I::nvvm_cp_async_commit_group, {});
      return absl::OkStatus();
    case OpCode::kWaitGroup:
      if (!amd_) Call(I::nvvm_cp_async_wait_group, {C32(op.ints[0])});
      return absl::OkStatus();
    default:
      return NotLowered(op);
  }
}

absl::StatusOr<Emitter::Root> Emitter::RootOf(const ir::Op& op, int v) {
  const ViewFact& f = facts_[v];
  Root r;
  r.kind = f.root;
  r.dt = VT(v).dtype;
  switch (f.root) {
    case ViewFact::Root::kTensor:
      r.base = tensor_args_[f.tensor];
      r.tensor = f.tensor;
      return r;
    case ViewFact::Root::kShared:
      r.base = kb_.shared[f.alloc];
      r.swz = f.alloc->layout.swizzle;
      return r;
    case ViewFact::Root::kLocal:
      r.base = kb_.locals[f.alloc];
      r.swz = f.alloc->layout.swizzle;
      return r;
    case ViewFact::Root::kNone:
      break;
  }
  return LoweringError(m_, op.loc, "codegen cannot tell which buffer this view windows");
}

Value* Emitter::Swizzle(Value* o, const dsl::Swizzle& s) {
  if (!s.active()) return o;
  int64_t mask = ((int64_t{1} << s.b) - 1) << s.m;
  return b_.CreateXor(o, b_.CreateAnd(b_.CreateLShr(o, s.s), C64(mask)));
}

Value* Emitter::Linear(const ViewVals& vv, const std::vector<Value*>& idx) {
  Value* o = vv.off;
  for (size_t d = 0; d < idx.size(); ++d) o = b_.CreateAdd(o, b_.CreateMul(idx[d], vv.stride[d]));
  return o;
}

Value* Emitter::ElemPtr(const Root& r, Value* lin) {
  Value* p = Swizzle(lin, r.swz);
  if (r.kind != ViewFact::Root::kTensor) p = b_.CreateTrunc(p, b_.getInt32Ty());
  return b_.CreateGEP(MemTy(r.dt), r.base, p);
}

std::vector<Value*> Emitter::Indices(const ir::Op& op, int first) {
  std::vector<Value*> idx;
  for (size_t i = first; i < op.operands.size(); ++i)
    idx.push_back(b_.CreateSExt(Get(op.operands[i]), b_.getInt64Ty()));
  return idx;
}

Value* Emitter::LoadElem(const Root& r, Value* lin) {
  return FromMem(b_.CreateLoad(MemTy(r.dt), ElemPtr(r, lin)), r.dt);
}

Value* Emitter::BufferLoad(int t, Type* ty, Value* byte_off) {
  Value* off = b_.CreateTrunc(byte_off, b_.getInt32Ty());
  return Call(I::amdgcn_raw_ptr_buffer_load, {rsrc_[t], off, C32(0), C32(0)}, {ty});
}

Value* Emitter::SharedViewAddr(const Root& r, int v, int elem_bytes) {
  ViewVals vv = LoadView(v);
  return b_.CreateAdd(SharedAddr(r.base),
                      b_.CreateTrunc(b_.CreateMul(vv.off, C64(elem_bytes)), b_.getInt32Ty()));
}

// load, store and buffer_load of one element.
absl::Status Emitter::ElementAccess(const ir::Op& op) {
  int v = op.operands[0];
  ASSIGN_OR_RETURN(Root r, RootOf(op, v));
  ViewVals vv = LoadView(v);
  bool store = op.code == OpCode::kStore;
  std::vector<Value*> idx = Indices(op, store ? 2 : 1);
  Value* lin = Linear(vv, idx);
  if (store) {
    Value* x = GetAs(op.operands[1], r.dt);
    b_.CreateStore(ToMem(x, r.dt), ElemPtr(r, lin));
    return absl::OkStatus();
  }
  if (op.code == OpCode::kLoad) {
    Set(op.result, Convert(LoadElem(r, lin), r.dt, VT(op.result).dtype));
    return absl::OkStatus();
  }
  return BufferLoadOp(op, r, vv, idx, lin);
}

// Out-of-bounds reads give 0: the hardware's bounds on AMD tensors, a branch
// elsewhere.
absl::Status Emitter::BufferLoadOp(const ir::Op& op, const Root& r, const ViewVals& vv,
                                   const std::vector<Value*>& idx, Value* lin) {
  Value* inb = b_.getTrue();
  for (size_t d = 0; d < idx.size(); ++d)
    inb = b_.CreateAnd(inb, b_.CreateICmpULT(idx[d], vv.shape[d]));
  DType rt = VT(op.result).dtype;
  if (amd_ && r.kind == ViewFact::Root::kTensor && !r.swz.active()) {
    Type* it = b_.getIntNTy(8 * Bytes(r.dt));
    Value* off = b_.CreateSelect(inb, b_.CreateMul(lin, C64(Bytes(r.dt))), C64(0xFFFFFFFFll));
    Value* raw = BufferLoad(r.tensor, it, off);
    Value* x = r.dt == DType::kBool ? b_.CreateTrunc(raw, b_.getInt1Ty())
                                    : b_.CreateBitCast(raw, MemTy(r.dt));
    Set(op.result, Convert(x, r.dt, rt));
    return absl::OkStatus();
  }
  Set(op.result, llvm::Constant::getNullValue(Ty(rt)));
  BasicBlock* yes = BasicBlock::Create(ctx_, "bl.in", fn_);
  BasicBlock* done = BasicBlock::Create(ctx_, "bl.done", fn_);
  b_.CreateCondBr(inb, yes, done);
  b_.SetInsertPoint(yes);
  Set(op.result, Convert(LoadElem(r, lin), r.dt, rt));
  b_.CreateBr(done);
  b_.SetInsertPoint(done);
  return absl::OkStatus();
}

}  // namespace argus::codegen::emit
