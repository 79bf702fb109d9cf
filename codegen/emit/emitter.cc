// The emitter's frame: the function's entry, its parameters, its blocks, and
// the dispatch of each op to its family's handler.
#include "codegen/emit/emitter.h"

#include "absl/strings/str_cat.h"
#include "base/status.h"
#include "llvm/IR/IntrinsicsAMDGPU.h"

namespace argus::codegen::emit {

using llvm::IRBuilder;

Emitter::Emitter(ModuleState* ms, const ir::Function& f, llvm::Function* fn,
                 KernelBindings bindings)
    : ms_(ms),
      m_(*ms->m),
      f_(f),
      fn_(fn),
      ctx_(fn->getContext()),
      b_(ctx_),
      ops_(ms->ops),
      kb_(std::move(bindings)) {
  amd_ = ms->target->vendor == GpuVendor::kAmd;
}

absl::Status Emitter::Emit() {
  ASSIGN_OR_RETURN(facts_, AnalyzeViews(m_, f_));
  BasicBlock* allocas = BasicBlock::Create(ctx_, "allocas", fn_);
  BasicBlock* body = BasicBlock::Create(ctx_, "entry", fn_);
  alloca_b_ = std::make_unique<IRBuilder<>>(allocas);
  b_.SetInsertPoint(body);
  RETURN_IF_ERROR(BindParams());
  RETURN_IF_ERROR(Block(f_.body));
  if (!b_.GetInsertBlock()->getTerminator()) ReturnDefault();
  alloca_b_->CreateBr(body);
  return absl::OkStatus();
}

void Emitter::ReturnDefault() {
  if (fn_->getReturnType()->isVoidTy())
    b_.CreateRetVoid();
  else
    b_.CreateRet(llvm::Constant::getNullValue(fn_->getReturnType()));
}

absl::Status Emitter::BindParams() {
  if (!f_.is_kernel) {
    for (size_t i = 0; i < f_.params.size(); ++i) Set(f_.params[i], fn_->getArg(i));
    return absl::OkStatus();
  }
  int a = 0;
  for (size_t i = 0; i < f_.tensors.size(); ++i) tensor_args_.push_back(fn_->getArg(a++));
  for (int dv : f_.dim_vars) Set(dv, fn_->getArg(a++));
  for (const ir::ScalarParam& s : f_.scalars) Set(s.var, fn_->getArg(a++));
  for (size_t i = 0; i < f_.tensors.size(); ++i) BindTensorView(i);
  return absl::OkStatus();
}

// Tensor i's view: offset 0, shape and stride from the dims; on AMD also its
// buffer resource, bounded by the tensor's extent in bytes.
void Emitter::BindTensorView(size_t i) {
  auto sym = [&](const ir::SymInt& s) {
    Value* v = C64(s.coeff);
    for (int d : s.syms) v = b_.CreateMul(v, b_.CreateZExt(Get(f_.dim_vars[d]), b_.getInt64Ty()));
    return v;
  };
  const ir::TensorParam& t = f_.tensors[i];
  ViewVals vv;
  vv.off = C64(0);
  Value* cos = C64(1);
  for (size_t d = 0; d < t.shape.size(); ++d) {
    vv.shape.push_back(sym(t.shape[d]));
    vv.stride.push_back(sym(t.stride[d]));
    cos = b_.CreateAdd(cos, b_.CreateMul(b_.CreateSub(vv.shape.back(), C64(1)), vv.stride.back()));
  }
  StoreView(t.var, vv);
  if (!amd_) return;
  Value* bytes = b_.CreateMul(cos, C64(Bytes(t.dtype)));
  bytes = b_.CreateBinaryIntrinsic(I::umin, bytes, C64(0xFFFFFFFFll));
  rsrc_.push_back(Call(
      I::amdgcn_make_buffer_rsrc,
      {tensor_args_[i], b_.getInt16(0), b_.CreateTrunc(bytes, b_.getInt32Ty()), C32(0x00020000)},
      {tensor_args_[i]->getType()}));
}

void Emitter::EnsureOpen() {
  if (b_.GetInsertBlock()->getTerminator())
    b_.SetInsertPoint(BasicBlock::Create(ctx_, "dead", fn_));
}

absl::Status Emitter::Block(const ir::Block& blk) {
  for (const ir::Op& op : blk) {
    EnsureOpen();
    RETURN_IF_ERROR(One(op));
  }
  EnsureOpen();
  return absl::OkStatus();
}

absl::Status Emitter::One(const ir::Op& op) {
  switch (ir::Info(op.code).family) {
    case ir::OpFamily::kScalar:
      return ScalarOp(op);
    case ir::OpFamily::kView:
      return ViewOp(op);
    case ir::OpFamily::kMemory:
      return MemoryOp(op);
    case ir::OpFamily::kFragment:
      return FragmentOp(op);
    case ir::OpFamily::kFragmentMath:
      return FragmentMathOp(op);
    case ir::OpFamily::kMbarrier:
      return MbarrierOp(op);
    case ir::OpFamily::kTma:
      return TmaOp(op);
    case ir::OpFamily::kWgmma:
      return WgmmaOp(op);
    case ir::OpFamily::kBarrier:
      return BarrierOp(op);
    case ir::OpFamily::kCollective:
      return CollectiveOp(op);
    case ir::OpFamily::kHint:
      return HintOp(op);
    case ir::OpFamily::kTag:
      return absl::OkStatus();  // verified at compile time; nothing at run time
    case ir::OpFamily::kCall:
      return CallOp(op);
    case ir::OpFamily::kControl:
      return ControlOp(op);
  }
  return NotLowered(op);
}

absl::Status Emitter::NotLowered(const ir::Op& op) {
  return LoweringError(m_, op.loc,
                       absl::StrCat("codegen does not lower ", ir::OpCodeName(op.code)));
}

}  // namespace argus::codegen::emit
