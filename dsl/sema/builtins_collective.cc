// Collective builtins: warp shuffles, warp and block reductions, and the
// block barrier.
#include "absl/strings/str_cat.h"
#include "base/status.h"
#include "dsl/sema/lowering.h"

namespace argus::dsl::sema {

using ir::OpCode;

// shfl_xor(x, mask) / shfl_down(x, delta) / shfl_idx(x, lane).
absl::StatusOr<Val> FnLowering::Shfl(const BuiltinCall& c) {
  ASSIGN_OR_RETURN(Val x, Eval(*c.args[0]));
  ASSIGN_OR_RETURN(Val y, Eval(*c.args[1]));
  ASSIGN_OR_RETURN(int vx, ScalarVar(x, x.loc, "shuffled value"));
  ASSIGN_OR_RETURN(int vy, Coerce(y, DType::kI32, y.loc, "lane argument"));
  int r = NewVar(TypeOf(vx));
  Emit(OpCode::kShfl, c.loc, r, {vx, vy}).sub =
      static_cast<uint8_t>(c.name == "shfl_xor"    ? ir::ShflKind::kXor
                           : c.name == "shfl_down" ? ir::ShflKind::kDown
                                                   : ir::ShflKind::kIdx);
  return Val::Var(r, c.loc);
}

// warp_reduce_sum / warp_reduce_max / block_reduce_sum / block_reduce_max.
absl::StatusOr<Val> FnLowering::Reduce(const BuiltinCall& c) {
  ASSIGN_OR_RETURN(Val x, Eval(*c.args[0]));
  ASSIGN_OR_RETURN(int vx, ScalarVar(x, x.loc, "reduced value"));
  if (TypeOf(vx).dtype == DType::kBool)
    return Err(x.loc, "cannot reduce a bool", "convert with i32(x)");
  int r = NewVar(TypeOf(vx));
  bool block = c.name[0] == 'b';
  Emit(block ? OpCode::kBlockReduce : OpCode::kWarpReduce, c.loc, r, {vx}).sub =
      static_cast<uint8_t>(c.name.back() == 'm' ? ir::ReduceKind::kSum : ir::ReduceKind::kMax);
  return Val::Var(r, c.loc);
}

absl::StatusOr<Val> FnLowering::Barrier(const BuiltinCall& c) {
  return EmitBare(OpCode::kBarrier, c.loc);
}

}  // namespace argus::dsl::sema
