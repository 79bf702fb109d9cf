// The kControl and kCall families: structured control flow as branches one
// to one (loop variables live in their slots, so no phis), device function
// calls and returns.
#include "base/status.h"
#include "codegen/emit/emitter.h"

namespace argus::codegen::emit {

absl::Status Emitter::ControlOp(const ir::Op& op) {
  switch (op.code) {
    case OpCode::kFor:
      return For(op);
    case OpCode::kIf:
      return If(op);
    case OpCode::kWhile:
      return While(op);
    default:
      return NotLowered(op);
  }
}

absl::Status Emitter::For(const ir::Op& op) {
  DType t = VT(op.result).dtype;
  Value* lo = GetAs(op.operands[0], t);
  Value* hi = GetAs(op.operands[1], t);
  int64_t step = op.ints[0];
  Set(op.result, lo);
  BasicBlock* cond = BasicBlock::Create(ctx_, "for.cond", fn_);
  BasicBlock* body = BasicBlock::Create(ctx_, "for.body", fn_);
  BasicBlock* exit = BasicBlock::Create(ctx_, "for.end", fn_);
  b_.CreateBr(cond);
  b_.SetInsertPoint(cond);
  Value* i = Get(op.result);
  b_.CreateCondBr(step > 0 ? b_.CreateICmpSLT(i, hi) : b_.CreateICmpSGT(i, hi), body, exit);
  b_.SetInsertPoint(body);
  RETURN_IF_ERROR(Block(op.regions[0]));
  Set(op.result, b_.CreateAdd(Get(op.result), llvm::ConstantInt::get(Ty(t), step, true)));
  b_.CreateBr(cond);
  b_.SetInsertPoint(exit);
  return absl::OkStatus();
}

absl::Status Emitter::If(const ir::Op& op) {
  BasicBlock* then = BasicBlock::Create(ctx_, "if.then", fn_);
  BasicBlock* els = BasicBlock::Create(ctx_, "if.else", fn_);
  BasicBlock* done = BasicBlock::Create(ctx_, "if.end", fn_);
  b_.CreateCondBr(Get(op.operands[0]), then, els);
  b_.SetInsertPoint(then);
  RETURN_IF_ERROR(Block(op.regions[0]));
  b_.CreateBr(done);
  b_.SetInsertPoint(els);
  if (op.regions.size() > 1) RETURN_IF_ERROR(Block(op.regions[1]));
  b_.CreateBr(done);
  b_.SetInsertPoint(done);
  return absl::OkStatus();
}

// regions[0] computes the condition operand, regions[1] is the body.
absl::Status Emitter::While(const ir::Op& op) {
  BasicBlock* cond = BasicBlock::Create(ctx_, "while.cond", fn_);
  BasicBlock* body = BasicBlock::Create(ctx_, "while.body", fn_);
  BasicBlock* exit = BasicBlock::Create(ctx_, "while.end", fn_);
  b_.CreateBr(cond);
  b_.SetInsertPoint(cond);
  RETURN_IF_ERROR(Block(op.regions[0]));
  b_.CreateCondBr(Get(op.operands[0]), body, exit);
  b_.SetInsertPoint(body);
  RETURN_IF_ERROR(Block(op.regions[1]));
  b_.CreateBr(cond);
  b_.SetInsertPoint(exit);
  return absl::OkStatus();
}

// Arguments and results convert to the callee's declared scalar types.
absl::Status Emitter::CallOp(const ir::Op& op) {
  if (op.code == OpCode::kReturn) {
    if (!op.operands.empty() && f_.ret.is_scalar())
      b_.CreateRet(GetAs(op.operands[0], f_.ret.dtype));
    else
      ReturnDefault();
    return absl::OkStatus();
  }
  if (op.code != OpCode::kCall) return NotLowered(op);
  const ir::Function& callee = m_.functions[op.ints[0]];
  std::vector<Value*> args;
  for (size_t i = 0; i < op.operands.size(); ++i)
    args.push_back(GetAs(op.operands[i], callee.vars[callee.params[i]].type.dtype));
  Value* r = b_.CreateCall(ms_->fns[op.ints[0]], args);
  if (op.result >= 0 && callee.ret.is_scalar())
    Set(op.result, Convert(r, callee.ret.dtype, VT(op.result).dtype));
  return absl::OkStatus();
}

}  // namespace argus::codegen::emit
