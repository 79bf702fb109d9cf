// Statements: expression statements, assignment (compile-time bindings,
// variable definition, typed reassignment, element stores, unpacking),
// return, and structured control flow (for over range, while, if).
#include "absl/strings/str_cat.h"
#include "base/status.h"
#include "dsl/sema/lowering.h"

namespace argus::dsl::sema {

using ir::OpCode;
using ir::Type;

absl::Status FnLowering::Stmts(const std::vector<StmtPtr>& body) {
  for (const StmtPtr& s : body) RETURN_IF_ERROR(Statement(*s));
  return absl::OkStatus();
}

absl::Status FnLowering::Statement(const Stmt& s) {
  switch (s.kind) {
    case StmtKind::kPass:
      return absl::OkStatus();
    case StmtKind::kExpr:
      return ExprStatement(s);
    case StmtKind::kAssign: {
      ASSIGN_OR_RETURN(Val v, Eval(*s.value));
      return Assign(*s.target, std::move(v), s.loc);
    }
    case StmtKind::kAugAssign: {
      if (s.target->kind == ExprKind::kName) {
        ASSIGN_OR_RETURN(Val cur, Name(*s.target));
        ASSIGN_OR_RETURN(Val rhs, Eval(*s.value));
        ASSIGN_OR_RETURN(Val res, Binary(s.op, cur, rhs, s.loc));
        return AssignName(s.target->name, res, s.loc);
      }
      ASSIGN_OR_RETURN(Val cur, Eval(*s.target));
      ASSIGN_OR_RETURN(Val rhs, Eval(*s.value));
      ASSIGN_OR_RETURN(Val res, Binary(s.op, cur, rhs, s.loc));
      return Assign(*s.target, res, s.loc);
    }
    case StmtKind::kFor:
      return For(s);
    case StmtKind::kWhile:
      return While(s);
    case StmtKind::kIf:
      return If(s);
    case StmtKind::kReturn:
      return Return(s);
  }
  return absl::OkStatus();
}

absl::Status FnLowering::ExprStatement(const Stmt& s) {
  if (s.value->kind == ExprKind::kStr) return absl::OkStatus();  // docstring / comment
  if (s.value->kind == ExprKind::kCall && s.value->args[0]->kind == ExprKind::kName &&
      s.value->args[0]->name == "grid") {
    return Err(s.loc, "grid() must be the first statement of a kernel",
               "move it to the top of the body");
  }
  if (s.value->kind != ExprKind::kCall) {
    return Err(s.loc, "expression statement has no effect", "assign it, or remove it");
  }
  return Eval(*s.value).status();
}

absl::Status FnLowering::Return(const Stmt& s) {
  if (f_->is_kernel) {
    return Err(s.loc, "return is not allowed in a kernel",
               "a kernel ends at its last statement; guard work with if");
  }
  if (!s.value) {
    if (f_->ret.is_scalar())
      return Err(s.loc, absl::StrCat("'", f_->name, "' must return a ", f_->ret.ToString()),
                 "return a value");
    Emit(OpCode::kReturn, s.loc);
    return absl::OkStatus();
  }
  if (!f_->ret.is_scalar()) {
    return Err(s.value->loc,
               absl::StrCat("'", f_->name, "' returns a value but has no return annotation"),
               "annotate it: def f(x: f32) -> f32:");
  }
  ASSIGN_OR_RETURN(Val v, Eval(*s.value));
  ASSIGN_OR_RETURN(int r, Coerce(v, f_->ret.dtype, s.value->loc, "returned value"));
  Emit(OpCode::kReturn, s.loc, -1, {r});
  return absl::OkStatus();
}

absl::Status FnLowering::AssignName(const std::string& name, Val v, Loc loc) {
  if (readonly_.count(name)) {
    return Err(loc, absl::StrCat("cannot assign to parameter '", name, "'"),
               "use a new variable name");
  }
  if (loop_vars_.count(name)) {
    return Err(loc, absl::StrCat("cannot assign to loop variable '", name, "' inside its loop"),
               "use a new variable name");
  }
  if (v.k == Val::K::kNone)
    return Err(loc, "cannot assign a value-less expression", "the call returns nothing");
  if (v.k == Val::K::kFunc || v.k == Val::K::kLambda || v.k == Val::K::kStr ||
      v.k == Val::K::kTuple) {
    return Err(loc, absl::StrCat("cannot assign ", KindName(v), " to a variable"),
               v.k == Val::K::kLambda ? "lambdas are only allowed inside tag statements"
                                      : "assign scalars, views or fragments");
  }
  if (v.k == Val::K::kVar && TypeOf(v.var).is_barrier() &&
      !(env_.find(name) == env_.end() && v.fresh && f_->vars[v.var].name.empty())) {
    return Err(loc, "an mbarrier array cannot be copied or reassigned",
               "assign mbarrier(...) once and pass bars[i] directly");
  }
  const AssignInfo& info = assigns_[name];
  bool const_ok = info.count == 1 && !info.nested;
  if (v.k == Val::K::kDType || v.k == Val::K::kSwizzle || v.k == Val::K::kLayout ||
      v.k == Val::K::kThreadLayout || (v.is_const() && const_ok)) {
    if (!const_ok) {
      return Err(loc,
                 absl::StrCat("'", name, "' holds ", KindName(v),
                              " and must be assigned once, at the top level"),
                 "compile-time objects cannot change at run time");
    }
    v.fresh = false;
    env_[name] = v;
    return absl::OkStatus();
  }
  auto it = env_.find(name);
  if (it == env_.end()) return DefineName(name, v, loc);
  if (it->second.k != Val::K::kVar) {
    return Err(loc,
               absl::StrCat("'", name, "' is a compile-time ", KindName(it->second),
                            " and cannot be reassigned"),
               "use a new variable name");
  }
  int dst = it->second.var;
  const Type dt = TypeOf(dst);
  int src;
  if (dt.is_scalar()) {
    ASSIGN_OR_RETURN(
        src, Coerce(v, dt.dtype, loc, absl::StrCat("value assigned to '", name, "'").c_str()));
  } else {
    if (v.k != Val::K::kVar || !(TypeOf(v.var) == dt)) {
      return Err(loc, absl::StrCat("'", name, "' is ", dt.ToString(), ", cannot assign ", Found(v)),
                 "a variable keeps the type of its first assignment");
    }
    src = v.var;
  }
  if (src == dst) return absl::OkStatus();
  // Retarget a fresh temporary's defining op instead of emitting a move.
  if (v.k == Val::K::kVar && v.fresh && !cur_->empty() && cur_->back().result == src &&
      cur_->back().code != OpCode::kFor && f_->vars[src].name.empty() && TypeOf(src) == dt) {
    cur_->back().result = dst;
    return absl::OkStatus();
  }
  Emit(OpCode::kMov, loc, dst, {src});
  return absl::OkStatus();
}

// A fresh unnamed temporary takes the name; anything else is copied into a
// new named var.
absl::Status FnLowering::DefineName(const std::string& name, const Val& v, Loc loc) {
  if (v.k == Val::K::kVar && v.fresh && f_->vars[v.var].name.empty()) {
    f_->vars[v.var].name = name;
    env_[name] = Val::Var(v.var, loc, false);
    return absl::OkStatus();
  }
  int src;
  if (v.k == Val::K::kVar) {
    src = v.var;
  } else {
    ASSIGN_OR_RETURN(src, Materialize(v, loc));
  }
  int r = NewVar(TypeOf(src), name);
  Emit(OpCode::kMov, loc, r, {src});
  env_[name] = Val::Var(r, loc, false);
  return absl::OkStatus();
}

absl::Status FnLowering::Assign(const Expr& target, Val v, Loc loc) {
  if (target.kind == ExprKind::kName) return AssignName(target.name, std::move(v), loc);
  if (target.kind == ExprKind::kSubscript) {
    ASSIGN_OR_RETURN(Val base, Eval(*target.args[0]));
    if (base.k == Val::K::kTuple)
      return Err(target.loc, "tuples are immutable", "build a new tuple");
    return ElementAccess(base, target, &v).status();
  }
  if (target.kind == ExprKind::kTuple) {
    if (v.k != Val::K::kTuple)
      return Err(loc, absl::StrCat("cannot unpack ", KindName(v)),
                 "the right side must be a tuple");
    if (v.elems.size() != target.args.size()) {
      return Err(loc,
                 absl::StrCat("cannot unpack ", v.elems.size(), " values into ", target.args.size(),
                              " targets"),
                 "give as many values as targets");
    }
    for (size_t i = 0; i < v.elems.size(); ++i)
      RETURN_IF_ERROR(Assign(*target.args[i], v.elems[i], target.args[i]->loc));
    return absl::OkStatus();
  }
  return Err(target.loc, "cannot assign to this expression", "assign to a name or an element v[i]");
}

absl::Status FnLowering::For(const Stmt& s) {
  const Expr& it = *s.value;
  if (it.kind != ExprKind::kCall || it.args[0]->kind != ExprKind::kName ||
      it.args[0]->name != "range" || env_.count("range")) {
    return Err(it.loc, "for loops iterate over range(...) only",
               "write `for i in range(a, b, step):`");
  }
  if (!it.kwargs.empty())
    return Err(it.kwargs[0].loc, "range() takes no keyword arguments", "pass start, stop, step");
  size_t n = it.args.size() - 1;
  if (n < 1 || n > 3)
    return Err(it.loc, absl::StrCat("range() takes 1 to 3 arguments, got ", n),
               "write range(stop) or range(start, stop[, step])");
  Val lo = Val::Int(0, it.loc), hi;
  int64_t step = 1;
  if (n == 1) {
    ASSIGN_OR_RETURN(hi, Eval(*it.args[1]));
  } else {
    ASSIGN_OR_RETURN(lo, Eval(*it.args[1]));
    ASSIGN_OR_RETURN(hi, Eval(*it.args[2]));
  }
  if (n == 3) {
    ASSIGN_OR_RETURN(step, ConstInt(*it.args[3], "range step"));
    if (step == 0)
      return Err(it.args[3]->loc, "range() step must not be zero", "use a nonzero constant step");
  }
  ASSIGN_OR_RETURN(DType tl, ScalarDType(lo, lo.loc, "range start"));
  ASSIGN_OR_RETURN(DType th, ScalarDType(hi, hi.loc, "range stop"));
  if (!IsInt(tl) || !IsInt(th))
    return Err(it.loc, "range() bounds must be integers", "convert with i32(x)");
  DType t = (tl == DType::kI64 || th == DType::kI64) ? DType::kI64 : DType::kI32;
  ASSIGN_OR_RETURN(int vlo, Coerce(lo, t, lo.loc, "range start"));
  ASSIGN_OR_RETURN(int vhi, Coerce(hi, t, hi.loc, "range stop"));
  const std::string& name = s.target->name;
  if (readonly_.count(name))
    return Err(s.target->loc, absl::StrCat("cannot use parameter '", name, "' as a loop variable"),
               "use a new name");
  if (loop_vars_.count(name))
    return Err(s.target->loc, absl::StrCat("loop variable '", name, "' reused by a nested loop"),
               "use a new name");
  int iv;
  auto e = env_.find(name);
  if (e != env_.end() && e->second.k == Val::K::kVar && TypeOf(e->second.var) == Type::Scalar(t)) {
    iv = e->second.var;
  } else {
    iv = NewVar(Type::Scalar(t), name);
    env_[name] = Val::Var(iv, s.target->loc, false);
  }
  std::vector<ir::Block> regions(1);
  ir::Block* saved = cur_;
  cur_ = &regions[0];
  loop_vars_.insert(name);
  absl::Status st = Stmts(s.body);
  loop_vars_.erase(name);
  cur_ = saved;
  RETURN_IF_ERROR(st);
  EmitRegions(OpCode::kFor, s.loc, {vlo, vhi}, std::move(regions), iv).ints = {step};
  return absl::OkStatus();
}

absl::Status FnLowering::While(const Stmt& s) {
  std::vector<ir::Block> regions(2);  // condition, body
  ir::Block* saved = cur_;
  cur_ = &regions[0];
  auto c = Eval(*s.value);
  absl::StatusOr<int> cv = c.ok() ? absl::StatusOr<int>(0) : absl::StatusOr<int>(c.status());
  if (c.ok()) {
    auto t = ScalarDType(*c, c->loc, "while condition");
    if (!t.ok())
      cv = t.status();
    else if (*t != DType::kBool)
      cv = Err(c->loc, "while condition must be bool", "compare explicitly, e.g. x != 0");
    else
      cv = Materialize(*c, c->loc);
  }
  if (cv.ok()) {
    cur_ = &regions[1];
    absl::Status st = Stmts(s.body);
    if (!st.ok()) cv = st;
  }
  cur_ = saved;
  RETURN_IF_ERROR(cv.status());
  EmitRegions(OpCode::kWhile, s.loc, {*cv}, std::move(regions));
  return absl::OkStatus();
}

absl::Status FnLowering::If(const Stmt& s) {
  ASSIGN_OR_RETURN(Val c, Eval(*s.value));
  ASSIGN_OR_RETURN(DType t, ScalarDType(c, c.loc, "if condition"));
  if (t != DType::kBool)
    return Err(c.loc, absl::StrCat("if condition must be bool, found ", DTypeName(t)),
               "compare explicitly, e.g. x != 0");
  if (c.is_const()) return Stmts(c.i ? s.body : s.orelse);  // static configuration
  std::vector<ir::Block> regions(2);                        // then, else
  ir::Block* saved = cur_;
  cur_ = &regions[0];
  absl::Status st = Stmts(s.body);
  if (st.ok()) {
    cur_ = &regions[1];
    st = Stmts(s.orelse);
  }
  cur_ = saved;
  RETURN_IF_ERROR(st);
  EmitRegions(OpCode::kIf, s.loc, {c.var}, std::move(regions));
  return absl::OkStatus();
}

}  // namespace argus::dsl::sema
