// Values: diagnostics, materializing constants, coercion and compile-time
// arguments (integers, shapes, strings, bound call signatures).
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status.h"
#include "dsl/sema/lowering.h"

namespace argus::dsl::sema {

using ir::OpCode;
using ir::Type;

const char* KindName(const Val& v) {
  switch (v.k) {
    case Val::K::kNone:
      return "None";
    case Val::K::kInt:
      return "an integer constant";
    case Val::K::kFloat:
      return "a float constant";
    case Val::K::kBool:
      return "a bool constant";
    case Val::K::kVar:
      return "a value";
    case Val::K::kTuple:
      return "a tuple";
    case Val::K::kDType:
      return "a dtype";
    case Val::K::kStr:
      return "a string";
    case Val::K::kLambda:
      return "a lambda";
    case Val::K::kSwizzle:
      return "a Swizzle";
    case Val::K::kLayout:
      return "a Layout";
    case Val::K::kThreadLayout:
      return "a thread_layout";
    case Val::K::kFunc:
      return "a function";
  }
  return "?";
}

DType PromoteStrong(DType a, DType b) {
  if (a == b) return a;
  if (a == DType::kBool) a = DType::kI32;
  if (b == DType::kBool) b = DType::kI32;
  if (a == b) return a;
  bool fa = IsFloat(a), fb = IsFloat(b);
  if (fa && fb) {
    int ra = FloatRank(a), rb = FloatRank(b);
    if (ra != rb) return ra > rb ? a : b;
    return DType::kF32;  // f16 vs bf16, e4m3 vs e5m2
  }
  if (fa) return a;
  if (fb) return b;
  if (a == DType::kI64 || b == DType::kI64) return DType::kI64;
  if (a == DType::kU32 || b == DType::kU32) return DType::kU32;
  return DType::kI32;
}

DType ResultType(const Val& a, DType ta, const Val& b, DType tb) {
  bool wa = a.is_const() && a.weak, wb = b.is_const() && b.weak;
  if (wa && !wb) return (a.k == Val::K::kFloat && !IsFloat(tb)) ? DType::kF32 : tb;
  if (wb && !wa) return (b.k == Val::K::kFloat && !IsFloat(ta)) ? DType::kF32 : ta;
  return PromoteStrong(ta, tb);
}

DType JoinType(const Val& a, DType ta, const Val& b, DType tb) {
  bool wa = a.is_const() && a.weak, wb = b.is_const() && b.weak;
  DType t = wa && !wb ? tb : wb && !wa ? ta : PromoteStrong(ta, tb);
  if (ta == DType::kBool && tb == DType::kBool) t = DType::kBool;
  return t;
}

absl::Status FnLowering::Err(Loc loc, std::string msg, std::string hint) {
  return ErrorAt(*m_->src, loc, std::move(msg), std::move(hint));
}

absl::Status FnLowering::RequireHopper(Loc loc, const std::string& what) {
  if (f_->arch != "sm_90a") {
    return Err(
        loc,
        absl::StrCat(what, " is a Hopper (sm_90a) instruction; this kernel targets ", f_->arch),
        "pin the kernel with arch=\"sm_90a\"");
  }
  return absl::OkStatus();
}

absl::Status FnLowering::RequireKernel(Loc loc, const std::string& what) {
  if (!f_->is_kernel) {
    return Err(loc, absl::StrCat(what, " is only allowed in a @kernel, not in a @device function"),
               "allocate in the kernel; device functions work on scalars");
  }
  return absl::OkStatus();
}

ir::Op& FnLowering::EmitRegions(OpCode code, Loc loc, std::vector<int> operands,
                                std::vector<ir::Block> regions, int result) {
  ir::Op op;
  op.code = code;
  op.loc = loc;
  op.result = result;
  op.operands = std::move(operands);
  op.regions = std::move(regions);
  cur_->push_back(std::move(op));
  return cur_->back();
}

absl::StatusOr<int> FnLowering::Materialize(const Val& v, Loc loc) {
  switch (v.k) {
    case Val::K::kVar:
      return v.var;
    case Val::K::kInt: {
      DType t =
          v.weak ? ((v.i >= INT32_MIN && v.i <= INT32_MAX) ? DType::kI32 : DType::kI64) : v.dt;
      int r = NewVar(Type::Scalar(t));
      Emit(OpCode::kConst, loc, r).ints = {WrapInt(t, v.i)};
      return r;
    }
    case Val::K::kFloat: {
      DType t = v.weak ? DType::kF32 : v.dt;
      int r = NewVar(Type::Scalar(t));
      Emit(OpCode::kConst, loc, r).fval = RoundTo(t, v.f);
      return r;
    }
    case Val::K::kBool: {
      int r = NewVar(Type::Scalar(DType::kBool));
      Emit(OpCode::kConst, loc, r).ints = {v.i};
      return r;
    }
    default:
      return Err(loc, absl::StrCat("expected a value, found ", KindName(v)),
                 "use a number, a variable or an expression");
  }
}

std::string FnLowering::Found(const Val& v) const {
  return v.k == Val::K::kVar ? TypeOf(v.var).ToString() : KindName(v);
}

absl::StatusOr<DType> FnLowering::ScalarDType(const Val& v, Loc loc, const char* what) {
  if (v.k == Val::K::kInt) return v.weak ? DType::kI32 : v.dt;
  if (v.k == Val::K::kFloat) return v.weak ? DType::kF32 : v.dt;
  if (v.k == Val::K::kBool) return DType::kBool;
  if (v.k == Val::K::kVar && TypeOf(v.var).is_scalar()) return TypeOf(v.var).dtype;
  return Err(loc, absl::StrCat(what, " must be a scalar, found ", Found(v)),
             "index a view (v[i, j]) to get an element");
}

// Converts v to dtype `to`: constants are re-typed, vars cast. Float to int
// (and anything to bool) must be explicit.
absl::StatusOr<int> FnLowering::Coerce(const Val& v, DType to, Loc loc, const char* what) {
  ASSIGN_OR_RETURN(DType from, ScalarDType(v, loc, what));
  if (from == to) return Materialize(v, loc);
  bool ok = false;
  if (IsFloat(to)) ok = true;
  if (IsInt(to) && (IsInt(from) || from == DType::kBool)) ok = true;
  if (to == DType::kBool && from == DType::kBool) ok = true;
  if (v.is_const() && v.weak && v.k == Val::K::kInt && to != DType::kBool) ok = true;
  if (!ok) {
    return Err(loc, absl::StrCat(what, " has type ", DTypeName(from), ", expected ", DTypeName(to)),
               absl::StrCat("convert explicitly, e.g. ", DTypeName(to), "(x)"));
  }
  if (v.is_const()) {
    Val c = v;
    c.weak = false;
    c.dt = to;
    if (IsFloat(to)) {
      c.k = Val::K::kFloat;
      c.f = v.k == Val::K::kFloat ? v.f : static_cast<double>(v.i);
    } else {
      c.k = Val::K::kInt;
      c.i = WrapInt(to, v.k == Val::K::kFloat ? static_cast<int64_t>(v.f) : v.i);
    }
    return Materialize(c, loc);
  }
  int r = NewVar(Type::Scalar(to));
  Emit(OpCode::kCast, loc, r, {v.var});
  return r;
}

absl::StatusOr<int> FnLowering::AsIndex(const Val& v, Loc loc, const char* what) {
  ASSIGN_OR_RETURN(DType t, ScalarDType(v, loc, what));
  if (!IsInt(t)) {
    return Err(loc, absl::StrCat(what, " must be an integer, found ", DTypeName(t)),
               "convert with i32(x)");
  }
  return Materialize(v, loc);
}

absl::StatusOr<int> FnLowering::ScalarVar(const Val& v, Loc loc, const char* what) {
  RETURN_IF_ERROR(ScalarDType(v, loc, what).status());
  return Materialize(v, loc);
}

absl::StatusOr<int> FnLowering::ViewVar(const Val& v, Loc loc, const char* what) {
  if (v.k == Val::K::kVar && TypeOf(v.var).is_view()) return v.var;
  return Err(loc, absl::StrCat(what, " must be a tensor view, found ", Found(v)),
             "pass a tensor, a shared/local buffer or a view of one");
}

absl::StatusOr<int> FnLowering::FragVar(const Val& v, Loc loc, const char* what) {
  if (v.k == Val::K::kVar && TypeOf(v.var).is_frag()) return v.var;
  return Err(loc, absl::StrCat(what, " must be an MMA fragment, found ", Found(v)),
             "create one with fragment(...) or load_fragment(...)");
}

absl::StatusOr<int64_t> FnLowering::ConstIntVal(const Val& v, Loc loc, const char* what) {
  if (v.k == Val::K::kInt || v.k == Val::K::kBool) return v.i;
  return Err(loc, absl::StrCat(what, " must be a compile-time integer, found ", KindName(v)),
             "use literals, const parameters and arithmetic on them");
}

absl::StatusOr<int64_t> FnLowering::ConstInt(const Expr& e, const char* what) {
  ASSIGN_OR_RETURN(Val v, Eval(e));
  return ConstIntVal(v, e.loc, what);
}

absl::StatusOr<std::vector<int64_t>> FnLowering::ConstShapeVal(const Val& v, Loc loc,
                                                               const char* what) {
  std::vector<int64_t> out;
  if (v.k == Val::K::kInt) {
    out.push_back(v.i);
  } else if (v.k == Val::K::kTuple) {
    for (const Val& e : v.elems) {
      ASSIGN_OR_RETURN(int64_t x, ConstIntVal(e, loc, what));
      out.push_back(x);
    }
  } else {
    return Err(loc,
               absl::StrCat(what, " must be a tuple of compile-time integers, found ", KindName(v)),
               "write e.g. (BM, BK) with const parameters");
  }
  if (out.empty() || out.size() > 4) {
    return Err(loc, absl::StrCat(what, " must have 1 to 4 dims, has ", out.size()), "use rank 1-4");
  }
  for (int64_t x : out) {
    if (x <= 0 || x > (int64_t{1} << 24)) {
      return Err(loc, absl::StrCat(what, " has extent ", x, ", must be in 1..2^24"),
                 "use positive extents");
    }
  }
  return out;
}

absl::StatusOr<std::vector<int64_t>> FnLowering::ConstShape(const Expr& e, const char* what) {
  ASSIGN_OR_RETURN(Val v, Eval(e));
  return ConstShapeVal(v, e.loc, what);
}

absl::StatusOr<std::string> FnLowering::ConstStr(const Expr& e, const char* what) {
  if (e.kind != ExprKind::kStr) {
    return Err(e.loc, absl::StrCat(what, " must be a string literal"), "write it in quotes");
  }
  return e.name;
}

absl::StatusOr<std::vector<const Expr*>> FnLowering::BindArgs(const Expr& call,
                                                              const std::string& fname,
                                                              std::vector<std::string> params) {
  std::vector<const Expr*> out(params.size(), nullptr);
  std::vector<bool> optional(params.size());
  for (size_t i = 0; i < params.size(); ++i) {
    if (!params[i].empty() && params[i].back() == '?') {
      optional[i] = true;
      params[i].pop_back();
    }
  }
  std::string sig = absl::StrCat(fname, "(", absl::StrJoin(params, ", "), ")");
  size_t npos = call.args.size() - 1;
  if (npos > params.size()) {
    return Err(call.args[params.size() + 1]->loc,
               absl::StrCat(fname, "() takes at most ", params.size(), " arguments, got ", npos),
               absl::StrCat("the signature is ", sig));
  }
  for (size_t i = 0; i < npos; ++i) out[i] = call.args[i + 1].get();
  for (const Keyword& kw : call.kwargs) {
    size_t idx = params.size();
    for (size_t i = 0; i < params.size(); ++i) {
      if (params[i] == kw.name) idx = i;
    }
    if (idx == params.size()) {
      return Err(kw.loc, absl::StrCat(fname, "() has no parameter '", kw.name, "'"),
                 absl::StrCat("the signature is ", sig));
    }
    if (out[idx]) {
      return Err(kw.loc, absl::StrCat(fname, "() got '", kw.name, "' twice"), "pass it once");
    }
    out[idx] = kw.value.get();
  }
  for (size_t i = 0; i < params.size(); ++i) {
    if (!out[i] && !optional[i]) {
      return Err(call.loc, absl::StrCat(fname, "() missing argument '", params[i], "'"),
                 absl::StrCat("the signature is ", sig));
    }
  }
  return out;
}

}  // namespace argus::dsl::sema
