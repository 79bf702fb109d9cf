// Scalar builtins: cdiv/min/max, math functions, select, thread and block
// indices; and the names that are only valid in another place (grid(),
// range(), signature annotations and decorators).
#include <cmath>

#include "absl/strings/str_cat.h"
#include "base/status.h"
#include "dsl/sema/lowering.h"

namespace argus::dsl::sema {

using ir::OpCode;
using ir::Type;

absl::StatusOr<Val> FnLowering::MisplacedGrid(const BuiltinCall& c) {
  return Err(c.loc, "grid() must be the first statement of a kernel",
             "move it to the top of the body");
}

absl::StatusOr<Val> FnLowering::MisplacedRange(const BuiltinCall& c) {
  return Err(c.loc, "range() is only allowed as a for loop's iterable",
             "write `for i in range(n):`");
}

absl::StatusOr<Val> FnLowering::SignatureOnly(const BuiltinCall& c) {
  return Err(c.loc,
             absl::StrCat("'", c.name, "' is only allowed in a function signature or decorator"),
             "see docs/dsl.md");
}

absl::StatusOr<Val> FnLowering::MinMax(const BuiltinCall& c) {
  ASSIGN_OR_RETURN(Val x, Eval(*c.args[0]));
  ASSIGN_OR_RETURN(Val y, Eval(*c.args[1]));
  return Binary(c.name, x, y, c.loc);
}

// cdiv(x, y) = (x + (y - 1)) // y, folded where both are constants.
absl::StatusOr<Val> FnLowering::Cdiv(const BuiltinCall& c) {
  Loc loc = c.loc;
  ASSIGN_OR_RETURN(Val x, Eval(*c.args[0]));
  ASSIGN_OR_RETURN(Val y, Eval(*c.args[1]));
  ASSIGN_OR_RETURN(DType tx, ScalarDType(x, x.loc, "cdiv operand"));
  ASSIGN_OR_RETURN(DType ty, ScalarDType(y, y.loc, "cdiv operand"));
  if (!IsInt(tx) || !IsInt(ty))
    return Err(loc, "cdiv() needs integer operands", "convert with i32(x)");
  if (y.k == Val::K::kInt && y.i <= 0)
    return Err(y.loc, "cdiv() by a non-positive constant", "divide by a positive value");
  ASSIGN_OR_RETURN(Val y1, Binary("-", y, Val::Int(1, loc), loc));
  ASSIGN_OR_RETURN(Val s1, Binary("+", x, y1, loc));
  return Binary("//", s1, y, loc);
}

absl::StatusOr<Val> FnLowering::Math(const BuiltinCall& c) {
  const std::string& name = c.name;
  Loc loc = c.loc;
  ASSIGN_OR_RETURN(Val x, Eval(*c.args[0]));
  if (IsFragVal(x)) {
    if (name != "exp2")
      return Err(loc, absl::StrCat(name, "() of a fragment"),
                 "fragments take exp2(); write exp(x) as exp2(x * 1.4426950408889634)");
    return FragEw(ir::FragEwOp::kExp2, {x}, loc, "exp2()");
  }
  ASSIGN_OR_RETURN(DType t, ScalarDType(x, x.loc, absl::StrCat(name, "() operand").c_str()));
  if (t == DType::kBool) return Err(loc, absl::StrCat(name, "() of a bool"), "convert first");
  ir::MathOp mop = name == "abs"    ? ir::MathOp::kAbs
                   : name == "exp"  ? ir::MathOp::kExp
                   : name == "exp2" ? ir::MathOp::kExp2
                   : name == "log"  ? ir::MathOp::kLog
                   : name == "sqrt" ? ir::MathOp::kSqrt
                                    : ir::MathOp::kRsqrt;
  if (name != "abs" && !IsFloat(t)) t = DType::kF32;
  if (x.is_const() && name == "abs") {
    Val r = x;
    if (r.k == Val::K::kInt)
      r.i = r.i < 0 ? -r.i : r.i;
    else
      r.f = std::fabs(r.f);
    return r;
  }
  ASSIGN_OR_RETURN(int v, Coerce(x, t, x.loc, "operand"));
  int r = NewVar(Type::Scalar(t));
  Emit(OpCode::kMath, loc, r, {v}).sub = static_cast<uint8_t>(mop);
  return Val::Var(r, loc);
}

absl::StatusOr<Val> FnLowering::Select(const BuiltinCall& c) {
  Loc loc = c.loc;
  ASSIGN_OR_RETURN(std::vector<Val> v, EvalAll(c.args));
  const Val &cond = v[0], &x = v[1], &y = v[2];
  if (IsFragVal(cond) || IsFragVal(x) || IsFragVal(y))
    return FragEw(ir::FragEwOp::kSelect, v, loc, "select()");
  ASSIGN_OR_RETURN(DType tc, ScalarDType(cond, cond.loc, "select condition"));
  if (tc != DType::kBool)
    return Err(cond.loc, "select() condition must be bool", "compare explicitly");
  ASSIGN_OR_RETURN(DType tx, ScalarDType(x, x.loc, "select operand"));
  ASSIGN_OR_RETURN(DType ty, ScalarDType(y, y.loc, "select operand"));
  DType t = JoinType(x, tx, y, ty);
  ASSIGN_OR_RETURN(int vc, Materialize(cond, cond.loc));
  ASSIGN_OR_RETURN(int vx, Coerce(x, t, x.loc, "select operand"));
  ASSIGN_OR_RETURN(int vy, Coerce(y, t, y.loc, "select operand"));
  int r = NewVar(Type::Scalar(t));
  Emit(OpCode::kSelect, loc, r, {vc, vx, vy});
  return Val::Var(r, loc);
}

Val FnLowering::Special(ir::SpecialOp s, int64_t dim, Loc loc) {
  int r = NewVar(Type::Scalar(DType::kI32));
  ir::Op& op = Emit(OpCode::kSpecial, loc, r);
  op.sub = static_cast<uint8_t>(s);
  if (dim >= 0) op.ints = {dim};
  return Val::Var(r, loc);
}

absl::StatusOr<Val> FnLowering::ThreadIndex(const BuiltinCall& c) {
  return Special(c.name == "thread_id" ? ir::SpecialOp::kThreadId
                 : c.name == "warp_id" ? ir::SpecialOp::kWarpId
                                       : ir::SpecialOp::kLaneId,
                 -1, c.loc);
}

// A typed constant: the kernel's arch fixes it.
absl::StatusOr<Val> FnLowering::WarpSize(const BuiltinCall& c) {
  Val v = Val::Int(f_->warp_size, c.loc);
  v.weak = false;
  v.dt = DType::kI32;
  return v;
}

absl::StatusOr<Val> FnLowering::GridIndex(const BuiltinCall& c) {
  ASSIGN_OR_RETURN(int64_t d, ConstInt(*c.args[0], "dimension"));
  if (d < 0 || d > 2)
    return Err(c.args[0]->loc, absl::StrCat(c.name, "() dimension must be 0, 1 or 2, got ", d),
               "use 0, 1 or 2");
  return Special(c.name == "block_id" ? ir::SpecialOp::kBlockId : ir::SpecialOp::kGridDim, d,
                 c.loc);
}

}  // namespace argus::dsl::sema
