// Signatures: a function's header (kernel parameters — const, scalar and
// tensor with their symbolic dims — and the @kernel decorator; device
// function parameters and return type), a kernel's grid(), and the driver
// that lowers one function.
#include <cctype>
#include <optional>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "base/status.h"
#include "dsl/sema/lowering.h"

namespace argus::dsl::sema {
namespace {

using ir::Type;

void CountAssigns(const std::vector<StmtPtr>& body, bool nested,
                  std::map<std::string, AssignInfo>* m) {
  for (const StmtPtr& s : body) {
    auto note = [&](const Expr& t) {
      if (t.kind == ExprKind::kName) {
        auto& a = (*m)[t.name];
        a.count++;
        a.nested |= nested;
        if (s->kind != StmtKind::kAssign) a.count++;  // aug-assign / loop var: never const
      } else if (t.kind == ExprKind::kTuple) {
        for (const auto& e : t.args) {
          if (e->kind == ExprKind::kName) {
            auto& a = (*m)[e->name];
            a.count++;
            a.nested |= nested;
          }
        }
      }
    };
    switch (s->kind) {
      case StmtKind::kAssign:
      case StmtKind::kAugAssign:
        note(*s->target);
        break;
      case StmtKind::kFor:
        note(*s->target);
        CountAssigns(s->body, true, m);
        break;
      case StmtKind::kWhile:
        CountAssigns(s->body, true, m);
        break;
      case StmtKind::kIf:
        CountAssigns(s->body, true, m);
        CountAssigns(s->orelse, true, m);
        break;
      default:
        break;
    }
  }
}

bool EndsInReturn(const std::vector<StmtPtr>& body) {
  if (body.empty()) return false;
  const Stmt& s = *body.back();
  if (s.kind == StmtKind::kReturn) return true;
  if (s.kind == StmtKind::kIf) return EndsInReturn(s.body) && EndsInReturn(s.orelse);
  return false;
}

bool IsGridCall(const Stmt& s) {
  return s.kind == StmtKind::kExpr && s.value->kind == ExprKind::kCall &&
         s.value->args[0]->kind == ExprKind::kName && s.value->args[0]->name == "grid";
}

}  // namespace

absl::Status FnLowering::Run() {
  f_->name = def_.name;
  f_->loc = def_.loc;
  CountAssigns(def_.body, false, &assigns_);
  cur_ = &f_->body;
  const Expr& dec = *def_.decorators[0];
  const std::string& dname = dec.kind == ExprKind::kCall ? dec.args[0]->name : dec.name;
  if (dname == "kernel") {
    RETURN_IF_ERROR(KernelHeader());
    if (def_.body.empty() || !IsGridCall(*def_.body[0])) {
      return Err(def_.body.empty() ? def_.loc : def_.body[0]->loc,
                 "a kernel must start with grid(...)",
                 "write grid(cdiv(N, BLOCK)) as the first statement");
    }
    RETURN_IF_ERROR(Grid(*def_.body[0]));
    for (size_t i = 1; i < def_.body.size(); ++i) RETURN_IF_ERROR(Statement(*def_.body[i]));
    return absl::OkStatus();
  }
  RETURN_IF_ERROR(DeviceHeader());
  RETURN_IF_ERROR(Stmts(def_.body));
  if (f_->ret.is_scalar() && !EndsInReturn(def_.body)) {
    return Err(def_.loc,
               absl::StrCat("device function '", def_.name, "' may end without returning a ",
                            f_->ret.ToString()),
               "end every path with a return");
  }
  return absl::OkStatus();
}

// ---- kernels ------------------------------------------------------------------------

absl::Status FnLowering::KernelHeader() {
  f_->is_kernel = true;
  std::set<std::string> seen;
  for (const Param& p : def_.params) {
    if (!seen.insert(p.name).second)
      return Err(p.loc, absl::StrCat("duplicate parameter '", p.name, "'"), "rename it");
    if (!p.annotation) {
      return Err(p.loc, absl::StrCat("parameter '", p.name, "' needs a type annotation"),
                 "write A: Tensor[bf16, \"M\", \"K\"], BM: const = 128, or n: i32");
    }
  }
  // Constants first, so that tensor annotations may use them.
  for (int pass = 0; pass < 2; ++pass) {
    for (const Param& p : def_.params) {
      const Expr& an = *p.annotation;
      bool is_const = an.kind == ExprKind::kName && an.name == "const";
      if (is_const != (pass == 0)) continue;
      if (env_.count(p.name))
        return Err(p.loc, absl::StrCat("parameter '", p.name, "' clashes with a dimension name"),
                   "rename one of them");
      if (is_const) {
        RETURN_IF_ERROR(BindConstParam(p));
        continue;
      }
      if (p.default_value) {
        return Err(p.default_value->loc, "only const parameters take defaults",
                   "annotate it `: const` or remove the default");
      }
      if (an.kind == ExprKind::kName) {
        auto dt = DTypeFromName(an.name);
        if (!dt) {
          return Err(an.loc, absl::StrCat("unknown parameter type '", an.name, "'"),
                     "use Tensor[dtype, dims...], const, or a scalar type (i32, f32, ...)");
        }
        RETURN_IF_ERROR(BindScalarParam(p, *dt));
        continue;
      }
      if (an.kind != ExprKind::kSubscript || an.args[0]->kind != ExprKind::kName ||
          an.args[0]->name != "Tensor") {
        return Err(an.loc, "unsupported parameter annotation",
                   "use Tensor[dtype, dims...], const, or a scalar type");
      }
      RETURN_IF_ERROR(BindTensorParam(p));
    }
  }
  return KernelDecorator();
}

absl::StatusOr<int> FnLowering::Dim(const std::string& n, Loc loc) {
  auto it = dim_index_.find(n);
  if (it != dim_index_.end()) return it->second;
  bool valid = !n.empty() && (std::isalpha(static_cast<unsigned char>(n[0])) || n[0] == '_');
  for (char c : n) valid = valid && (std::isalnum(static_cast<unsigned char>(c)) || c == '_');
  if (!valid) {
    return Err(loc, absl::StrCat("'", n, "' is not a valid dimension name"),
               "name dims like identifiers: \"M\"");
  }
  if (env_.count(n))
    return Err(loc, absl::StrCat("dimension '", n, "' clashes with a parameter"),
               "rename one of them");
  int idx = static_cast<int>(f_->dims.size());
  f_->dims.push_back(n);
  int v = NewVar(Type::Scalar(DType::kI32), n);
  f_->dim_vars.push_back(v);
  env_[n] = Val::Var(v, loc, false);
  readonly_.insert(n);
  dim_index_[n] = idx;
  return idx;
}

// NAME: const = default, overridable per job (CheckOptions::consts).
absl::Status FnLowering::BindConstParam(const Param& p) {
  const CheckOptions& opt = *m_->options;
  ir::ConstParam c;
  c.name = p.name;
  Val v;
  auto ov = opt.consts.find(p.name);
  if (!p.default_value && ov == opt.consts.end()) {
    return Err(p.loc, absl::StrCat("const parameter '", p.name, "' needs a default"),
               "write BM: const = 128 (override with --const)");
  }
  if (p.default_value) {
    ASSIGN_OR_RETURN(v, Eval(*p.default_value));
    if (!v.is_const())
      return Err(p.default_value->loc, "a const default must be a constant expression",
                 "use literals and earlier const parameters");
  }
  if (ov != opt.consts.end()) {
    m_->unused_consts.erase(p.name);
    ASSIGN_OR_RETURN(v, ConstOverride(p, ov->second, v));
    c.overridden = true;
  }
  v.weak = true;
  c.is_float = v.k == Val::K::kFloat;
  c.ival = v.i;
  c.fval = v.f;
  f_->consts.push_back(c);
  v.fresh = false;
  env_[p.name] = v;
  readonly_.insert(p.name);
  return absl::OkStatus();
}

absl::StatusOr<Val> FnLowering::ConstOverride(const Param& p, const std::string& text,
                                              const Val& def) {
  int64_t iv;
  double dv;
  bool want_float = p.default_value && def.k == Val::K::kFloat;
  bool want_bool = p.default_value && def.k == Val::K::kBool;
  if (want_bool) {
    if (text == "True" || text == "true" || text == "1") return Val::Bool(true, p.loc);
    if (text == "False" || text == "false" || text == "0") return Val::Bool(false, p.loc);
    return Err(p.loc, absl::StrCat("--const ", p.name, "=", text, ": expected True or False"),
               "pass a bool");
  }
  if (!want_float && absl::SimpleAtoi(text, &iv)) return Val::Int(iv, p.loc);
  if (absl::SimpleAtod(text, &dv) && (want_float || !p.default_value)) return Val::Float(dv, p.loc);
  return Err(p.loc,
             absl::StrCat("--const ", p.name, "=", text, ": expected ",
                          want_float ? "a number" : "an integer"),
             "pass a value of the default's type");
}

absl::Status FnLowering::BindScalarParam(const Param& p, DType dt) {
  int v = NewVar(Type::Scalar(dt), p.name);
  f_->scalars.push_back(ir::ScalarParam{p.name, v, dt});
  env_[p.name] = Val::Var(v, p.loc, false);
  readonly_.insert(p.name);
  return absl::OkStatus();
}

// A: Tensor[dtype, "M", "K"] (row-major) or Tensor[dtype, (dims...), (strides...)].
absl::Status FnLowering::BindTensorParam(const Param& p) {
  const Expr& an = *p.annotation;
  if (an.args.size() < 3)
    return Err(an.loc, "Tensor[...] needs a dtype and at least one dim",
               "write Tensor[f32, \"N\"]");
  const Expr& dte = *an.args[1];
  std::optional<DType> dt = dte.kind == ExprKind::kName ? DTypeFromName(dte.name) : std::nullopt;
  if (!dt)
    return Err(dte.loc, "Tensor's first argument must be a dtype",
               "write Tensor[bf16, \"M\", \"K\"]");
  ir::TensorParam tp;
  tp.name = p.name;
  tp.dtype = *dt;
  std::vector<const Expr*> shape_items, stride_items;
  bool explicit_stride = an.args[2]->kind == ExprKind::kTuple;
  if (explicit_stride) {
    if (an.args.size() != 4 || an.args[3]->kind != ExprKind::kTuple) {
      return Err(an.loc, "explicit layout: Tensor[dtype, (dims...), (strides...)]",
                 "write Tensor[bf16, (\"M\", \"K\"), (1, \"M\")]");
    }
    for (const auto& x : an.args[2]->args) shape_items.push_back(x.get());
    for (const auto& x : an.args[3]->args) stride_items.push_back(x.get());
    if (shape_items.size() != stride_items.size())
      return Err(an.args[3]->loc, "shape and stride differ in rank", "give one stride per dim");
  } else {
    for (size_t i = 2; i < an.args.size(); ++i) shape_items.push_back(an.args[i].get());
  }
  if (shape_items.empty() || shape_items.size() > 4)
    return Err(an.loc, "tensors have 1 to 4 dims", "use rank 1-4");
  for (const Expr* x : shape_items) {
    ASSIGN_OR_RETURN(ir::SymInt s, TensorExtent(*x, false));
    tp.shape.push_back(s);
  }
  if (explicit_stride) {
    for (const Expr* x : stride_items) {
      ASSIGN_OR_RETURN(ir::SymInt s, TensorExtent(*x, true));
      tp.stride.push_back(s);
    }
  } else {
    tp.stride.resize(tp.shape.size());
    ir::SymInt acc;
    for (int d = static_cast<int>(tp.shape.size()) - 1; d >= 0; --d) {
      tp.stride[d] = acc;
      acc.coeff *= tp.shape[d].coeff;
      acc.syms.insert(acc.syms.end(), tp.shape[d].syms.begin(), tp.shape[d].syms.end());
    }
  }
  std::vector<int64_t> static_shape;
  for (const ir::SymInt& s : tp.shape) static_shape.push_back(s.syms.empty() ? s.coeff : -1);
  tp.var = NewVar(Type::View(Space::kGlobal, *dt, static_shape), p.name);
  env_[p.name] = Val::Var(tp.var, p.loc, false);
  readonly_.insert(p.name);
  f_->tensors.push_back(std::move(tp));
  return absl::OkStatus();
}

absl::StatusOr<ir::SymInt> FnLowering::TensorExtent(const Expr& x, bool allow_product) {
  ir::SymInt s;
  if (x.kind == ExprKind::kStr) {
    std::vector<std::string> parts = absl::StrSplit(x.name, '*');
    if (parts.size() > 1 && !allow_product)
      return Err(x.loc, "a dim is a single name", "write \"M\"");
    for (std::string part : parts) {
      part.erase(0, part.find_first_not_of(' '));
      part.erase(part.find_last_not_of(' ') + 1);
      int64_t k;
      if (absl::SimpleAtoi(part, &k)) {
        s.coeff *= k;
        continue;
      }
      ASSIGN_OR_RETURN(int d, Dim(part, x.loc));
      s.syms.push_back(d);
    }
    return s;
  }
  ASSIGN_OR_RETURN(Val v, Eval(x));
  if (v.k != Val::K::kInt || v.i <= 0)
    return Err(x.loc, "a tensor dim is a \"Name\" or a positive constant", "write \"M\" or 64");
  s.coeff = v.i;
  return s;
}

// @kernel(threads=N, arch=...): the job's --arch must agree with a pinned arch.
absl::Status FnLowering::KernelDecorator() {
  const Expr& dec = *def_.decorators[0];
  if (dec.kind != ExprKind::kCall) {
    return Err(dec.loc, "@kernel needs threads=", "write @kernel(threads=256)");
  }
  ASSIGN_OR_RETURN(auto a, BindArgs(dec, "kernel", {"threads", "arch?"}));
  ASSIGN_OR_RETURN(int64_t threads, ConstInt(*a[0], "threads"));
  if (threads < 1 || threads > 1024)
    return Err(a[0]->loc, absl::StrCat("threads=", threads, " must be 1..1024"),
               "use a block of at most 1024 threads");
  f_->threads = static_cast<int>(threads);
  std::string arch = m_->options->arch;
  if (a[1]) {
    ASSIGN_OR_RETURN(std::string pinned, ConstStr(*a[1], "arch"));
    if (pinned != "sm_90a" && pinned != "gfx942")
      return Err(a[1]->loc, absl::StrCat("unknown arch \"", pinned, "\""),
                 "use \"sm_90a\" or \"gfx942\"");
    if (!arch.empty() && arch != pinned) {
      return Err(a[1]->loc,
                 absl::StrCat("kernel is pinned to ", pinned, " but the job targets ", arch),
                 "drop arch= or change --arch");
    }
    arch = pinned;
  }
  if (arch.empty()) arch = "sm_90a";
  if (arch != "sm_90a" && arch != "gfx942")
    return Err(def_.loc, absl::StrCat("unknown arch '", arch, "'"), "use sm_90a or gfx942");
  f_->arch = arch;
  f_->warp_size = arch == "gfx942" ? 64 : 32;
  return absl::OkStatus();
}

absl::Status FnLowering::Grid(const Stmt& s) {
  const Expr& call = *s.value;
  if (!call.kwargs.empty())
    return Err(call.kwargs[0].loc, "grid() takes positional arguments", "write grid(g0, g1)");
  size_t n = call.args.size() - 1;
  if (n < 1 || n > 3)
    return Err(call.loc, absl::StrCat("grid() takes 1 to 3 arguments, got ", n),
               "write grid(cdiv(M, BM), cdiv(N, BN))");
  // The extents are computed on the host before launch: in_launch_ limits
  // them to dims, scalar parameters, constants and host-safe builtins.
  cur_ = &f_->launch;
  in_launch_ = true;
  absl::Status st;
  for (size_t i = 1; i <= n && st.ok(); ++i) {
    auto v = Eval(*call.args[i]);
    if (!v.ok()) {
      st = v.status();
    } else if (v->k == Val::K::kInt && v->i <= 0) {
      st = Err(call.args[i]->loc, "grid extents must be positive", "launch at least one block");
    } else {
      auto g = Coerce(*v, DType::kI32, call.args[i]->loc, "grid extent");
      if (g.ok()) f_->grid.push_back(*g);
      st = g.status();
    }
  }
  in_launch_ = false;
  RETURN_IF_ERROR(st);
  cur_ = &f_->body;
  return absl::OkStatus();
}

// ---- device functions -----------------------------------------------------------------

absl::Status FnLowering::DeviceHeader() {
  f_->is_kernel = false;
  f_->arch = m_->options->arch.empty() ? "sm_90a" : m_->options->arch;
  f_->warp_size = f_->arch == "gfx942" ? 64 : 32;
  if (def_.decorators[0]->kind != ExprKind::kName)
    return Err(def_.decorators[0]->loc, "@device takes no arguments", "write @device");
  std::set<std::string> seen;
  for (const Param& p : def_.params) {
    if (!seen.insert(p.name).second)
      return Err(p.loc, absl::StrCat("duplicate parameter '", p.name, "'"), "rename it");
    if (p.default_value)
      return Err(p.default_value->loc, "device function parameters take no defaults",
                 "remove the default");
    std::optional<DType> dt;
    if (p.annotation && p.annotation->kind == ExprKind::kName)
      dt = DTypeFromName(p.annotation->name);
    if (!dt) {
      return Err(p.annotation ? p.annotation->loc : p.loc,
                 absl::StrCat("device function parameter '", p.name, "' needs a scalar type"),
                 "write x: f32 (device functions take scalars)");
    }
    int v = NewVar(Type::Scalar(*dt), p.name);
    f_->params.push_back(v);
    env_[p.name] = Val::Var(v, p.loc, false);
  }
  if (def_.returns && def_.returns->kind != ExprKind::kNone) {
    std::optional<DType> dt;
    if (def_.returns->kind == ExprKind::kName) dt = DTypeFromName(def_.returns->name);
    if (!dt)
      return Err(def_.returns->loc, "a device function returns a scalar type or None",
                 "write -> f32");
    f_->ret = Type::Scalar(*dt);
  }
  return absl::OkStatus();
}

}  // namespace argus::dsl::sema
