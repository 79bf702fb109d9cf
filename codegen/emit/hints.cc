// The kHint family: AMD scheduling hints by name (s_waitcnt,
// sched_group_barrier, s_setprio). Other targets ignore them; pass 1 notes
// that.
#include "absl/strings/str_cat.h"
#include "codegen/emit/emitter.h"
#include "llvm/IR/IntrinsicsAMDGPU.h"

namespace argus::codegen::emit {

absl::Status Emitter::HintOp(const ir::Op& op) {
  if (!amd_) return absl::OkStatus();
  auto arg = [&](size_t i, int64_t dflt) {
    return i < op.ints.size() && op.ints[i] >= 0 ? op.ints[i] : dflt;
  };
  if (op.name == "s_waitcnt") {
    int64_t vm = std::min<int64_t>(arg(0, 63), 63), lgkm = std::min<int64_t>(arg(1, 15), 15);
    int64_t imm = (vm & 15) | ((vm >> 4) << 14) | (7 << 4) | (lgkm << 8);
    Call(I::amdgcn_s_waitcnt, {C32(imm)});
  } else if (op.name == "sched_group_barrier") {
    Call(I::amdgcn_sched_group_barrier, {C32(arg(0, 0)), C32(arg(1, 0)), C32(arg(2, 0))});
  } else if (op.name == "s_setprio") {
    Call(I::amdgcn_s_setprio, {b_.getInt16(static_cast<uint16_t>(arg(0, 0)))});
  } else {
    return LoweringError(m_, op.loc, absl::StrCat("unknown hint ", op.name));
  }
  return absl::OkStatus();
}

}  // namespace argus::codegen::emit
