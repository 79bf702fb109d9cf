// AMD (gfx942) scheduling hints: s_waitcnt, sched_group_barrier, s_setprio.
#include "absl/strings/str_cat.h"
#include "base/status.h"
#include "dsl/sema/lowering.h"

namespace argus::dsl::sema {

using ir::OpCode;

// The hint's arguments become the op's ints (s_waitcnt: -1 where a count is
// not given); the arch is checked after the arguments.
absl::StatusOr<Val> FnLowering::Hint(const BuiltinCall& c) {
  const auto& a = c.args;
  std::vector<int64_t> ints;
  if (c.name == "s_waitcnt") {
    for (const Expr* x : a) {
      if (!x) {
        ints.push_back(-1);
        continue;
      }
      ASSIGN_OR_RETURN(int64_t v, ConstInt(*x, "s_waitcnt count"));
      if (v < 0 || v > 63) return Err(x->loc, "s_waitcnt counts are 0..63", "use a small constant");
      ints.push_back(v);
    }
  } else {
    for (const Expr* x : a) {
      ASSIGN_OR_RETURN(int64_t v, ConstInt(*x, "hint argument"));
      if (v < 0 || v > 0xffff)
        return Err(x->loc, "hint arguments are 0..65535", "use a small constant");
      ints.push_back(v);
    }
    if (c.name == "s_setprio" && ints[0] > 3)
      return Err(a[0]->loc, "s_setprio priority is 0..3", "use 0..3");
  }
  if (f_->arch != "gfx942") {
    return Err(c.loc,
               absl::StrCat(c.name, " is an AMD instruction; this kernel targets ", f_->arch),
               "pin the kernel with arch=\"gfx942\"");
  }
  ir::Op& op = Emit(OpCode::kHint, c.loc);
  op.name = c.name;
  op.ints = ints;
  return Val::None(c.loc);
}

}  // namespace argus::dsl::sema
