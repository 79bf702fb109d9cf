// The kBarrier family: the block barrier, and on sm_90a named barriers —
// one per warp group (warpgroup_barrier) or by id (named_barrier).
#include "codegen/emit/emitter.h"
#include "codegen/lower_hopper.h"

namespace argus::codegen::emit {

absl::Status Emitter::BarrierOp(const ir::Op& op) {
  switch (op.code) {
    case OpCode::kBarrier:
      ops_->Barrier(b_);
      return absl::OkStatus();
    case OpCode::kWarpgroupBarrier:
      // Named barrier 1 + the warp group (0 is barrier()).
      hopper::NamedBarrier(b_, b_.CreateAdd(b_.CreateUDiv(Tid(), C32(128)), C32(1)), 128);
      return absl::OkStatus();
    case OpCode::kNamedBarrier:
      if (op.ints[1])
        hopper::NamedBarrier(b_, Get(op.operands[0]), static_cast<int>(op.ints[0]));
      else
        hopper::NamedBarrierArrive(b_, Get(op.operands[0]), static_cast<int>(op.ints[0]));
      return absl::OkStatus();
    default:
      return NotLowered(op);
  }
}

}  // namespace argus::codegen::emit
