// Expressions: evaluation, names, constant folding and the scalar operators
// (binary, unary, comparisons, and/or, conditional expressions).
#include <algorithm>
#include <set>

#include "absl/strings/str_cat.h"
#include "base/status.h"
#include "dsl/sema/lowering.h"

namespace argus::dsl::sema {
namespace {

using ir::BinOp;
using ir::CmpOp;
using ir::OpCode;
using ir::Type;

// Python names a kernel might reach for that the DSL does not have.
const std::set<std::string>& HostOnly() {
  static const std::set<std::string> s = {
      "print",      "open",       "input",   "len",        "list",      "dict",       "set",
      "str",        "int",        "float",   "isinstance", "type",      "super",      "eval",
      "exec",       "getattr",    "setattr", "hasattr",    "enumerate", "zip",        "map",
      "filter",     "sorted",     "sum",     "any",        "all",       "iter",       "next",
      "object",     "id",         "hash",    "repr",       "format",    "vars",       "globals",
      "locals",     "__import__", "compile", "bytes",      "bytearray", "memoryview", "tuple",
      "round",      "pow",        "divmod",  "chr",        "ord",       "exit",       "quit",
      "breakpoint", "np",         "numpy",   "torch",      "math"};
  return s;
}

double AsDouble(const Val& v) { return v.k == Val::K::kFloat ? v.f : static_cast<double>(v.i); }

}  // namespace

absl::StatusOr<Val> FnLowering::Eval(const Expr& e) {
  struct Guard {
    int* d;
    explicit Guard(int* d) : d(d) { ++*d; }
    ~Guard() { --*d; }
  } guard(&depth_);
  if (depth_ > 200) return Err(e.loc, "expression nested too deeply", "split it into statements");
  switch (e.kind) {
    case ExprKind::kInt:
      return Val::Int(e.ival, e.loc);
    case ExprKind::kFloat:
      return Val::Float(e.fval, e.loc);
    case ExprKind::kBool:
      return Val::Bool(e.ival != 0, e.loc);
    case ExprKind::kNone:
      return Val::None(e.loc);
    case ExprKind::kStr: {
      Val v = Val::Object(Val::K::kStr, e.loc);
      v.s = e.name;
      return v;
    }
    case ExprKind::kName:
      return Name(e);
    case ExprKind::kTuple: {
      Val t = Val::Object(Val::K::kTuple, e.loc);
      for (const auto& a : e.args) {
        ASSIGN_OR_RETURN(Val x, Eval(*a));
        t.elems.push_back(std::move(x));
      }
      return t;
    }
    case ExprKind::kBinOp: {
      ASSIGN_OR_RETURN(Val a, Eval(*e.args[0]));
      ASSIGN_OR_RETURN(Val b, Eval(*e.args[1]));
      return Binary(e.name, a, b, e.loc);
    }
    case ExprKind::kUnary:
      return Unary(e);
    case ExprKind::kCompare:
      return Compare(e);
    case ExprKind::kBoolOp:
      return BoolOp(e);
    case ExprKind::kIfExp:
      return IfExp(e);
    case ExprKind::kSubscript:
      return Subscript(e);
    case ExprKind::kAttr:
      return Attr(e);
    case ExprKind::kCall:
      return Call(e);
    case ExprKind::kSlice:
      return Err(e.loc, "a slice is only allowed inside a subscript", "write v[a:b]");
    case ExprKind::kLambda: {
      Val v = Val::Object(Val::K::kLambda, e.loc);
      v.lambda = &e;
      return v;
    }
  }
  return Err(e.loc, "unsupported expression", "see docs/dsl.md");
}

absl::StatusOr<Val> FnLowering::Name(const Expr& e) {
  auto it = env_.find(e.name);
  if (it != env_.end()) {
    Val v = it->second;
    v.loc = e.loc;
    v.fresh = false;
    return v;
  }
  if (in_launch_ && assigns_.count(e.name)) {
    return Err(e.loc, absl::StrCat("grid() cannot use '", e.name, "'"),
               "grid() may only use dims, scalar parameters and constants");
  }
  if (auto dt = DTypeFromName(e.name)) {
    Val v = Val::Object(Val::K::kDType, e.loc);
    v.dt = *dt;
    return v;
  }
  if (FindBuiltin(e.name) || m_->device_fns.count(e.name) || FindMma(e.name)) {
    Val v = Val::Object(Val::K::kFunc, e.loc);
    v.s = e.name;
    return v;
  }
  if (HostOnly().count(e.name)) {
    return Err(e.loc, absl::StrCat("'", e.name, "' is host Python, not in the DSL subset"),
               "kernels run on the GPU; see docs/dsl.md for the builtins");
  }
  if (assigns_.count(e.name)) {
    return Err(e.loc, absl::StrCat("'", e.name, "' is used before it is assigned"),
               "assign it earlier in the function");
  }
  return Err(e.loc, absl::StrCat("undefined name '", e.name, "'"),
             "declare it as a parameter or assign it before use");
}

absl::StatusOr<Val> FnLowering::FoldFloatBinary(const std::string& op, const Val& a, const Val& b,
                                                Loc loc) {
  double x = AsDouble(a), y = AsDouble(b);
  double r;
  if (op == "+") {
    r = x + y;
  } else if (op == "-") {
    r = x - y;
  } else if (op == "*") {
    r = x * y;
  } else if (op == "/") {
    if (y == 0) return Err(loc, "division by zero in a constant expression", "fix the divisor");
    r = x / y;
  } else if (op == "min") {
    r = std::min(x, y);
  } else if (op == "max") {
    r = std::max(x, y);
  } else {
    return Err(loc, absl::StrCat("operator '", op, "' needs integer operands"),
               "convert with i32(x)");
  }
  Val v = Val::Float(r, loc);
  DType t = DType::kF32;
  bool strong_a = a.k == Val::K::kFloat && !a.weak, strong_b = b.k == Val::K::kFloat && !b.weak;
  bool weak = !strong_a && !strong_b;
  if (!weak) {
    t = strong_a && strong_b ? PromoteStrong(a.dt, b.dt) : strong_a ? a.dt : b.dt;
    v.f = RoundTo(t, r);
  }
  v.weak = weak;
  v.dt = t;
  return v;
}

absl::StatusOr<Val> FnLowering::FoldBinary(const std::string& op, const Val& a, const Val& b,
                                           Loc loc) {
  if (a.k == Val::K::kFloat || b.k == Val::K::kFloat) return FoldFloatBinary(op, a, b, loc);
  int64_t x = a.i, y = b.i, r = 0;
  bool ovf = false;
  if (op == "+") {
    ovf = __builtin_add_overflow(x, y, &r);
  } else if (op == "-") {
    ovf = __builtin_sub_overflow(x, y, &r);
  } else if (op == "*") {
    ovf = __builtin_mul_overflow(x, y, &r);
  } else if (op == "//" || op == "%") {
    if (y == 0) return Err(loc, "division by zero in a constant expression", "fix the divisor");
    if (x == INT64_MIN && y == -1) {
      ovf = true;
    } else {
      ir::FloorDivMod d = ir::FloorDivide(x, y);
      r = op == "//" ? d.quot : d.rem;
    }
  } else if (op == "/") {
    return Err(loc, "'/' on integers", "use // for integer division, or make an operand float");
  } else if (op == "<<") {
    if (y < 0 || y > 62)
      return Err(loc, "shift count out of range in a constant expression", "shift by 0..62");
    r = static_cast<int64_t>(static_cast<uint64_t>(x) << y);
  } else if (op == ">>") {
    if (y < 0 || y > 63)
      return Err(loc, "shift count out of range in a constant expression", "shift by 0..63");
    r = x >> y;
  } else if (op == "&") {
    r = x & y;
  } else if (op == "|") {
    r = x | y;
  } else if (op == "^") {
    r = x ^ y;
  } else if (op == "min") {
    r = std::min(x, y);
  } else if (op == "max") {
    r = std::max(x, y);
  } else {
    return Err(loc, absl::StrCat("unsupported operator '", op, "'"), "see docs/dsl.md");
  }
  if (ovf) return Err(loc, "integer overflow in a constant expression", "use smaller constants");
  Val v = Val::Int(r, loc);
  v.weak = a.weak && b.weak;
  if (!v.weak) {
    v.dt = (!a.weak && !b.weak) ? PromoteStrong(a.dt, b.dt) : (!a.weak ? a.dt : b.dt);
    if (v.dt == DType::kBool) v.dt = DType::kI32;
    v.i = WrapInt(v.dt, r);
  }
  return v;
}

absl::StatusOr<Val> FnLowering::Binary(const std::string& op, const Val& a, const Val& b, Loc loc) {
  if (a.k == Val::K::kTuple || b.k == Val::K::kTuple) {
    return Err(loc, absl::StrCat("operator '", op, "' on a tuple"), "operate on the elements");
  }
  if (IsFragVal(a) || IsFragVal(b)) {
    static const std::pair<const char*, ir::FragEwOp> kFragOps[] = {
        {"+", ir::FragEwOp::kAdd}, {"-", ir::FragEwOp::kSub},   {"*", ir::FragEwOp::kMul},
        {"/", ir::FragEwOp::kDiv}, {"max", ir::FragEwOp::kMax}, {"min", ir::FragEwOp::kMin}};
    for (const auto& [n, code] : kFragOps) {
      if (op == n) return FragEw(code, {a, b}, loc, absl::StrCat("'", op, "'"));
    }
    return Err(loc, absl::StrCat("operator '", op, "' on a fragment"),
               "fragments take + - * / max min exp2 select and comparisons");
  }
  ASSIGN_OR_RETURN(DType ta,
                   ScalarDType(a, a.loc, absl::StrCat("left operand of '", op, "'").c_str()));
  ASSIGN_OR_RETURN(DType tb,
                   ScalarDType(b, b.loc, absl::StrCat("right operand of '", op, "'").c_str()));
  if ((a.k == Val::K::kBool || b.k == Val::K::kBool || ta == DType::kBool || tb == DType::kBool) &&
      op != "&" && op != "|" && op != "^") {
    return Err(loc, absl::StrCat("operator '", op, "' on bool"), "convert with i32(x)");
  }
  if (a.is_const() && b.is_const()) return FoldBinary(op, a, b, loc);
  DType t = ResultType(a, ta, b, tb);
  bool is_bit = op == "<<" || op == ">>" || op == "&" || op == "|" || op == "^";
  if ((is_bit || op == "//" || op == "%") && IsFloat(t)) {
    return Err(loc,
               absl::StrCat("operator '", op, "' needs integer operands, found ", DTypeName(t)),
               op == "//" ? "use / for float division" : "convert with i32(x)");
  }
  if (op == "/" && !IsFloat(t)) {
    return Err(loc, "'/' on integers", "use // for integer division, or make an operand float");
  }
  if (t == DType::kBool && !(op == "&" || op == "|" || op == "^")) t = DType::kI32;
  ASSIGN_OR_RETURN(int va, Coerce(a, t, a.loc, "left operand"));
  ASSIGN_OR_RETURN(int vb, Coerce(b, t, b.loc, "right operand"));
  static const std::pair<const char*, BinOp> kOps[] = {
      {"+", BinOp::kAdd},       {"-", BinOp::kSub}, {"*", BinOp::kMul},  {"/", BinOp::kDiv},
      {"//", BinOp::kFloorDiv}, {"%", BinOp::kMod}, {"<<", BinOp::kShl}, {">>", BinOp::kShr},
      {"&", BinOp::kAnd},       {"|", BinOp::kOr},  {"^", BinOp::kXor},  {"min", BinOp::kMin},
      {"max", BinOp::kMax}};
  for (const auto& [name, code] : kOps) {
    if (op == name) {
      int r = NewVar(Type::Scalar(t));
      Emit(OpCode::kBinary, loc, r, {va, vb}).sub = static_cast<uint8_t>(code);
      return Val::Var(r, loc);
    }
  }
  return Err(loc, absl::StrCat("unsupported operator '", op, "'"), "see docs/dsl.md");
}

absl::StatusOr<Val> FnLowering::Unary(const Expr& e) {
  ASSIGN_OR_RETURN(Val a, Eval(*e.args[0]));
  if (IsFragVal(a)) {
    if (e.name == "+") return a;
    if (e.name == "-")
      return FragEw(ir::FragEwOp::kMul, {a, Val::Float(-1.0, e.loc)}, e.loc, "'-'");
    return Err(e.loc, absl::StrCat("'", e.name, "' on a fragment"), "compare elementwise instead");
  }
  ASSIGN_OR_RETURN(DType t,
                   ScalarDType(a, e.loc, absl::StrCat("operand of '", e.name, "'").c_str()));
  auto emit = [&](ir::UnaryOp op) {
    int r = NewVar(Type::Scalar(t));
    Emit(OpCode::kUnary, e.loc, r, {a.var}).sub = static_cast<uint8_t>(op);
    return Val::Var(r, e.loc);
  };
  if (e.name == "not") {
    if (t != DType::kBool) {
      return Err(e.loc, absl::StrCat("'not' needs a bool, found ", DTypeName(t)),
                 "compare explicitly, e.g. x == 0");
    }
    if (a.is_const()) return Val::Bool(!a.i, e.loc);
    return emit(ir::UnaryOp::kNot);
  }
  if (t == DType::kBool) return Err(e.loc, absl::StrCat("'", e.name, "' on bool"), "use 'not'");
  if (e.name == "+") return a;
  if (e.name == "-") {
    if (a.k == Val::K::kInt) {
      if (a.i == INT64_MIN)
        return Err(e.loc, "integer overflow in a constant expression", "use smaller constants");
      Val r = a;
      r.i = a.weak ? -a.i : WrapInt(a.dt, -a.i);
      return r;
    }
    if (a.k == Val::K::kFloat) {
      Val r = a;
      r.f = -a.f;
      return r;
    }
    return emit(ir::UnaryOp::kNeg);
  }
  // "~"
  if (!IsInt(t)) return Err(e.loc, "'~' needs an integer", "convert with i32(x)");
  if (a.k == Val::K::kInt) {
    Val r = a;
    r.i = a.weak ? ~a.i : WrapInt(a.dt, ~a.i);
    return r;
  }
  return emit(ir::UnaryOp::kBitNot);
}

absl::StatusOr<Val> FnLowering::Compare(const Expr& e) {
  ASSIGN_OR_RETURN(Val a, Eval(*e.args[0]));
  ASSIGN_OR_RETURN(Val b, Eval(*e.args[1]));
  if (IsFragVal(a) || IsFragVal(b)) {
    static const std::pair<const char*, ir::FragEwOp> kFragCmp[] = {
        {"<", ir::FragEwOp::kLt},  {"<=", ir::FragEwOp::kLe}, {">", ir::FragEwOp::kGt},
        {">=", ir::FragEwOp::kGe}, {"==", ir::FragEwOp::kEq}, {"!=", ir::FragEwOp::kNe}};
    for (const auto& [n, c] : kFragCmp) {
      if (e.name == n) return FragEw(c, {a, b}, e.loc, absl::StrCat("'", e.name, "'"));
    }
  }
  ASSIGN_OR_RETURN(DType ta, ScalarDType(a, a.loc, "left operand of comparison"));
  ASSIGN_OR_RETURN(DType tb, ScalarDType(b, b.loc, "right operand of comparison"));
  static const std::pair<const char*, CmpOp> kOps[] = {{"<", CmpOp::kLt},  {"<=", CmpOp::kLe},
                                                       {">", CmpOp::kGt},  {">=", CmpOp::kGe},
                                                       {"==", CmpOp::kEq}, {"!=", CmpOp::kNe}};
  CmpOp code = CmpOp::kEq;
  for (const auto& [n, c] : kOps) {
    if (e.name == n) code = c;
  }
  if ((ta == DType::kBool) != (tb == DType::kBool)) {
    return Err(e.loc, "comparison of bool with a number", "compare like with like");
  }
  if (ta == DType::kBool && code != CmpOp::kEq && code != CmpOp::kNe) {
    return Err(e.loc, "ordering comparison on bool", "use == or !=");
  }
  if (a.is_const() && b.is_const()) {
    bool fl = a.k == Val::K::kFloat || b.k == Val::K::kFloat;
    return Val::Bool(
        fl ? ir::ApplyCmp(code, AsDouble(a), AsDouble(b)) : ir::ApplyCmp(code, a.i, b.i), e.loc);
  }
  DType t = ResultType(a, ta, b, tb);
  if (ta == DType::kBool) t = DType::kBool;
  ASSIGN_OR_RETURN(int va, Coerce(a, t, a.loc, "left operand"));
  ASSIGN_OR_RETURN(int vb, Coerce(b, t, b.loc, "right operand"));
  int r = NewVar(Type::Scalar(DType::kBool));
  Emit(OpCode::kCompare, e.loc, r, {va, vb}).sub = static_cast<uint8_t>(code);
  return Val::Var(r, e.loc);
}

absl::Status FnLowering::BoolOperand(const Expr& e, const Val& v) {
  ASSIGN_OR_RETURN(DType t, ScalarDType(v, v.loc, "operand of and/or"));
  if (t != DType::kBool) {
    return Err(v.loc, absl::StrCat("'", e.name, "' needs bool operands, found ", DTypeName(t)),
               "compare explicitly, e.g. x != 0");
  }
  return absl::OkStatus();
}

absl::StatusOr<Val> FnLowering::BoolOp(const Expr& e) {
  bool is_and = e.name == "and";
  ASSIGN_OR_RETURN(Val a, Eval(*e.args[0]));
  RETURN_IF_ERROR(BoolOperand(e, a));
  if (a.is_const()) {
    if (is_and && !a.i) return Val::Bool(false, e.loc);
    if (!is_and && a.i) return Val::Bool(true, e.loc);
    ASSIGN_OR_RETURN(Val b, Eval(*e.args[1]));
    RETURN_IF_ERROR(BoolOperand(e, b));
    return b;
  }
  // The right side runs only where the left does not decide: r = a; if (a) r = b
  // (or if (!a) for `or`).
  int r = NewVar(Type::Scalar(DType::kBool));
  Emit(OpCode::kMov, e.loc, r, {a.var});
  std::vector<ir::Block> regions(2);
  ir::Block* saved = cur_;
  cur_ = &regions[is_and ? 0 : 1];
  auto b = Eval(*e.args[1]);
  absl::Status st = b.ok() ? BoolOperand(e, *b) : b.status();
  absl::StatusOr<int> vb = st.ok() ? Materialize(*b, b->loc) : st;
  if (vb.ok()) Emit(OpCode::kMov, e.loc, r, {*vb});
  cur_ = saved;
  RETURN_IF_ERROR(vb.status());
  EmitRegions(OpCode::kIf, e.loc, {r}, std::move(regions));
  return Val::Var(r, e.loc);
}

absl::StatusOr<Val> FnLowering::IfExp(const Expr& e) {
  ASSIGN_OR_RETURN(Val c, Eval(*e.args[1]));
  ASSIGN_OR_RETURN(DType tc, ScalarDType(c, c.loc, "condition"));
  if (tc != DType::kBool)
    return Err(c.loc, "condition must be bool", "compare explicitly, e.g. x != 0");
  if (c.is_const()) return Eval(*e.args[c.i ? 0 : 2]);
  std::vector<ir::Block> regions(2);
  ir::Block* saved = cur_;
  cur_ = &regions[0];
  auto a = Eval(*e.args[0]);
  cur_ = &regions[1];
  auto b = a.ok() ? Eval(*e.args[2]) : absl::StatusOr<Val>(a.status());
  cur_ = saved;
  RETURN_IF_ERROR(a.status());
  RETURN_IF_ERROR(b.status());
  ASSIGN_OR_RETURN(DType ta, ScalarDType(*a, a->loc, "conditional expression"));
  ASSIGN_OR_RETURN(DType tbt, ScalarDType(*b, b->loc, "conditional expression"));
  DType t = JoinType(*a, ta, *b, tbt);
  int r = NewVar(Type::Scalar(t));
  cur_ = &regions[0];
  auto va = Coerce(*a, t, a->loc, "conditional expression");
  if (va.ok()) Emit(OpCode::kMov, e.loc, r, {*va});
  cur_ = &regions[1];
  auto vb = va.ok() ? Coerce(*b, t, b->loc, "conditional expression") : va;
  if (vb.ok()) Emit(OpCode::kMov, e.loc, r, {*vb});
  cur_ = saved;
  RETURN_IF_ERROR(vb.status());
  EmitRegions(OpCode::kIf, e.loc, {c.var}, std::move(regions));
  return Val::Var(r, e.loc);
}

}  // namespace argus::dsl::sema
