// Calls: methods, casts (dtype names), @device functions, and the builtins —
// the table of builtins.def and the call that looks a builtin up, runs the
// checks its row declares, binds its arguments and runs its handler.
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "base/status.h"
#include "dsl/sema/lowering.h"

namespace argus::dsl::sema {

using ir::OpCode;
using ir::Type;

const FnLowering::BuiltinSpec* FnLowering::FindBuiltin(std::string_view name) {
  static const auto* const table = [] {
    using namespace builtin_trait;  // the .def's trait names
    auto* t = new std::map<std::string_view, BuiltinSpec>;
    auto add = [t](std::string_view spelling, BuiltinHandler handler, std::string_view params,
                   uint32_t traits) {
      BuiltinSpec& s = (*t)[spelling];
      s.name = spelling;
      s.handler = handler;
      s.binds_own = params == "*";
      if (!s.binds_own) {
        s.params = absl::StrSplit(absl::string_view(params.data(), params.size()), ", ",
                                  absl::SkipEmpty());
      }
      s.traits = traits;
    };
#define ARGUS_BUILTIN(Spelling, Handler, Params, Traits) \
  add(Spelling, &FnLowering::Handler, Params, Traits);
#include "dsl/sema/builtins.def"
#undef ARGUS_BUILTIN
    return t;
  }();
  auto it = table->find(name);
  return it == table->end() ? nullptr : &it->second;
}

absl::StatusOr<Val> FnLowering::CallBuiltin(const std::string& name, const Expr& e) {
  const BuiltinSpec* spec = FindBuiltin(name);
  if (!spec && FindMma(name)) spec = FindBuiltin("mma");  // mma_sync_m16n8k16_bf16(acc, a, b)
  if (!spec) {
    return Err(e.loc, absl::StrCat("unknown function '", name, "'"),
               "see docs/dsl.md for the builtins");
  }
  if (spec->Has(builtin_trait::kKernel))
    RETURN_IF_ERROR(RequireKernel(e.loc, absl::StrCat(name, "()")));
  if (spec->Has(builtin_trait::kHopper)) RETURN_IF_ERROR(RequireHopper(e.loc, name));
  BuiltinCall call{name, e, e.loc, {}};
  if (!spec->binds_own) {
    ASSIGN_OR_RETURN(call.args, BindArgs(e, name, spec->params));
  }
  return (this->*spec->handler)(call);
}

absl::StatusOr<std::vector<Val>> FnLowering::EvalAll(const std::vector<const Expr*>& args) {
  std::vector<Val> out;
  for (const Expr* e : args) {
    ASSIGN_OR_RETURN(Val x, Eval(*e));
    out.push_back(std::move(x));
  }
  return out;
}

absl::StatusOr<Val> FnLowering::Call(const Expr& e) {
  const Expr& callee = *e.args[0];
  if (callee.kind == ExprKind::kAttr) {
    ASSIGN_OR_RETURN(Val recv, Eval(*callee.args[0]));
    return Method(recv, callee.name, e);
  }
  if (callee.kind != ExprKind::kName) {
    return Err(callee.loc, "only named functions can be called",
               "call a builtin or a @device function");
  }
  ASSIGN_OR_RETURN(Val fn, Name(callee));
  if (fn.k == Val::K::kDType) return Cast(fn.dt, e);
  if (fn.k != Val::K::kFunc) {
    return Err(callee.loc,
               absl::StrCat("'", callee.name, "' is ", KindName(fn), ", not a function"),
               "call a builtin or a @device function");
  }
  auto dev = m_->device_fns.find(fn.s);
  if (dev != m_->device_fns.end() && !env_.count(fn.s)) {
    if (in_launch_)
      return Err(e.loc, "grid() cannot call device functions",
                 "compute the grid from dims and constants");
    return CallDevice(m_->out.functions[dev->second], dev->second, e);
  }
  const BuiltinSpec* spec = FindBuiltin(fn.s);
  if (in_launch_ && !(spec && spec->Has(builtin_trait::kHost))) {
    return Err(e.loc, absl::StrCat("grid() cannot call '", fn.s, "'"),
               "grid() may only use dims, scalar parameters, constants, cdiv/min/max");
  }
  return CallBuiltin(fn.s, e);
}

// f32(x), i32(x), ...: constants convert at compile time.
absl::StatusOr<Val> FnLowering::Cast(DType to, const Expr& e) {
  if (!e.kwargs.empty() || e.args.size() != 2) {
    return Err(e.loc, absl::StrCat(DTypeName(to), "() takes one argument"), "write e.g. f32(x)");
  }
  ASSIGN_OR_RETURN(Val x, Eval(*e.args[1]));
  ASSIGN_OR_RETURN(DType from, ScalarDType(x, x.loc, "cast operand"));
  if (x.is_const()) {
    Val c = x;
    c.weak = false;
    c.dt = to;
    if (to == DType::kBool) return Val::Bool(x.k == Val::K::kFloat ? x.f != 0 : x.i != 0, e.loc);
    if (IsFloat(to)) {
      c.k = Val::K::kFloat;
      c.f = RoundTo(to, x.k == Val::K::kFloat ? x.f : static_cast<double>(x.i));
    } else {
      c.k = Val::K::kInt;
      c.i = x.k == Val::K::kFloat ? ConvertToInt(to, x.f) : WrapInt(to, x.i);
    }
    return c;
  }
  if (from == to) return x;
  int r = NewVar(Type::Scalar(to));
  Emit(OpCode::kCast, e.loc, r, {x.var});
  return Val::Var(r, e.loc);
}

absl::StatusOr<Val> FnLowering::CallDevice(const ir::Function& callee, int index, const Expr& e) {
  if (!e.kwargs.empty())
    return Err(e.kwargs[0].loc, "device functions take positional arguments only",
               "pass arguments by position");
  size_t n = e.args.size() - 1;
  if (n != callee.params.size()) {
    return Err(e.loc,
               absl::StrCat(callee.name, "() takes ", callee.params.size(), " arguments, got ", n),
               "match the @device function's parameters");
  }
  std::vector<int> ops;
  for (size_t i = 0; i < n; ++i) {
    ASSIGN_OR_RETURN(Val a, Eval(*e.args[i + 1]));
    const ir::Var& p = callee.vars[callee.params[i]];
    ASSIGN_OR_RETURN(
        int v, Coerce(a, p.type.dtype, a.loc, absl::StrCat("argument '", p.name, "'").c_str()));
    ops.push_back(v);
  }
  int r = callee.ret.is_scalar() ? NewVar(callee.ret) : -1;
  ir::Op& op = Emit(OpCode::kCall, e.loc, r, ops);
  op.name = callee.name;
  op.ints = {index};
  return r >= 0 ? Val::Var(r, e.loc) : Val::None(e.loc);
}

}  // namespace argus::dsl::sema
