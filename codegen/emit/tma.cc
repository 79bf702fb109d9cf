// The kTma family (sm_90a): 2-D bulk tensor copies between global and shared
// memory through the kernel's tensor-map parameters — loads completing on an
// mbarrier, and the store epilogue (stores, their commit and wait) — and the
// async-proxy fence.
#include "base/status.h"
#include "codegen/emit/emitter.h"
#include "codegen/lower_hopper.h"

namespace argus::codegen::emit {

absl::Status Emitter::TmaOp(const ir::Op& op) {
  switch (op.code) {
    case OpCode::kTmaLoad: {
      Value *dst, *tmap;
      RETURN_IF_ERROR(TmaOperands(op, op.operands[1], &dst, &tmap));
      Value* c0 = b_.CreateMul(Get(op.operands[5]), C32(op.ints[2]));
      Value* c1 = b_.CreateMul(Get(op.operands[4]), C32(op.ints[1]));
      hopper::TmaLoad2d(b_, dst, tmap, c0, c1, BarrierAddr(op, 2));
      return absl::OkStatus();
    }
    case OpCode::kFenceProxyAsync:
      hopper::FenceProxyAsync(b_);
      return absl::OkStatus();
    case OpCode::kTmaStore: {
      Value *src, *tmap;
      RETURN_IF_ERROR(TmaOperands(op, op.operands[0], &src, &tmap));
      Value* c0 = b_.CreateMul(Get(op.operands[3]), C32(op.ints[2]));
      Value* c1 = b_.CreateMul(Get(op.operands[2]), C32(op.ints[1]));
      hopper::TmaStore2d(b_, tmap, c0, c1, src, op.sub != 0);
      return absl::OkStatus();
    }
    case OpCode::kTmaStoreCommit:
      hopper::BulkCommit(b_);
      return absl::OkStatus();
    case OpCode::kTmaStoreWait:
      hopper::BulkWaitRead(b_, static_cast<int>(op.ints[0]));
      return absl::OkStatus();
    default:
      return NotLowered(op);
  }
}

absl::Status Emitter::TmaOperands(const ir::Op& op, int v, Value** smem, Value** tmap) {
  ASSIGN_OR_RETURN(Root r, RootOf(op, v));
  if (r.kind != ViewFact::Root::kShared)
    return LoweringError(m_, op.loc, "a TMA's tile side is in shared memory");
  *smem = SharedViewAddr(r, v, Bytes(r.dt));
  auto it = kb_.tmaps.find({op.ints[0], op.ints[1], op.ints[2], r.swz.active() ? 1 : 0});
  if (it == kb_.tmaps.end())
    return LoweringError(m_, op.loc, "internal: no tensor map for this TMA");
  *tmap = b_.CreatePtrToInt(it->second, b_.getInt64Ty());
  return absl::OkStatus();
}

}  // namespace argus::codegen::emit
