// The kMbarrier family (sm_90a): arrays of transaction barriers in shared
// memory, their arrivals and parity waits.
#include "codegen/emit/emitter.h"
#include "codegen/lower_hopper.h"

namespace argus::codegen::emit {

absl::Status Emitter::MbarrierOp(const ir::Op& op) {
  switch (op.code) {
    case OpCode::kMbarrier:
      return MbarrierInit(op);
    case OpCode::kMbarArrive:
      hopper::MbarArrive(b_, BarrierAddr(op, 0));
      return absl::OkStatus();
    case OpCode::kMbarArriveTx:
      hopper::MbarArriveExpectTx(b_, BarrierAddr(op, 0), Get(op.operands[2]));
      return absl::OkStatus();
    case OpCode::kMbarWait:
      hopper::MbarWait(b_, BarrierAddr(op, 0), Get(op.operands[2]));
      return absl::OkStatus();
    default:
      return NotLowered(op);
  }
}

// One thread initializes every barrier of the array; the block barrier makes
// the initialization visible before any use.
absl::Status Emitter::MbarrierInit(const ir::Op& op) {
  Value* base = kb_.mbars.at(&op);
  bar_base_[op.result] = base;
  BasicBlock* init = BasicBlock::Create(ctx_, "mbar.init", fn_);
  BasicBlock* cont = BasicBlock::Create(ctx_, "mbar.cont", fn_);
  b_.CreateCondBr(b_.CreateICmpEQ(Tid(), C32(0)), init, cont);
  b_.SetInsertPoint(init);
  for (int64_t i = 0; i < op.ints[0]; ++i)
    hopper::MbarInit(b_, b_.CreateAdd(SharedAddr(base), C32(8 * i)), op.ints[1]);
  hopper::FenceMbarInit(b_);
  b_.CreateBr(cont);
  b_.SetInsertPoint(cont);
  ops_->Barrier(b_);
  return absl::OkStatus();
}

// The shared address of barrier operands[first + 1] of the array operands[first].
Value* Emitter::BarrierAddr(const ir::Op& op, int first) {
  Value* base = SharedAddr(bar_base_[op.operands[first]]);
  return b_.CreateAdd(base, b_.CreateMul(Get(op.operands[first + 1]), C32(8)));
}

}  // namespace argus::codegen::emit
