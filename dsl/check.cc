#include "dsl/check.h"

#include <fstream>
#include <functional>
#include <optional>
#include <set>
#include <sstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "base/status.h"
#include "dsl/parser.h"

namespace argus::dsl {
namespace {

using ir::BinOp;
using ir::CmpOp;
using ir::OpCode;
using ir::Type;

// A value during lowering: a compile-time constant, a var, or a compile-time
// object (tuple, dtype, layout, ...).
struct Val {
  enum class K {
    kNone,
    kInt,
    kFloat,
    kBool,
    kVar,
    kTuple,
    kDType,
    kStr,
    kLambda,
    kSwizzle,
    kLayout,
    kThreadLayout,
    kFunc
  };
  K k = K::kNone;
  int64_t i = 0;
  double f = 0;
  DType dt = DType::kI32;
  bool weak = true;  // untyped literal
  int var = -1;
  bool fresh = false;  // a temporary nobody else refers to
  std::vector<Val> elems;
  std::string s;
  const Expr* lambda = nullptr;
  ir::Layout layout;
  Swizzle swz;
  Loc loc;

  bool is_const() const { return k == K::kInt || k == K::kFloat || k == K::kBool; }
  static Val Int(int64_t v, Loc l) {
    Val x;
    x.k = K::kInt;
    x.i = v;
    x.loc = l;
    return x;
  }
  static Val Float(double v, Loc l) {
    Val x;
    x.k = K::kFloat;
    x.f = v;
    x.dt = DType::kF32;
    x.loc = l;
    return x;
  }
  static Val Bool(bool v, Loc l) {
    Val x;
    x.k = K::kBool;
    x.i = v;
    x.dt = DType::kBool;
    x.weak = false;
    x.loc = l;
    return x;
  }
  static Val Var(int v, Loc l, bool fresh = true) {
    Val x;
    x.k = K::kVar;
    x.var = v;
    x.fresh = fresh;
    x.loc = l;
    return x;
  }
  static Val None(Loc l) {
    Val x;
    x.loc = l;
    return x;
  }
};

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

const std::set<std::string>& Builtins() {
  static const std::set<std::string> s = {"grid",
                                          "cdiv",
                                          "min",
                                          "max",
                                          "abs",
                                          "exp",
                                          "exp2",
                                          "log",
                                          "sqrt",
                                          "rsqrt",
                                          "select",
                                          "fma",
                                          "range",
                                          "thread_id",
                                          "block_id",
                                          "grid_dim",
                                          "warp_id",
                                          "lane_id",
                                          "warp_size",
                                          "shared",
                                          "local",
                                          "Layout",
                                          "Swizzle",
                                          "thread_layout",
                                          "copy",
                                          "copy_async",
                                          "cp_async",
                                          "commit_group",
                                          "wait_group",
                                          "fragment",
                                          "load_fragment",
                                          "ldmatrix",
                                          "mma",
                                          "store",
                                          "row_max",
                                          "row_sum",
                                          "row_index",
                                          "col_index",
                                          "row_fill",
                                          "to_operand",
                                          "shfl_xor",
                                          "shfl_down",
                                          "shfl_idx",
                                          "warp_reduce_sum",
                                          "warp_reduce_max",
                                          "block_reduce_sum",
                                          "block_reduce_max",
                                          "barrier",
                                          "buffer_load",
                                          "s_waitcnt",
                                          "sched_group_barrier",
                                          "s_setprio",
                                          "tag",
                                          "assert_tag",
                                          "assert_tag_eq",
                                          "reset_tags",
                                          "warpgroup_id",
                                          "mbarrier",
                                          "mbarrier_arrive",
                                          "mbarrier_arrive_expect_tx",
                                          "mbarrier_wait",
                                          "tma_load",
                                          "tma_store",
                                          "tma_store_commit",
                                          "tma_store_wait",
                                          "warpgroup_barrier",
                                          "named_barrier_sync",
                                          "named_barrier_arrive",
                                          "fence_proxy_async",
                                          "setmaxnreg",
                                          "wgmma_operand",
                                          "wgmma",
                                          "wgmma_commit",
                                          "wgmma_wait",
                                          "Tensor",
                                          "const",
                                          "kernel",
                                          "device"};
  return s;
}

// Which builtins may appear in grid(...) (host-side).
bool HostSafe(const std::string& n) {
  return n == "cdiv" || n == "min" || n == "max" || n == "abs";
}

struct AssignInfo {
  int count = 0;
  bool nested = false;
};

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

// Whether two expressions are the same tree (locations aside): `v[a:a + n]`'s
// bounds then differ by n whatever a is.
bool SameExpr(const Expr& x, const Expr& y) {
  if (x.kind != y.kind || x.name != y.name || x.ival != y.ival || x.fval != y.fval ||
      x.args.size() != y.args.size() || !x.kwargs.empty() || !y.kwargs.empty())
    return false;
  for (size_t i = 0; i < x.args.size(); ++i) {
    if (!x.args[i] || !y.args[i]) {
      if (x.args[i] || y.args[i]) return false;
    } else if (!SameExpr(*x.args[i], *y.args[i])) {
      return false;
    }
  }
  return true;
}

bool EndsInReturn(const std::vector<StmtPtr>& body) {
  if (body.empty()) return false;
  const Stmt& s = *body.back();
  if (s.kind == StmtKind::kReturn) return true;
  if (s.kind == StmtKind::kIf) return EndsInReturn(s.body) && EndsInReturn(s.orelse);
  return false;
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

struct ModuleCtx;

class FnLowering {
 public:
  FnLowering(ModuleCtx* m, const FuncDef& def, ir::Function* f) : m_(m), def_(def), f_(f) {}
  absl::Status Run();

 private:
  // ---- diagnostics
  absl::Status Err(Loc loc, std::string msg, std::string hint = "");

  // ---- emission
  int NewVar(Type t, std::string name = "") { return f_->AddVar(std::move(name), std::move(t)); }
  ir::Op& Emit(OpCode code, Loc loc, int result = -1, std::vector<int> operands = {}) {
    ir::Op op;
    op.code = code;
    op.loc = loc;
    op.result = result;
    op.operands = std::move(operands);
    cur_->push_back(std::move(op));
    return cur_->back();
  }
  // By value: NewVar() may reallocate the var table.
  Type TypeOf(int var) const { return f_->vars[var].type; }

  // ---- values
  absl::StatusOr<Val> Eval(const Expr& e);
  absl::StatusOr<int> Materialize(const Val& v, Loc loc);
  absl::StatusOr<int> Coerce(const Val& v, DType to, Loc loc, const char* what);
  absl::StatusOr<int> AsIndex(const Val& v, Loc loc, const char* what);
  absl::StatusOr<int64_t> ConstInt(const Expr& e, const char* what);
  absl::StatusOr<int64_t> ConstIntVal(const Val& v, Loc loc, const char* what);
  absl::StatusOr<std::vector<int64_t>> ConstShape(const Expr& e, const char* what);
  absl::StatusOr<std::vector<int64_t>> ConstShapeVal(const Val& v, Loc loc, const char* what);
  absl::StatusOr<std::string> ConstStr(const Expr& e, const char* what);
  absl::StatusOr<DType> ScalarDType(const Val& v, Loc loc, const char* what);
  absl::StatusOr<int> ViewVar(const Val& v, Loc loc, const char* what);
  absl::StatusOr<int> FragVar(const Val& v, Loc loc, const char* what);
  absl::StatusOr<int> ScalarVar(const Val& v, Loc loc, const char* what);

  absl::StatusOr<Val> Name(const Expr& e);
  absl::StatusOr<Val> Binary(const std::string& op, const Val& a, const Val& b, Loc loc);
  // Fragment math (docs/dsl.md "Fragment math").
  bool IsFragVal(const Val& v) const { return v.k == Val::K::kVar && TypeOf(v.var).is_frag(); }
  absl::StatusOr<Val> FragEw(ir::FragEwOp op, const std::vector<Val>& args, Loc loc,
                             const std::string& what);
  absl::StatusOr<int> RowAcc(const Val& v, Loc loc, const std::string& what);
  absl::StatusOr<Val> FragCall(const std::string& name, const std::vector<const Expr*>& a, Loc loc);
  absl::StatusOr<Val> FoldBinary(const std::string& op, const Val& a, const Val& b, Loc loc);
  absl::StatusOr<Val> Unary(const Expr& e);
  absl::StatusOr<Val> Compare(const Expr& e);
  absl::StatusOr<Val> BoolOp(const Expr& e);
  absl::StatusOr<Val> IfExp(const Expr& e);
  absl::StatusOr<Val> Subscript(const Expr& e);
  absl::StatusOr<Val> Attr(const Expr& e);
  absl::StatusOr<Val> Call(const Expr& e);
  absl::StatusOr<Val> Builtin(const std::string& name, const Expr& e);
  absl::StatusOr<Val> Method(const Val& recv, const std::string& name, const Expr& e);
  absl::StatusOr<Val> CallDevice(const ir::Function& callee, int index, const Expr& e);
  absl::StatusOr<Val> ElementAccess(const Val& view, const Expr& e, const Val* store_value);
  absl::StatusOr<int> LowerLambda(const Expr& lam, int rank, Loc loc, ir::Op* op,
                                  int want_tensor_rank, int* tensor_index);

  // Binds call arguments to a signature; names ending in '?' are optional.
  absl::StatusOr<std::vector<const Expr*>> BindArgs(const Expr& call, const std::string& fname,
                                                    std::vector<std::string> params);

  // ---- statements
  absl::Status Stmts(const std::vector<StmtPtr>& body);
  absl::Status Statement(const Stmt& s);
  absl::Status Assign(const Expr& target, Val v, Loc loc);
  absl::Status AssignName(const std::string& name, Val v, Loc loc);
  absl::Status For(const Stmt& s);
  absl::Status While(const Stmt& s);
  absl::Status If(const Stmt& s);
  absl::Status KernelHeader();
  absl::Status DeviceHeader();
  absl::Status Grid(const Stmt& s);

  absl::Status RequireHopper(Loc loc, const std::string& what) {
    if (f_->arch != "sm_90a") {
      return Err(
          loc,
          absl::StrCat(what, " is a Hopper (sm_90a) instruction; this kernel targets ", f_->arch),
          "pin the kernel with arch=\"sm_90a\"");
    }
    return absl::OkStatus();
  }
  // A TMA's global side, written T.tile((r, c), (i, j)) of a tensor parameter:
  // the tensor map is per (tensor, box), the coordinates are the tile indices.
  struct TmaTile {
    int tensor = -1, view = -1, coord0 = -1, coord1 = -1;
    int64_t box0 = 0, box1 = 0;
  };
  absl::StatusOr<TmaTile> TmaTensorTile(const Expr& se, const char* what, const char* hint);
  // The shared side of a TMA: a shared view of the tile's shape and dtype.
  absl::Status TmaSharedSide(const TmaTile& tt, int view, Loc loc, const char* what,
                             const char* hint);
  // tma_store / tma_store_commit / tma_store_wait / warpgroup_barrier /
  // named_barrier_sync / named_barrier_arrive
  // (docs/dsl.md "TMA store epilogue"); nullopt for other names.
  absl::StatusOr<std::optional<Val>> EpilogueBuiltin(const std::string& name, const Expr& e);
  // store(acc, dst, at=(i, j)): the dst-shaped sub-tile (i, j) of a wgmma
  // accumulator, aligned to its warp groups' parts.
  absl::StatusOr<Val> StoreFragmentPart(int acc, int dst, const Expr& de, const Expr& at, Loc loc);
  // `bars[i]` (or a one-barrier array `bars`) -> (barrier array var, index var).
  absl::StatusOr<std::pair<int, int>> BarrierArg(const Expr& e);

  absl::Status RequireKernel(Loc loc, const std::string& what) {
    if (!f_->is_kernel) {
      return Err(loc,
                 absl::StrCat(what, " is only allowed in a @kernel, not in a @device function"),
                 "allocate in the kernel; device functions work on scalars");
    }
    return absl::OkStatus();
  }

  ModuleCtx* m_;
  const FuncDef& def_;
  ir::Function* f_;
  ir::Block* cur_ = nullptr;
  std::map<std::string, Val> env_;
  std::set<std::string> readonly_;  // params, dims, consts
  std::set<std::string> loop_vars_;
  std::map<std::string, AssignInfo> assigns_;
  bool in_launch_ = false;
  int depth_ = 0;
  int64_t shared_bytes_ = 0;
  int64_t local_bytes_ = 0;
};

struct ModuleCtx {
  std::shared_ptr<const SourceFile> src;
  const CheckOptions* options;
  std::map<std::string, std::string> unused_consts;
  ir::Module out;
  std::map<std::string, int> device_fns;  // name -> function index (defined so far)
};

absl::Status FnLowering::Err(Loc loc, std::string msg, std::string hint) {
  return ErrorAt(*m_->src, loc, std::move(msg), std::move(hint));
}

// ---- values -------------------------------------------------------------------

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

absl::StatusOr<DType> FnLowering::ScalarDType(const Val& v, Loc loc, const char* what) {
  if (v.k == Val::K::kInt) return v.weak ? DType::kI32 : v.dt;
  if (v.k == Val::K::kFloat) return v.weak ? DType::kF32 : v.dt;
  if (v.k == Val::K::kBool) return DType::kBool;
  if (v.k == Val::K::kVar && TypeOf(v.var).is_scalar()) return TypeOf(v.var).dtype;
  std::string found = v.k == Val::K::kVar ? TypeOf(v.var).ToString() : KindName(v);
  return Err(loc, absl::StrCat(what, " must be a scalar, found ", found),
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
  std::string found = v.k == Val::K::kVar ? TypeOf(v.var).ToString() : KindName(v);
  return Err(loc, absl::StrCat(what, " must be a tensor view, found ", found),
             "pass a tensor, a shared/local buffer or a view of one");
}

absl::StatusOr<int> FnLowering::FragVar(const Val& v, Loc loc, const char* what) {
  if (v.k == Val::K::kVar && TypeOf(v.var).is_frag()) return v.var;
  std::string found = v.k == Val::K::kVar ? TypeOf(v.var).ToString() : KindName(v);
  return Err(loc, absl::StrCat(what, " must be an MMA fragment, found ", found),
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
  size_t required = 0;
  for (size_t i = 0; i < params.size(); ++i) {
    if (!params[i].empty() && params[i].back() == '?') {
      optional[i] = true;
      params[i].pop_back();
    } else {
      ++required;
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
  (void)required;
  return out;
}

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
      Val v;
      v.k = Val::K::kStr;
      v.s = e.name;
      v.loc = e.loc;
      return v;
    }
    case ExprKind::kName:
      return Name(e);
    case ExprKind::kTuple: {
      Val t;
      t.k = Val::K::kTuple;
      t.loc = e.loc;
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
      Val v;
      v.k = Val::K::kLambda;
      v.lambda = &e;
      v.loc = e.loc;
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
    Val v;
    v.k = Val::K::kDType;
    v.dt = *dt;
    v.loc = e.loc;
    return v;
  }
  if (Builtins().count(e.name) || m_->device_fns.count(e.name) || FindMma(e.name)) {
    Val v;
    v.k = Val::K::kFunc;
    v.s = e.name;
    v.loc = e.loc;
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

absl::StatusOr<Val> FnLowering::FoldBinary(const std::string& op, const Val& a, const Val& b,
                                           Loc loc) {
  bool fl = a.k == Val::K::kFloat || b.k == Val::K::kFloat;
  if (fl) {
    double x = a.k == Val::K::kFloat ? a.f : static_cast<double>(a.i);
    double y = b.k == Val::K::kFloat ? b.f : static_cast<double>(b.i);
    double r;
    if (op == "+")
      r = x + y;
    else if (op == "-")
      r = x - y;
    else if (op == "*")
      r = x * y;
    else if (op == "/") {
      if (y == 0) return Err(loc, "division by zero in a constant expression", "fix the divisor");
      r = x / y;
    } else if (op == "min")
      r = std::min(x, y);
    else if (op == "max")
      r = std::max(x, y);
    else
      return Err(loc, absl::StrCat("operator '", op, "' needs integer operands"),
                 "convert with i32(x)");
    Val v = Val::Float(r, loc);
    DType t = DType::kF32;
    bool weak = (a.k != Val::K::kFloat || a.weak) && (b.k != Val::K::kFloat || b.weak);
    if (!weak) {
      DType ta = a.k == Val::K::kFloat && !a.weak ? a.dt : DType::kF32;
      DType tb = b.k == Val::K::kFloat && !b.weak ? b.dt : DType::kF32;
      t = (a.k == Val::K::kFloat && !a.weak && b.k == Val::K::kFloat && !b.weak)
              ? PromoteStrong(ta, tb)
          : (a.k == Val::K::kFloat && !a.weak) ? ta
                                               : tb;
      v.f = RoundTo(t, r);
    }
    v.weak = weak;
    v.dt = t;
    return v;
  }
  int64_t x = a.i, y = b.i, r = 0;
  bool ovf = false;
  if (op == "+")
    ovf = __builtin_add_overflow(x, y, &r);
  else if (op == "-")
    ovf = __builtin_sub_overflow(x, y, &r);
  else if (op == "*")
    ovf = __builtin_mul_overflow(x, y, &r);
  else if (op == "//" || op == "%") {
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
  } else if (op == "&")
    r = x & y;
  else if (op == "|")
    r = x | y;
  else if (op == "^")
    r = x ^ y;
  else if (op == "min")
    r = std::min(x, y);
  else if (op == "max")
    r = std::max(x, y);
  else
    return Err(loc, absl::StrCat("unsupported operator '", op, "'"), "see docs/dsl.md");
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
  // Result type.
  bool wa = a.is_const() && a.weak, wb = b.is_const() && b.weak;
  DType t;
  if (wa && !wb) {
    t = (a.k == Val::K::kFloat && !IsFloat(tb)) ? DType::kF32 : tb;
  } else if (wb && !wa) {
    t = (b.k == Val::K::kFloat && !IsFloat(ta)) ? DType::kF32 : ta;
  } else {
    t = PromoteStrong(ta, tb);
  }
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

// ---- fragment math -------------------------------------------------------------------------

namespace {
// The geometry of an accumulator (or row) fragment, without role and dtype.
bool SameAccGeom(const ir::FragType& x, const ir::FragType& y) {
  return x.mma == y.mma && x.bm == y.bm && x.bn == y.bn && x.wm == y.wm && x.wn == y.wn &&
         x.first == y.first;
}
bool IsCmp(ir::FragEwOp op) { return op >= ir::FragEwOp::kLt && op <= ir::FragEwOp::kNe; }
// Accumulators of `a` and `b` hold their rows in the same lanes and row slots:
// the same instruction, or two wgmma m64nNk16 of any N (the rows of the
// wgmma accumulator layout do not depend on N), so row vectors combine.
bool SameRowLayout(const MmaInfo* a, const MmaInfo* b) {
  return a == b || (a->wgmma && b->wgmma && a->m == b->m);
}
}  // namespace

absl::StatusOr<Val> FnLowering::FragEw(ir::FragEwOp op, const std::vector<Val>& args, Loc loc,
                                       const std::string& what) {
  // The shape: the first accumulator operand, else the first row operand.
  int shape = -1;
  for (const Val& v : args) {
    if (!IsFragVal(v)) continue;
    FragRole r = TypeOf(v.var).frag.role;
    if (r != FragRole::kAcc && r != FragRole::kRow) {
      return Err(v.loc,
                 absl::StrCat(what, " on an ", FragRoleName(r),
                              " operand fragment; operand fragments are opaque"),
                 "do the math on the accumulator, then to_operand(p, acc)");
    }
    if (shape < 0 || (r == FragRole::kAcc && TypeOf(shape).frag.role == FragRole::kRow))
      shape = v.var;
  }
  const ir::FragType sf = TypeOf(shape).frag;
  bool any_float = false, any_int = false;
  size_t first_value = op == ir::FragEwOp::kSelect ? 1 : 0;
  for (size_t i = 0; i < args.size(); ++i) {
    const Val& v = args[i];
    DType t;
    if (IsFragVal(v)) {
      const ir::FragType& f = TypeOf(v.var).frag;
      bool ok = f.role == FragRole::kAcc ? (sf.role == FragRole::kAcc ? SameAccGeom(f, sf) : false)
                                         : (SameRowLayout(f.mma, sf.mma) && f.bm == sf.bm &&
                                            f.wm == sf.wm && f.first == sf.first && sf.wn == 1);
      if (!ok) {
        return Err(v.loc,
                   absl::StrCat(what, " on fragments of different shapes: ",
                                TypeOf(v.var).ToString(), " and ", TypeOf(shape).ToString()),
                   "row vectors combine with accumulators of the same rows and warps (WN = 1)");
      }
      t = TypeOf(v.var).dtype;
    } else {
      ASSIGN_OR_RETURN(t, ScalarDType(v, v.loc, absl::StrCat(what, " operand").c_str()));
      if (v.is_const() && v.weak) t = v.k == Val::K::kFloat ? DType::kF32 : DType::kI32;
    }
    if (i < first_value) {
      if (t != DType::kBool)
        return Err(v.loc, "select() condition must be bool", "compare the fragment, e.g. c > r");
      continue;
    }
    if (t == DType::kBool) {
      return Err(v.loc, absl::StrCat(what, " on a bool fragment value"),
                 "bool fragments are select() conditions");
    }
    if (IsFloat(t)) {
      if (t != DType::kF32 && IsFragVal(v))
        return Err(v.loc, "fragment math is f32", "convert with to_operand() at the end");
      any_float = true;
    } else {
      any_int = true;
    }
  }
  (void)any_int;
  DType vt = any_float ? DType::kF32 : DType::kI32;
  if (op == ir::FragEwOp::kDiv && vt != DType::kF32)
    return Err(loc, "'/' on integer fragments", "divide f32 fragments");
  if (op == ir::FragEwOp::kExp2 && vt != DType::kF32)
    return Err(loc, "exp2() of an integer fragment", "exp2 takes f32 fragments");
  if (op == ir::FragEwOp::kFma && vt != DType::kF32)
    return Err(loc, "fma() of integer fragments", "fma takes f32 operands");
  std::vector<int> ops;
  for (size_t i = 0; i < args.size(); ++i) {
    const Val& v = args[i];
    if (IsFragVal(v)) {
      ops.push_back(v.var);
      continue;
    }
    ASSIGN_OR_RETURN(
        int x, i < first_value ? Materialize(v, v.loc) : Coerce(v, vt, v.loc, "fragment operand"));
    ops.push_back(x);
  }
  Type t = TypeOf(shape);
  t.dtype = IsCmp(op) ? DType::kBool : vt;
  int r = NewVar(t);
  Emit(OpCode::kFragEw, loc, r, ops).sub = static_cast<uint8_t>(op);
  return Val::Var(r, loc);
}

absl::StatusOr<int> FnLowering::RowAcc(const Val& v, Loc loc, const std::string& what) {
  ASSIGN_OR_RETURN(int acc, FragVar(v, v.loc, what.c_str()));
  const Type t = TypeOf(acc);
  if (t.frag.role != FragRole::kAcc)
    return Err(v.loc, absl::StrCat(what, " must be an accumulator, found ", t.ToString()),
               "pass a fragment(...) accumulator or math on one");
  if (t.frag.wn != 1) {
    const char* unit = t.frag.mma->wgmma ? "warpgroups" : "warps";
    return Err(v.loc,
               absl::StrCat(what, ": a row of this accumulator spans ", t.frag.wn, " ",
                            t.frag.mma->wgmma ? "warp groups" : "warps", " (", unit, "=(",
                            t.frag.wm, ", ", t.frag.wn, "))"),
               absl::StrCat("row operations need ", unit, "=(WM, 1): each warp owns whole rows"));
  }
  (void)loc;
  return acc;
}

absl::StatusOr<Val> FnLowering::FragCall(const std::string& name, const std::vector<const Expr*>& a,
                                         Loc loc) {
  ASSIGN_OR_RETURN(Val x, Eval(*a[0]));
  ASSIGN_OR_RETURN(int acc, RowAcc(x, loc, absl::StrCat(name, "() argument")));
  Type at = TypeOf(acc);
  auto row_type = [&](DType dt) {
    Type t = at;
    t.dtype = dt;
    t.frag.role = FragRole::kRow;
    t.frag.cols = 1;
    t.frag.bn = 0;
    return t;
  };
  if (name == "row_max" || name == "row_sum") {
    if (at.dtype != DType::kF32)
      return Err(x.loc, absl::StrCat(name, "() of a ", DTypeName(at.dtype), " fragment"),
                 "reduce f32 accumulators");
    int r = NewVar(row_type(DType::kF32));
    Emit(OpCode::kFragRowReduce, loc, r, {acc}).sub =
        static_cast<uint8_t>(name == "row_max" ? ir::ReduceKind::kMax : ir::ReduceKind::kSum);
    return Val::Var(r, loc);
  }
  if (name == "row_index" || name == "col_index") {
    Type t = at;
    t.dtype = DType::kI32;
    int r = NewVar(t);
    Emit(OpCode::kFragCoord, loc, r, {acc}).ints = {name == "row_index" ? 0 : 1};
    return Val::Var(r, loc);
  }
  ASSIGN_OR_RETURN(Val y, Eval(*a[1]));
  if (name == "row_fill") {
    ASSIGN_OR_RETURN(int v, Coerce(y, DType::kF32, y.loc, "row_fill value"));
    int r = NewVar(row_type(DType::kF32));
    Emit(OpCode::kFragRowFill, loc, r, {acc, v});
    return Val::Var(r, loc);
  }
  // to_operand(p, o): p as the A operand of mma(o, p', b).
  ASSIGN_OR_RETURN(int o, RowAcc(y, loc, "to_operand() target accumulator"));
  const Type ot = TypeOf(o);
  if (at.dtype != DType::kF32)
    return Err(x.loc, "to_operand() converts an f32 accumulator", "pass the f32 probabilities");
  // wgmma: P (m64nBK) feeds O (m64nD) of another N; the A layout depends on M and K only.
  if (!SameRowLayout(at.frag.mma, ot.frag.mma) || at.frag.mma->ab != ot.frag.mma->ab ||
      at.frag.bm != ot.frag.bm || at.frag.wm != ot.frag.wm || at.frag.first != ot.frag.first) {
    return Err(loc,
               absl::StrCat("to_operand(): ", at.ToString(), " and ", ot.ToString(),
                            " differ in instruction, rows or warps"),
               "both accumulators need the same mma= (wgmma: any N), BM and warps=(WM, 1)");
  }
  const MmaInfo* mi = ot.frag.mma;
  if (at.frag.bn % mi->k != 0)
    return Err(
        x.loc,
        absl::StrCat("to_operand(): ", at.frag.bn, " columns is not a multiple of K=", mi->k),
        "make the accumulator's BN a multiple of K");
  Type t = ot;
  t.dtype = mi->ab;
  t.frag.role = FragRole::kA;
  t.frag.rows = at.frag.bm;
  t.frag.cols = at.frag.bn;
  t.frag.regs = mi->wgmma;  // wgmma takes this A from registers
  // Every A element must sit in the same lane as the accumulator element of
  // the same coordinates (true for m16n8k16: two n8 tiles are one A tile).
  FragGeom ga = t.frag.Geom(), gc = at.frag.Geom();
  for (int w = 0; w < ga.wm * ga.wn; ++w) {
    for (int l = 0; l < mi->warp_size; ++l) {
      for (int e = 0; e < ga.PerLane(); ++e) {
        int r0, c0;
        ga.Coord(w, l, e, &r0, &c0);
        bool found = false;
        for (int q = 0; q < gc.PerLane() && !found; ++q) {
          int r1, c1;
          gc.Coord(w, l, q, &r1, &c1);
          found = r1 == r0 && c1 == c0;
        }
        if (!found) {
          return Err(loc,
                     absl::StrCat("to_operand(): on ", mi->name,
                                  " the accumulator layout is not the A operand layout"),
                     "store the accumulator to shared memory and load_fragment it");
        }
      }
    }
  }
  int r = NewVar(t);
  Emit(OpCode::kToOperand, loc, r, {acc}).name = DTypeName(mi->ab);
  return Val::Var(r, loc);
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
  if (e.name == "not") {
    if (t != DType::kBool) {
      return Err(e.loc, absl::StrCat("'not' needs a bool, found ", DTypeName(t)),
                 "compare explicitly, e.g. x == 0");
    }
    if (a.is_const()) return Val::Bool(!a.i, e.loc);
    int r = NewVar(Type::Scalar(DType::kBool));
    Emit(OpCode::kUnary, e.loc, r, {a.var}).sub = static_cast<uint8_t>(ir::UnaryOp::kNot);
    return Val::Var(r, e.loc);
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
    int r = NewVar(Type::Scalar(t));
    Emit(OpCode::kUnary, e.loc, r, {a.var}).sub = static_cast<uint8_t>(ir::UnaryOp::kNeg);
    return Val::Var(r, e.loc);
  }
  // "~"
  if (!IsInt(t)) return Err(e.loc, "'~' needs an integer", "convert with i32(x)");
  if (a.k == Val::K::kInt) {
    Val r = a;
    r.i = a.weak ? ~a.i : WrapInt(a.dt, ~a.i);
    return r;
  }
  int r = NewVar(Type::Scalar(t));
  Emit(OpCode::kUnary, e.loc, r, {a.var}).sub = static_cast<uint8_t>(ir::UnaryOp::kBitNot);
  return Val::Var(r, e.loc);
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
    double x = a.k == Val::K::kFloat ? a.f : static_cast<double>(a.i);
    double y = b.k == Val::K::kFloat ? b.f : static_cast<double>(b.i);
    bool fl = a.k == Val::K::kFloat || b.k == Val::K::kFloat;
    bool r;
    auto cmp = [&](auto p, auto q) -> bool { return ir::ApplyCmp(code, p, q); };
    r = fl ? cmp(x, y) : cmp(a.i, b.i);
    return Val::Bool(r, e.loc);
  }
  bool wa = a.is_const() && a.weak, wb = b.is_const() && b.weak;
  DType t;
  if (wa && !wb)
    t = (a.k == Val::K::kFloat && !IsFloat(tb)) ? DType::kF32 : tb;
  else if (wb && !wa)
    t = (b.k == Val::K::kFloat && !IsFloat(ta)) ? DType::kF32 : ta;
  else
    t = PromoteStrong(ta, tb);
  if (ta == DType::kBool) t = DType::kBool;
  ASSIGN_OR_RETURN(int va, Coerce(a, t, a.loc, "left operand"));
  ASSIGN_OR_RETURN(int vb, Coerce(b, t, b.loc, "right operand"));
  int r = NewVar(Type::Scalar(DType::kBool));
  Emit(OpCode::kCompare, e.loc, r, {va, vb}).sub = static_cast<uint8_t>(code);
  return Val::Var(r, e.loc);
}

absl::StatusOr<Val> FnLowering::BoolOp(const Expr& e) {
  bool is_and = e.name == "and";
  ASSIGN_OR_RETURN(Val a, Eval(*e.args[0]));
  ASSIGN_OR_RETURN(DType ta, ScalarDType(a, a.loc, "operand of and/or"));
  if (ta != DType::kBool) {
    return Err(a.loc, absl::StrCat("'", e.name, "' needs bool operands, found ", DTypeName(ta)),
               "compare explicitly, e.g. x != 0");
  }
  if (a.is_const()) {
    if (is_and && !a.i) return Val::Bool(false, e.loc);
    if (!is_and && a.i) return Val::Bool(true, e.loc);
    ASSIGN_OR_RETURN(Val b, Eval(*e.args[1]));
    ASSIGN_OR_RETURN(DType tb, ScalarDType(b, b.loc, "operand of and/or"));
    if (tb != DType::kBool) {
      return Err(b.loc, absl::StrCat("'", e.name, "' needs bool operands, found ", DTypeName(tb)),
                 "compare explicitly, e.g. x != 0");
    }
    return b;
  }
  int r = NewVar(Type::Scalar(DType::kBool));
  Emit(OpCode::kMov, e.loc, r, {a.var});
  ir::Block rhs;
  ir::Block* saved = cur_;
  cur_ = &rhs;
  ASSIGN_OR_RETURN(Val b, Eval(*e.args[1]));
  ASSIGN_OR_RETURN(DType tb, ScalarDType(b, b.loc, "operand of and/or"));
  if (tb != DType::kBool) {
    cur_ = saved;
    return Err(b.loc, absl::StrCat("'", e.name, "' needs bool operands, found ", DTypeName(tb)),
               "compare explicitly, e.g. x != 0");
  }
  ASSIGN_OR_RETURN(int vb, Materialize(b, b.loc));
  Emit(OpCode::kMov, e.loc, r, {vb});
  cur_ = saved;
  ir::Op op;
  op.code = OpCode::kIf;
  op.loc = e.loc;
  op.operands = {r};
  op.regions.resize(2);
  op.regions[is_and ? 0 : 1] = std::move(rhs);
  cur_->push_back(std::move(op));
  return Val::Var(r, e.loc);
}

absl::StatusOr<Val> FnLowering::IfExp(const Expr& e) {
  ASSIGN_OR_RETURN(Val c, Eval(*e.args[1]));
  ASSIGN_OR_RETURN(DType tc, ScalarDType(c, c.loc, "condition"));
  if (tc != DType::kBool)
    return Err(c.loc, "condition must be bool", "compare explicitly, e.g. x != 0");
  if (c.is_const()) return Eval(*e.args[c.i ? 0 : 2]);
  ir::Block tb, eb;
  ir::Block* saved = cur_;
  cur_ = &tb;
  auto a = Eval(*e.args[0]);
  cur_ = &eb;
  auto b = a.ok() ? Eval(*e.args[2]) : absl::StatusOr<Val>(a.status());
  cur_ = saved;
  RETURN_IF_ERROR(a.status());
  RETURN_IF_ERROR(b.status());
  ASSIGN_OR_RETURN(DType ta, ScalarDType(*a, a->loc, "conditional expression"));
  ASSIGN_OR_RETURN(DType tbt, ScalarDType(*b, b->loc, "conditional expression"));
  bool wa = a->is_const() && a->weak, wb = b->is_const() && b->weak;
  DType t = wa && !wb ? tbt : wb && !wa ? ta : PromoteStrong(ta, tbt);
  if (ta == DType::kBool && tbt == DType::kBool) t = DType::kBool;
  int r = NewVar(Type::Scalar(t));
  cur_ = &tb;
  auto va = Coerce(*a, t, a->loc, "conditional expression");
  if (va.ok()) Emit(OpCode::kMov, e.loc, r, {*va});
  cur_ = &eb;
  auto vb = va.ok() ? Coerce(*b, t, b->loc, "conditional expression") : va;
  if (vb.ok()) Emit(OpCode::kMov, e.loc, r, {*vb});
  cur_ = saved;
  RETURN_IF_ERROR(vb.status());
  ir::Op op;
  op.code = OpCode::kIf;
  op.loc = e.loc;
  op.operands = {c.var};
  op.regions.push_back(std::move(tb));
  op.regions.push_back(std::move(eb));
  cur_->push_back(std::move(op));
  return Val::Var(r, e.loc);
}

// ---- views ----------------------------------------------------------------------

absl::StatusOr<Val> FnLowering::Subscript(const Expr& e) {
  ASSIGN_OR_RETURN(Val base, Eval(*e.args[0]));
  if (base.k == Val::K::kTuple) {
    if (e.args.size() != 2) return Err(e.loc, "a tuple takes one index", "write t[i]");
    ASSIGN_OR_RETURN(int64_t i, ConstInt(*e.args[1], "tuple index"));
    int64_t n = static_cast<int64_t>(base.elems.size());
    if (i < 0) i += n;
    if (i < 0 || i >= n)
      return Err(e.args[1]->loc, absl::StrCat("tuple index ", i, " out of range (size ", n, ")"),
                 "index within the tuple");
    return base.elems[i];
  }
  return ElementAccess(base, e, nullptr);
}

absl::StatusOr<std::pair<int, int>> FnLowering::BarrierArg(const Expr& e) {
  const Expr* base = &e;
  const Expr* index = nullptr;
  if (e.kind == ExprKind::kSubscript) {
    if (e.args.size() != 2) return Err(e.loc, "a barrier array takes one index", "write bars[s]");
    base = e.args[0].get();
    index = e.args[1].get();
  }
  ASSIGN_OR_RETURN(Val b, Eval(*base));
  if (b.k != Val::K::kVar || !TypeOf(b.var).is_barrier()) {
    std::string found = b.k == Val::K::kVar ? TypeOf(b.var).ToString() : KindName(b);
    return Err(base->loc, absl::StrCat("an mbarrier expected, found ", found),
               "pass bars[i] of bars = mbarrier(n)");
  }
  int64_t n = TypeOf(b.var).shape[0];
  if (!index) {
    if (n != 1)
      return Err(e.loc, absl::StrCat("an array of ", n, " barriers needs an index"),
                 "write bars[s]");
    ASSIGN_OR_RETURN(int z, Materialize(Val::Int(0, e.loc), e.loc));
    return std::make_pair(b.var, z);
  }
  ASSIGN_OR_RETURN(Val x, Eval(*index));
  if (x.k == Val::K::kInt && (x.i < 0 || x.i >= n))
    return Err(index->loc, absl::StrCat("barrier index ", x.i, " out of range (", n, " barriers)"),
               "index within the array");
  ASSIGN_OR_RETURN(int v, AsIndex(x, index->loc, "barrier index"));
  return std::make_pair(b.var, v);
}

// v[idx...]: an element load/store when every dim gets an integer index,
// otherwise a sub-view (slices, then dropped dims).
absl::StatusOr<Val> FnLowering::ElementAccess(const Val& base, const Expr& e,
                                              const Val* store_value) {
  ASSIGN_OR_RETURN(int view, ViewVar(base, e.args[0]->loc, "subscripted value"));
  Type vt = TypeOf(view);
  size_t nidx = e.args.size() - 1;
  if (static_cast<int>(nidx) > vt.rank()) {
    return Err(e.args[1]->loc,
               absl::StrCat("too many indices: ", nidx, " for a rank-", vt.rank(), " view"),
               "index each dim once");
  }
  bool all_int = static_cast<int>(nidx) == vt.rank();
  for (size_t i = 1; i < e.args.size(); ++i) {
    if (e.args[i]->kind == ExprKind::kSlice) all_int = false;
  }
  if (all_int) {
    std::vector<int> idx;
    for (size_t i = 1; i < e.args.size(); ++i) {
      ASSIGN_OR_RETURN(Val x, Eval(*e.args[i]));
      if (x.k == Val::K::kInt && vt.shape[i - 1] >= 0 && (x.i < 0 || x.i >= vt.shape[i - 1])) {
        return Err(e.args[i]->loc,
                   absl::StrCat("index ", x.i, " out of bounds for dim ", i - 1, " of extent ",
                                vt.shape[i - 1]),
                   "index within the view's shape");
      }
      ASSIGN_OR_RETURN(int v, AsIndex(x, e.args[i]->loc, "index"));
      idx.push_back(v);
    }
    if (store_value) {
      ASSIGN_OR_RETURN(int val, Coerce(*store_value, vt.dtype, store_value->loc, "stored value"));
      std::vector<int> ops = {view, val};
      ops.insert(ops.end(), idx.begin(), idx.end());
      Emit(OpCode::kStore, e.loc, -1, ops);
      return Val::None(e.loc);
    }
    int r = NewVar(Type::Scalar(vt.dtype));
    std::vector<int> ops = {view};
    ops.insert(ops.end(), idx.begin(), idx.end());
    Emit(OpCode::kLoad, e.loc, r, ops);
    return Val::Var(r, e.loc);
  }
  if (store_value) {
    return Err(e.loc, "assignment to a sub-view",
               "copy(src, dst, thread_layout(...)) copies tiles; v[i, j] = x stores one element");
  }
  // Slices first (dims keep their positions), then drop indexed dims from the back.
  int cur = view;
  std::vector<std::pair<int, int>> drops;  // (dim, index var)
  for (size_t i = 1; i < e.args.size(); ++i) {
    int d = static_cast<int>(i) - 1;
    const Expr& ix = *e.args[i];
    Type ct = TypeOf(cur);
    if (ix.kind == ExprKind::kSlice) {
      int64_t step = 1;
      if (ix.args[2]) {
        ASSIGN_OR_RETURN(step, ConstInt(*ix.args[2], "slice step"));
        if (step <= 0)
          return Err(ix.args[2]->loc, "slice step must be positive",
                     "use a positive constant step");
      }
      if (!ix.args[0] && !ix.args[1] && step == 1) continue;
      Val lo = ix.args[0] ? Val() : Val::Int(0, ix.loc);
      if (ix.args[0]) {
        ASSIGN_OR_RETURN(lo, Eval(*ix.args[0]));
      }
      Val hi;
      if (ix.args[1]) {
        ASSIGN_OR_RETURN(hi, Eval(*ix.args[1]));
      } else if (ct.shape[d] >= 0) {
        hi = Val::Int(ct.shape[d], ix.loc);
      } else {
        int x = NewVar(Type::Scalar(DType::kI32));
        Emit(OpCode::kExtent, ix.loc, x, {cur}).ints = {d};
        hi = Val::Var(x, ix.loc);
      }
      int64_t ext = -1;
      if (lo.k == Val::K::kInt && hi.k == Val::K::kInt) {
        if (lo.i < 0 || hi.i < lo.i || (ct.shape[d] >= 0 && hi.i > ct.shape[d])) {
          return Err(ix.loc,
                     absl::StrCat("slice ", lo.i, ":", hi.i, " out of bounds for dim ", d,
                                  " of extent ", ct.shape[d]),
                     "slice within the view's shape");
        }
        ext = (hi.i - lo.i + step - 1) / step;
      } else if (step == 1 && ix.args[0] && ix.args[1] && ix.args[1]->kind == ExprKind::kBinOp &&
                 ix.args[1]->name == "+" && SameExpr(*ix.args[1]->args[0], *ix.args[0])) {
        // v[a:a + n] with a known only at run time: a constant extent n, so that the
        // slice can stand where a constant shape is needed (an accumulator's store at a
        // row offset that is not a multiple of the tile). Its bounds are checked where
        // the start is known (interpreter, verifier).
        ASSIGN_OR_RETURN(Val n, Eval(*ix.args[1]->args[1]));
        if (n.k == Val::K::kInt) {
          if (n.i < 0 || (ct.shape[d] >= 0 && n.i > ct.shape[d])) {
            return Err(ix.loc,
                       absl::StrCat("slice of ", n.i, " elements does not fit dim ", d,
                                    " of extent ", ct.shape[d]),
                       "slice within the view's shape");
          }
          ext = n.i;
        }
      }
      ASSIGN_OR_RETURN(int vlo, AsIndex(lo, ix.loc, "slice start"));
      ASSIGN_OR_RETURN(int vhi, AsIndex(hi, ix.loc, "slice stop"));
      Type nt = ct;
      nt.shape[d] = ext;
      int r = NewVar(nt);
      Emit(OpCode::kSlice, ix.loc, r, {cur, vlo, vhi}).ints = {d, step};
      cur = r;
    } else {
      ASSIGN_OR_RETURN(Val x, Eval(ix));
      if (x.k == Val::K::kInt && ct.shape[d] >= 0 && (x.i < 0 || x.i >= ct.shape[d])) {
        return Err(
            ix.loc,
            absl::StrCat("index ", x.i, " out of bounds for dim ", d, " of extent ", ct.shape[d]),
            "index within the view's shape");
      }
      ASSIGN_OR_RETURN(int v, AsIndex(x, ix.loc, "index"));
      drops.push_back({d, v});
    }
  }
  for (auto it = drops.rbegin(); it != drops.rend(); ++it) {
    Type nt = TypeOf(cur);
    nt.shape.erase(nt.shape.begin() + it->first);
    int r = NewVar(nt);
    Emit(OpCode::kIndex, e.loc, r, {cur, it->second}).ints = {it->first};
    cur = r;
  }
  return Val::Var(cur, e.loc);
}

absl::StatusOr<Val> FnLowering::Attr(const Expr& e) {
  ASSIGN_OR_RETURN(Val base, Eval(*e.args[0]));
  if (base.k == Val::K::kVar && TypeOf(base.var).is_view()) {
    Type vt = TypeOf(base.var);
    if (e.name == "T") {
      if (vt.rank() != 2)
        return Err(e.loc, absl::StrCat(".T needs a rank-2 view, found rank ", vt.rank()),
                   "transpose 2-D views only");
      Type nt = vt;
      std::swap(nt.shape[0], nt.shape[1]);
      int r = NewVar(nt);
      Emit(OpCode::kTranspose, e.loc, r, {base.var});
      return Val::Var(r, e.loc);
    }
    if (e.name == "shape") {
      Val t;
      t.k = Val::K::kTuple;
      t.loc = e.loc;
      for (int d = 0; d < vt.rank(); ++d) {
        if (vt.shape[d] >= 0) {
          t.elems.push_back(Val::Int(vt.shape[d], e.loc));
        } else {
          int x = NewVar(Type::Scalar(DType::kI32));
          Emit(OpCode::kExtent, e.loc, x, {base.var}).ints = {d};
          t.elems.push_back(Val::Var(x, e.loc));
        }
      }
      return t;
    }
    if (e.name == "dtype") {
      Val v;
      v.k = Val::K::kDType;
      v.dt = vt.dtype;
      v.loc = e.loc;
      return v;
    }
  }
  if (base.k == Val::K::kVar && TypeOf(base.var).is_view() &&
      (e.name == "tile" || e.name == "reshape")) {
    return Err(e.loc, absl::StrCat("method '", e.name, "' must be called"),
               absl::StrCat("write v.", e.name, "(...)"));
  }
  return Err(e.loc, absl::StrCat(KindName(base), " has no attribute '", e.name, "'"),
             "views have .tile(), .reshape(), .T, .shape, .dtype");
}

absl::StatusOr<Val> FnLowering::Method(const Val& recv, const std::string& name, const Expr& e) {
  ASSIGN_OR_RETURN(
      int view, ViewVar(recv, e.args[0]->loc, absl::StrCat("receiver of .", name, "()").c_str()));
  Type vt = TypeOf(view);
  if (name == "tile") {
    ASSIGN_OR_RETURN(auto args, BindArgs(e, "tile", {"shape", "coord"}));
    ASSIGN_OR_RETURN(std::vector<int64_t> shape, ConstShape(*args[0], "tile shape"));
    if (static_cast<int>(shape.size()) != vt.rank()) {
      return Err(args[0]->loc,
                 absl::StrCat("tile shape has ", shape.size(), " dims, the view has ", vt.rank()),
                 "give one extent per dim");
    }
    ASSIGN_OR_RETURN(Val coord, Eval(*args[1]));
    std::vector<Val> cs;
    if (coord.k == Val::K::kTuple)
      cs = coord.elems;
    else
      cs.push_back(coord);
    if (cs.size() != shape.size()) {
      return Err(args[1]->loc,
                 absl::StrCat("tile coordinate has ", cs.size(), " dims, the view has ", vt.rank()),
                 "give one coordinate per dim");
    }
    std::vector<int> ops = {view};
    for (size_t d = 0; d < cs.size(); ++d) {
      if (cs[d].k == Val::K::kInt && vt.shape[d] >= 0 &&
          (cs[d].i < 0 || (cs[d].i + 1) * shape[d] > vt.shape[d])) {
        return Err(args[1]->loc,
                   absl::StrCat("tile ", cs[d].i, " of extent ", shape[d],
                                " is out of bounds for dim ", d, " of extent ", vt.shape[d]),
                   "keep tiles inside the view");
      }
      if (vt.shape[d] >= 0 && shape[d] > vt.shape[d]) {
        return Err(
            args[0]->loc,
            absl::StrCat("tile extent ", shape[d], " exceeds dim ", d, " of extent ", vt.shape[d]),
            "use a smaller tile");
      }
      ASSIGN_OR_RETURN(int c, AsIndex(cs[d], args[1]->loc, "tile coordinate"));
      ops.push_back(c);
    }
    int r = NewVar(Type::View(vt.space, vt.dtype, shape));
    Emit(OpCode::kTile, e.loc, r, ops).ints = shape;
    return Val::Var(r, e.loc);
  }
  if (name == "reshape") {
    ASSIGN_OR_RETURN(auto args, BindArgs(e, "reshape", {"shape"}));
    ASSIGN_OR_RETURN(std::vector<int64_t> shape, ConstShape(*args[0], "reshape shape"));
    int64_t n = 1, m = 1;
    for (int64_t x : shape) n *= x;
    for (int64_t x : vt.shape) {
      if (x < 0) return Err(e.loc, "reshape needs a view of static shape", "tile the view first");
      m *= x;
    }
    if (n != m)
      return Err(args[0]->loc, absl::StrCat("reshape to ", n, " elements from ", m),
                 "keep the element count");
    int r = NewVar(Type::View(vt.space, vt.dtype, shape));
    Emit(OpCode::kReshape, e.loc, r, {view}).ints = shape;
    return Val::Var(r, e.loc);
  }
  return Err(e.loc, absl::StrCat("views have no method '", name, "'"),
             "views have .tile(), .reshape(), .T, .shape");
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
  if (fn.k == Val::K::kDType) {
    if (!e.kwargs.empty() || e.args.size() != 2) {
      return Err(e.loc, absl::StrCat(DTypeName(fn.dt), "() takes one argument"),
                 "write e.g. f32(x)");
    }
    ASSIGN_OR_RETURN(Val x, Eval(*e.args[1]));
    ASSIGN_OR_RETURN(DType from, ScalarDType(x, x.loc, "cast operand"));
    if (x.is_const()) {
      Val c = x;
      c.weak = false;
      c.dt = fn.dt;
      if (fn.dt == DType::kBool)
        return Val::Bool(x.k == Val::K::kFloat ? x.f != 0 : x.i != 0, e.loc);
      if (IsFloat(fn.dt)) {
        c.k = Val::K::kFloat;
        c.f = RoundTo(fn.dt, x.k == Val::K::kFloat ? x.f : static_cast<double>(x.i));
      } else {
        c.k = Val::K::kInt;
        c.i = x.k == Val::K::kFloat ? ConvertToInt(fn.dt, x.f) : WrapInt(fn.dt, x.i);
      }
      return c;
    }
    if (from == fn.dt) return x;
    int r = NewVar(Type::Scalar(fn.dt));
    Emit(OpCode::kCast, e.loc, r, {x.var});
    return Val::Var(r, e.loc);
  }
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
  if (in_launch_ && !HostSafe(fn.s)) {
    return Err(e.loc, absl::StrCat("grid() cannot call '", fn.s, "'"),
               "grid() may only use dims, scalar parameters, constants, cdiv/min/max");
  }
  return Builtin(fn.s, e);
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

// ---- builtins -------------------------------------------------------------------

absl::StatusOr<int> FnLowering::LowerLambda(const Expr& lam, int rank, Loc loc, ir::Op* op,
                                            int want_tensor_rank, int* tensor_index) {
  if (lam.kind != ExprKind::kLambda) {
    return Err(lam.loc, "expected a lambda", "write lambda i, j: ...");
  }
  if (static_cast<int>(lam.params.size()) != rank) {
    return Err(lam.loc,
               absl::StrCat("the lambda takes ", lam.params.size(), " parameters, the value has ",
                            rank, " dims"),
               "take one parameter per dim");
  }
  std::map<std::string, std::optional<Val>> saved;
  ir::Block body;
  ir::Block* saved_cur = cur_;
  cur_ = &body;
  for (const std::string& p : lam.params) {
    auto it = env_.find(p);
    saved[p] = it == env_.end() ? std::nullopt : std::optional<Val>(it->second);
    int v = NewVar(Type::Scalar(DType::kI32), p);
    op->region_params.push_back(v);
    env_[p] = Val::Var(v, lam.loc, false);
  }
  auto restore = [&] {
    cur_ = saved_cur;
    for (auto& [k, v] : saved) {
      if (v)
        env_[k] = *v;
      else
        env_.erase(k);
    }
  };
  const Expr& b = *lam.args[0];
  absl::Status st;
  std::vector<int> yields;
  if (want_tensor_rank >= 0) {
    // Must be T(e0, e1, ...) for a tensor parameter T.
    const ir::TensorParam* tp = nullptr;
    if (b.kind == ExprKind::kCall && b.args[0]->kind == ExprKind::kName) {
      for (size_t i = 0; i < f_->tensors.size(); ++i) {
        if (f_->tensors[i].name == b.args[0]->name) {
          tp = &f_->tensors[i];
          *tensor_index = static_cast<int>(i);
        }
      }
    }
    if (!tp) {
      restore();
      return Err(b.loc, "a data tag must name a tensor parameter: lambda i, j: A(row, col)",
                 "write the tensor element the value must hold, e.g. A(r0 + i, c0 + j)");
    }
    if (b.args.size() - 1 != tp->shape.size() || !b.kwargs.empty()) {
      restore();
      return Err(b.loc,
                 absl::StrCat("tensor ", tp->name, " has ", tp->shape.size(),
                              " dims, the tag gives ", b.args.size() - 1),
                 "give one coordinate per dim");
    }
    for (size_t i = 1; i < b.args.size(); ++i) {
      auto v = Eval(*b.args[i]);
      if (!v.ok()) {
        restore();
        return v.status();
      }
      auto x = AsIndex(*v, b.args[i]->loc, "tag coordinate");
      if (!x.ok()) {
        restore();
        return x.status();
      }
      yields.push_back(*x);
    }
  } else {
    auto v = Eval(b);
    if (!v.ok()) {
      restore();
      return v.status();
    }
    auto x = AsIndex(*v, b.loc, "custom tag value");
    if (!x.ok()) {
      restore();
      return x.status();
    }
    yields.push_back(*x);
  }
  Emit(OpCode::kYield, lam.loc, -1, yields);
  restore();
  op->regions.push_back(std::move(body));
  (void)loc;
  return 0;
}

absl::StatusOr<Val> FnLowering::Builtin(const std::string& name, const Expr& e) {
  Loc loc = e.loc;
  auto args_of = [&](std::vector<std::string> params) {
    return BindArgs(e, name, std::move(params));
  };
  auto one_scalar = [&]() -> absl::StatusOr<Val> {
    ASSIGN_OR_RETURN(auto a, args_of({"x"}));
    return Eval(*a[0]);
  };
  auto special = [&](ir::SpecialOp s, int64_t dim) -> Val {
    int r = NewVar(Type::Scalar(DType::kI32));
    ir::Op& op = Emit(OpCode::kSpecial, loc, r);
    op.sub = static_cast<uint8_t>(s);
    if (dim >= 0) op.ints = {dim};
    return Val::Var(r, loc);
  };

  if (name == "grid") {
    return Err(loc, "grid() must be the first statement of a kernel",
               "move it to the top of the body");
  }
  if (name == "range") {
    return Err(loc, "range() is only allowed as a for loop's iterable",
               "write `for i in range(n):`");
  }
  if (name == "Tensor" || name == "const" || name == "kernel" || name == "device") {
    return Err(loc,
               absl::StrCat("'", name, "' is only allowed in a function signature or decorator"),
               "see docs/dsl.md");
  }
  if (name == "cdiv" || name == "min" || name == "max") {
    ASSIGN_OR_RETURN(auto a, args_of({"a", "b"}));
    ASSIGN_OR_RETURN(Val x, Eval(*a[0]));
    ASSIGN_OR_RETURN(Val y, Eval(*a[1]));
    if (name != "cdiv") return Binary(name, x, y, loc);
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
  if (name == "abs" || name == "exp" || name == "exp2" || name == "log" || name == "sqrt" ||
      name == "rsqrt") {
    ASSIGN_OR_RETURN(Val x, one_scalar());
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
  if (name == "fma") {
    // a * b + c rounded once (fma.rn.f32): the scaled softmax exponent in one instruction.
    ASSIGN_OR_RETURN(auto a, args_of({"a", "b", "c"}));
    std::vector<Val> v;
    for (const Expr* e : a) {
      ASSIGN_OR_RETURN(Val x, Eval(*e));
      v.push_back(x);
    }
    if (!IsFragVal(v[0]) && !IsFragVal(v[1]) && !IsFragVal(v[2]))
      return Err(loc, "fma() takes at least one fragment operand", "for scalars write a * b + c");
    return FragEw(ir::FragEwOp::kFma, v, loc, "fma()");
  }
  if (name == "select") {
    ASSIGN_OR_RETURN(auto a, args_of({"cond", "a", "b"}));
    ASSIGN_OR_RETURN(Val c, Eval(*a[0]));
    ASSIGN_OR_RETURN(Val x, Eval(*a[1]));
    ASSIGN_OR_RETURN(Val y, Eval(*a[2]));
    if (IsFragVal(c) || IsFragVal(x) || IsFragVal(y))
      return FragEw(ir::FragEwOp::kSelect, {c, x, y}, loc, "select()");
    ASSIGN_OR_RETURN(DType tc, ScalarDType(c, c.loc, "select condition"));
    if (tc != DType::kBool)
      return Err(c.loc, "select() condition must be bool", "compare explicitly");
    ASSIGN_OR_RETURN(DType tx, ScalarDType(x, x.loc, "select operand"));
    ASSIGN_OR_RETURN(DType ty, ScalarDType(y, y.loc, "select operand"));
    bool wx = x.is_const() && x.weak, wy = y.is_const() && y.weak;
    DType t = wx && !wy ? ty : wy && !wx ? tx : PromoteStrong(tx, ty);
    if (tx == DType::kBool && ty == DType::kBool) t = DType::kBool;
    ASSIGN_OR_RETURN(int vc, Materialize(c, c.loc));
    ASSIGN_OR_RETURN(int vx, Coerce(x, t, x.loc, "select operand"));
    ASSIGN_OR_RETURN(int vy, Coerce(y, t, y.loc, "select operand"));
    int r = NewVar(Type::Scalar(t));
    Emit(OpCode::kSelect, loc, r, {vc, vx, vy});
    return Val::Var(r, loc);
  }
  if (name == "thread_id" || name == "warp_id" || name == "lane_id" || name == "warp_size") {
    RETURN_IF_ERROR(args_of({}).status());
    if (name == "warp_size") {
      Val v = Val::Int(f_->warp_size, loc);
      v.weak = false;
      v.dt = DType::kI32;
      return v;
    }
    if (!f_->is_kernel && f_->warp_size == 0) {
    }
    return special(name == "thread_id" ? ir::SpecialOp::kThreadId
                   : name == "warp_id" ? ir::SpecialOp::kWarpId
                                       : ir::SpecialOp::kLaneId,
                   -1);
  }
  if (name == "block_id" || name == "grid_dim") {
    ASSIGN_OR_RETURN(auto a, args_of({"dim"}));
    ASSIGN_OR_RETURN(int64_t d, ConstInt(*a[0], "dimension"));
    if (d < 0 || d > 2)
      return Err(a[0]->loc, absl::StrCat(name, "() dimension must be 0, 1 or 2, got ", d),
                 "use 0, 1 or 2");
    return special(name == "block_id" ? ir::SpecialOp::kBlockId : ir::SpecialOp::kGridDim, d);
  }
  if (name == "Swizzle") {
    ASSIGN_OR_RETURN(auto a, args_of({"B", "M", "S"}));
    Val v;
    v.k = Val::K::kSwizzle;
    v.loc = loc;
    ASSIGN_OR_RETURN(int64_t b, ConstInt(*a[0], "Swizzle B"));
    ASSIGN_OR_RETURN(int64_t m, ConstInt(*a[1], "Swizzle M"));
    ASSIGN_OR_RETURN(int64_t s, ConstInt(*a[2], "Swizzle S"));
    if (b < 0 || b > 8 || m < 0 || m > 8 || s < b || s > 12) {
      return Err(loc, absl::StrCat("Swizzle(", b, ", ", m, ", ", s, ") is not a valid swizzle"),
                 "need 0 <= B <= 8, 0 <= M <= 8, B <= S <= 12 (CuTe: |S| >= B)");
    }
    v.swz = Swizzle{static_cast<int>(b), static_cast<int>(m), static_cast<int>(s)};
    return v;
  }
  if (name == "Layout") {
    ASSIGN_OR_RETURN(auto a, args_of({"shape", "stride"}));
    Val v;
    v.k = Val::K::kLayout;
    v.loc = loc;
    ASSIGN_OR_RETURN(v.layout.shape, ConstShape(*a[0], "layout shape"));
    ASSIGN_OR_RETURN(Val st, Eval(*a[1]));
    std::vector<int64_t> stride;
    if (st.k == Val::K::kInt)
      stride.push_back(st.i);
    else if (st.k == Val::K::kTuple) {
      for (const Val& x : st.elems) {
        ASSIGN_OR_RETURN(int64_t s, ConstIntVal(x, a[1]->loc, "layout stride"));
        if (s < 0) return Err(a[1]->loc, "layout strides must be non-negative", "use strides >= 0");
        stride.push_back(s);
      }
    } else {
      return Err(a[1]->loc, "layout stride must be a tuple of integers", "write e.g. (1, 64)");
    }
    if (stride.size() != v.layout.shape.size()) {
      return Err(a[1]->loc, "layout shape and stride differ in rank", "give one stride per dim");
    }
    v.layout.stride = stride;
    return v;
  }
  if (name == "thread_layout") {
    ASSIGN_OR_RETURN(auto a, args_of({"shape", "vec?"}));
    Val v;
    v.k = Val::K::kThreadLayout;
    v.loc = loc;
    ASSIGN_OR_RETURN(v.layout.shape, ConstShape(*a[0], "thread layout shape"));
    if (v.layout.shape.size() > 2)
      return Err(a[0]->loc, "thread layouts have rank 1 or 2", "use (threads,) or (rows, cols)");
    v.layout.stride.assign(v.layout.shape.size(), 1);
    if (v.layout.shape.size() == 2) v.layout.stride[0] = v.layout.shape[1];
    if (a[1]) {
      ASSIGN_OR_RETURN(v.layout.vec, ConstInt(*a[1], "vec"));
      if (v.layout.vec <= 0 || v.layout.vec > 16)
        return Err(a[1]->loc, "vec must be 1..16", "use 1, 2, 4 or 8");
    }
    if (f_->is_kernel && v.layout.Size() > f_->threads) {
      return Err(a[0]->loc,
                 absl::StrCat("thread layout has ", v.layout.Size(), " threads, the block has ",
                              f_->threads),
                 "use at most threads= threads");
    }
    return v;
  }
  if (name == "shared" || name == "local") {
    RETURN_IF_ERROR(RequireKernel(loc, absl::StrCat(name, "()")));
    ASSIGN_OR_RETURN(auto a, name == "shared" ? args_of({"dtype", "shape", "layout?", "swizzle?"})
                                              : args_of({"dtype", "shape"}));
    ASSIGN_OR_RETURN(Val dt, Eval(*a[0]));
    if (dt.k != Val::K::kDType)
      return Err(a[0]->loc, absl::StrCat("dtype expected, found ", KindName(dt)),
                 "write e.g. bf16");
    ASSIGN_OR_RETURN(std::vector<int64_t> shape, ConstShape(*a[1], "buffer shape"));
    ir::Layout lay;
    lay.shape = shape;
    lay.stride.assign(shape.size(), 1);
    for (int d = static_cast<int>(shape.size()) - 2; d >= 0; --d)
      lay.stride[d] = lay.stride[d + 1] * shape[d + 1];
    if (name == "shared" && a[2]) {
      ASSIGN_OR_RETURN(Val l, Eval(*a[2]));
      if (l.k != Val::K::kLayout)
        return Err(a[2]->loc, "layout= needs Layout(shape, stride)",
                   "write layout=Layout((64, 32), (1, 64))");
      if (l.layout.shape != shape)
        return Err(a[2]->loc, "the layout's shape differs from the buffer's", "use the same shape");
      lay.stride = l.layout.stride;
    }
    if (name == "shared" && a[3]) {
      ASSIGN_OR_RETURN(Val s, Eval(*a[3]));
      if (s.k != Val::K::kSwizzle)
        return Err(a[3]->loc, "swizzle= needs Swizzle(B, M, S)", "write swizzle=Swizzle(3, 3, 3)");
      lay.swizzle = s.swz;
      int64_t span = int64_t{1} << (s.swz.b + s.swz.m + s.swz.s);
      (void)span;
    }
    int64_t bytes = lay.Cosize() * DTypeBytes(dt.dt);
    if (lay.swizzle.active()) {
      int64_t top = int64_t{1} << (lay.swizzle.s + lay.swizzle.m + lay.swizzle.b);
      if (lay.Cosize() % (int64_t{1} << (lay.swizzle.m + lay.swizzle.b)) != 0 &&
          lay.Cosize() < top) {
      }
    }
    if (name == "shared") {
      shared_bytes_ += bytes;
      int64_t limit = f_->arch == "gfx942" ? 64 * 1024 : 227 * 1024;
      if (shared_bytes_ > limit) {
        return Err(loc,
                   absl::StrCat("shared memory use ", shared_bytes_, " bytes exceeds ", limit,
                                " on ", f_->arch),
                   "use smaller tiles or fewer stages");
      }
    } else {
      local_bytes_ += bytes;
      if (local_bytes_ > 16 * 1024) {
        return Err(
            loc, absl::StrCat("local arrays use ", local_bytes_, " bytes per thread (limit 16384)"),
            "use smaller arrays");
      }
    }
    int r = NewVar(Type::View(name == "shared" ? Space::kShared : Space::kLocal, dt.dt, shape));
    ir::Op& op = Emit(name == "shared" ? OpCode::kAllocShared : OpCode::kAllocLocal, loc, r);
    op.layout = lay;
    return Val::Var(r, loc);
  }
  if (name == "copy" || name == "copy_async" || name == "cp_async") {
    RETURN_IF_ERROR(RequireKernel(loc, absl::StrCat(name, "()")));
    ASSIGN_OR_RETURN(auto a, args_of({"src", "dst", "thread_layout"}));
    ASSIGN_OR_RETURN(Val sv, Eval(*a[0]));
    ASSIGN_OR_RETURN(Val dv, Eval(*a[1]));
    ASSIGN_OR_RETURN(Val tl, Eval(*a[2]));
    ASSIGN_OR_RETURN(int src, ViewVar(sv, a[0]->loc, "copy source"));
    ASSIGN_OR_RETURN(int dst, ViewVar(dv, a[1]->loc, "copy destination"));
    if (tl.k != Val::K::kThreadLayout) {
      return Err(a[2]->loc, absl::StrCat("thread layout expected, found ", KindName(tl)),
                 "pass thread_layout((rows, cols))");
    }
    const Type& st = TypeOf(src);
    const Type& dt = TypeOf(dst);
    if (st.rank() != dt.rank() || st.rank() != static_cast<int>(tl.layout.shape.size())) {
      return Err(loc,
                 absl::StrCat("copy ranks differ: source ", st.rank(), ", destination ", dt.rank(),
                              ", thread layout ", tl.layout.shape.size()),
                 "copy between views of one rank with a layout of that rank");
    }
    for (int d = 0; d < st.rank(); ++d) {
      if (st.shape[d] >= 0 && dt.shape[d] >= 0 && st.shape[d] != dt.shape[d]) {
        return Err(loc,
                   absl::StrCat("copy shapes differ: source ", st.ToString(), ", destination ",
                                dt.ToString()),
                   "tile the views to the same shape");
      }
      int64_t ext = st.shape[d] >= 0 ? st.shape[d] : dt.shape[d];
      int64_t per = tl.layout.shape[d] * (d == st.rank() - 1 ? tl.layout.vec : 1);
      if (ext >= 0 && ext % per != 0) {
        return Err(a[2]->loc,
                   absl::StrCat("tile extent ", ext, " of dim ", d,
                                " is not a multiple of the thread layout's ", per),
                   "choose a thread layout that divides the tile");
      }
    }
    bool async = name != "copy";
    if (async && (st.space != Space::kGlobal || dt.space != Space::kShared)) {
      return Err(loc,
                 absl::StrCat(name, "() copies global to shared, found ", SpaceName(st.space),
                              " to ", SpaceName(dt.space)),
                 "use copy() for other spaces");
    }
    if (async && st.dtype != dt.dtype) {
      return Err(loc,
                 absl::StrCat(name, "() cannot convert ", DTypeName(st.dtype), " to ",
                              DTypeName(dt.dtype)),
                 "async copies move bytes; use the same dtype");
    }
    if (name == "cp_async") {
      if (f_->arch != "sm_90a")
        return Err(loc, "cp_async is an NVIDIA instruction; this kernel targets gfx942",
                   "use copy_async");
      int64_t bytes = tl.layout.vec * DTypeBytes(st.dtype);
      if (bytes != 4 && bytes != 8 && bytes != 16) {
        return Err(a[2]->loc,
                   absl::StrCat("cp.async moves 4, 8 or 16 bytes per thread, vec gives ", bytes),
                   "set thread_layout(..., vec=...) so that vec * element size is 4, 8 or 16");
      }
    }
    ir::Op& op = Emit(OpCode::kCopy, loc, -1, {src, dst});
    op.layout = tl.layout;
    op.ints = {async ? 1 : 0};
    op.name = name;
    return Val::None(loc);
  }
  if (name == "commit_group" || name == "barrier") {
    if (name == "commit_group") RETURN_IF_ERROR(RequireKernel(loc, "commit_group()"));
    RETURN_IF_ERROR(args_of({}).status());
    Emit(name == "barrier" ? OpCode::kBarrier : OpCode::kCommitGroup, loc);
    return Val::None(loc);
  }
  if (name == "wait_group") {
    RETURN_IF_ERROR(RequireKernel(loc, "wait_group()"));
    ASSIGN_OR_RETURN(auto a, args_of({"n"}));
    ASSIGN_OR_RETURN(int64_t n, ConstInt(*a[0], "wait_group count"));
    if (n < 0 || n > 64)
      return Err(a[0]->loc, "wait_group count must be 0..64", "use a small constant");
    Emit(OpCode::kWaitGroup, loc).ints = {n};
    return Val::None(loc);
  }
  if (name == "fragment") {
    RETURN_IF_ERROR(RequireKernel(loc, "fragment()"));
    ASSIGN_OR_RETURN(
        auto a, args_of({"dtype", "shape", "mma", "warps?", "warpgroups?", "first_warpgroup?"}));
    ASSIGN_OR_RETURN(Val dt, Eval(*a[0]));
    if (dt.k != Val::K::kDType) return Err(a[0]->loc, "dtype expected", "write f32");
    ASSIGN_OR_RETURN(std::vector<int64_t> shape, ConstShape(*a[1], "fragment shape"));
    if (shape.size() != 2)
      return Err(a[1]->loc, "fragment shape must be (BM, BN)", "give two extents");
    ASSIGN_OR_RETURN(std::string kind, ConstStr(*a[2], "mma="));
    if ((kind == "wgmma_bf16" || kind == "wgmma_f16") && a[4]) {
      // The widest instruction for the warp group's columns: N = BN / WN, or, past the widest
      // wgmma (256), the widest multiple of 64 that divides it (BN = 320: five n64 tiles), so
      // that each tile's B columns start on a 64-column (128-byte swizzle) block.
      ASSIGN_OR_RETURN(std::vector<int64_t> wg, ConstShape(*a[4], "warpgroups"));
      if (wg.size() == 2 && wg[1] > 0 && shape[1] % wg[1] == 0) {
        int64_t n = shape[1] / wg[1];
        for (int64_t w = 256; n > 256 && w >= 64; w -= 64) {
          if (n % w == 0) n = w;
        }
        kind = absl::StrCat("wgmma_m64n", n, "k16_", kind.substr(6));
      }
    }
    const MmaInfo* mi = FindMma(kind);
    if (!mi) {
      int n;
      const MmaInfo* all = AllMmas(&n);
      std::vector<std::string> names;
      for (int i = 0; i < n; ++i) {
        if (!all[i].wgmma) names.push_back(all[i].name);
      }
      names.push_back("wgmma_m64nNk16_bf16 / _f16 (N = 8..256, step 8)");
      return Err(a[2]->loc, absl::StrCat("unknown MMA instruction '", kind, "'"),
                 absl::StrCat("one of: ", absl::StrJoin(names, ", ")));
    }
    if (f_->arch != mi->arch) {
      return Err(
          a[2]->loc,
          absl::StrCat(kind, " is a ", mi->arch, " instruction; this kernel targets ", f_->arch),
          f_->arch == "gfx942" ? "use mfma_f32_32x32x8_bf16 or mfma_f32_16x16x16_bf16"
                               : "use mma_sync_m16n8k16_bf16");
    }
    if (dt.dt != mi->acc)
      return Err(a[0]->loc, absl::StrCat(kind, " accumulates in ", DTypeName(mi->acc)),
                 absl::StrCat("write fragment(", DTypeName(mi->acc), ", ...)"));
    std::vector<int64_t> warps = {1, 1};
    int64_t first = 0;
    if (mi->wgmma) {
      if (a[3])
        return Err(a[3]->loc, "wgmma fragments are spread over warp groups",
                   "write warpgroups=(WM, WN) instead of warps=");
      if (a[4]) {
        ASSIGN_OR_RETURN(warps, ConstShape(*a[4], "warpgroups"));
        if (warps.size() != 2)
          return Err(a[4]->loc, "warpgroups must be (WM, WN)", "give two counts");
      }
      if (a[5]) {
        ASSIGN_OR_RETURN(first, ConstInt(*a[5], "first_warpgroup"));
      }
      if (first < 0 || (first + warps[0] * warps[1]) * 128 > f_->threads) {
        return Err(a[4] ? a[4]->loc : loc,
                   absl::StrCat("warp groups ", first, "..", first + warps[0] * warps[1] - 1,
                                " need ", (first + warps[0] * warps[1]) * 128,
                                " threads, the block has ", f_->threads),
                   "threads= must cover every warp group (128 threads each)");
      }
    } else if (a[4] || a[5]) {
      return Err(a[4] ? a[4]->loc : a[5]->loc, "warpgroups= is for wgmma fragments",
                 "write warps=(WM, WN)");
    }
    if (a[3]) {
      ASSIGN_OR_RETURN(warps, ConstShape(*a[3], "warps"));
      if (warps.size() != 2) return Err(a[3]->loc, "warps must be (WM, WN)", "give two counts");
    }
    if (!mi->wgmma && warps[0] * warps[1] * f_->warp_size != f_->threads) {
      return Err(a[3] ? a[3]->loc : loc,
                 absl::StrCat("warps ", warps[0], "x", warps[1], " of ", f_->warp_size,
                              " lanes is ", warps[0] * warps[1] * f_->warp_size,
                              " threads, the block has ", f_->threads),
                 "make WM * WN * warp size equal threads=");
    }
    if (shape[0] % (warps[0] * mi->m) != 0 || shape[1] % (warps[1] * mi->n) != 0) {
      return Err(a[1]->loc,
                 absl::StrCat("fragment ", shape[0], "x", shape[1], " does not split into ",
                              warps[0], "x", warps[1], mi->wgmma ? " warp groups" : " warps",
                              " of ", mi->m, "x", mi->n, " tiles"),
                 absl::StrCat("BM must be a multiple of WM*", mi->m, " and BN of WN*", mi->n));
    }
    Type t;
    t.kind = ir::TypeKind::kFragment;
    t.dtype = mi->acc;
    t.frag.mma = mi;
    t.frag.role = FragRole::kAcc;
    t.frag.rows = t.frag.bm = static_cast<int>(shape[0]);
    t.frag.cols = t.frag.bn = static_cast<int>(shape[1]);
    t.frag.wm = static_cast<int>(warps[0]);
    t.frag.wn = static_cast<int>(warps[1]);
    t.frag.first = static_cast<int>(first);
    if (t.frag.Geom().PerLane() > 256) {
      return Err(a[1]->loc,
                 absl::StrCat("the accumulator needs ", t.frag.Geom().PerLane(),
                              " registers per lane (limit 256)"),
                 "use smaller tiles or more warps");
    }
    int r = NewVar(t);
    Emit(OpCode::kFragment, loc, r).name = kind;
    return Val::Var(r, loc);
  }
  if (name == "row_max" || name == "row_sum" || name == "row_index" || name == "col_index" ||
      name == "row_fill" || name == "to_operand") {
    RETURN_IF_ERROR(RequireKernel(loc, absl::StrCat(name, "()")));
    std::vector<const Expr*> fa;
    if (name == "row_fill") {
      ASSIGN_OR_RETURN(auto a, args_of({"acc", "value"}));
      fa = {a[0], a[1]};
    } else if (name == "to_operand") {
      ASSIGN_OR_RETURN(auto a, args_of({"p", "acc"}));
      fa = {a[0], a[1]};
    } else {
      ASSIGN_OR_RETURN(auto a, args_of({"acc"}));
      fa = {a[0]};
    }
    return FragCall(name, fa, loc);
  }
  if (name == "load_fragment" || name == "ldmatrix") {
    RETURN_IF_ERROR(RequireKernel(loc, absl::StrCat(name, "()")));
    ASSIGN_OR_RETURN(auto a, args_of({"src", "acc", "operand"}));
    ASSIGN_OR_RETURN(Val sv, Eval(*a[0]));
    ASSIGN_OR_RETURN(Val av, Eval(*a[1]));
    ASSIGN_OR_RETURN(int src, ViewVar(sv, a[0]->loc, "fragment source"));
    ASSIGN_OR_RETURN(int acc, FragVar(av, a[1]->loc, "accumulator"));
    ASSIGN_OR_RETURN(std::string operand, ConstStr(*a[2], "operand="));
    const Type& st = TypeOf(src);
    Type at = TypeOf(acc);
    if (at.frag.role != FragRole::kAcc)
      return Err(a[1]->loc, "the second argument must be the accumulator fragment",
                 "pass the fragment(...) result");
    const MmaInfo* mi = at.frag.mma;
    if (mi->wgmma)
      return Err(loc, "wgmma operands come from shared memory descriptors",
                 "use wgmma_operand(src, acc, operand=...)");
    if (operand != "A" && operand != "B")
      return Err(a[2]->loc, absl::StrCat("operand must be \"A\" or \"B\", got \"", operand, "\""),
                 "write operand=\"A\"");
    if (name == "ldmatrix") {
      if (f_->arch != "sm_90a")
        return Err(loc, "ldmatrix is an NVIDIA instruction", "use load_fragment");
      if (st.space != Space::kShared)
        return Err(a[0]->loc, "ldmatrix reads shared memory", "copy the tile to shared first");
    }
    if (st.rank() != 2 || st.shape[0] < 0 || st.shape[1] < 0) {
      return Err(
          a[0]->loc,
          absl::StrCat("fragment source must be a 2-D view of static shape, found ", st.ToString()),
          "tile the view: A.tile((BM, BK), (i, k))");
    }
    if (st.dtype != mi->ab) {
      return Err(a[0]->loc,
                 absl::StrCat(mi->name, " takes ", DTypeName(mi->ab),
                              " operands, the source holds ", DTypeName(st.dtype)),
                 "convert the data when copying it to shared memory");
    }
    Type t = at;
    t.dtype = mi->ab;
    bool is_a = operand == "A";
    t.frag.role = is_a ? FragRole::kA : FragRole::kB;
    t.frag.rows = static_cast<int>(st.shape[0]);
    t.frag.cols = static_cast<int>(st.shape[1]);
    int64_t kext = is_a ? st.shape[1] : st.shape[0];
    int64_t mn = is_a ? st.shape[0] : st.shape[1];
    if (mn != (is_a ? at.frag.bm : at.frag.bn)) {
      return Err(a[0]->loc,
                 absl::StrCat("operand ", operand, " source is ", st.shape[0], "x", st.shape[1],
                              "; its ", is_a ? "rows" : "columns", " must match the accumulator's ",
                              is_a ? at.frag.bm : at.frag.bn),
                 is_a ? "A is (BM, BK)" : "B is (BK, BN)");
    }
    if (kext % mi->k != 0) {
      return Err(
          a[0]->loc,
          absl::StrCat("K extent ", kext, " is not a multiple of the instruction's K=", mi->k),
          "use BK a multiple of K");
    }
    int r = NewVar(t);
    Emit(OpCode::kLoadFragment, loc, r, {src, acc}).name = name;
    return Val::Var(r, loc);
  }
  if (name == "mma" || FindMma(name)) {
    RETURN_IF_ERROR(RequireKernel(loc, absl::StrCat(name, "()")));
    ASSIGN_OR_RETURN(auto a, args_of({"acc", "a", "b"}));
    ASSIGN_OR_RETURN(Val cv, Eval(*a[0]));
    ASSIGN_OR_RETURN(Val xv, Eval(*a[1]));
    ASSIGN_OR_RETURN(Val yv, Eval(*a[2]));
    ASSIGN_OR_RETURN(int acc, FragVar(cv, a[0]->loc, "accumulator"));
    ASSIGN_OR_RETURN(int fa, FragVar(xv, a[1]->loc, "A operand"));
    ASSIGN_OR_RETURN(int fb, FragVar(yv, a[2]->loc, "B operand"));
    const ir::FragType& c = TypeOf(acc).frag;
    const ir::FragType& x = TypeOf(fa).frag;
    const ir::FragType& y = TypeOf(fb).frag;
    if (c.role != FragRole::kAcc)
      return Err(a[0]->loc, "first argument must be an accumulator",
                 "pass the fragment(...) result");
    if (x.role != FragRole::kA)
      return Err(a[1]->loc, "second argument must be an A operand fragment",
                 "load it with operand=\"A\"");
    if (y.role != FragRole::kB)
      return Err(a[2]->loc, "third argument must be a B operand fragment",
                 "load it with operand=\"B\"");
    if ((x.mma != c.mma && !(x.regs && x.mma->ab == c.mma->ab)) || y.mma != c.mma || x.bm != c.bm ||
        x.bn != c.bn || y.bm != c.bm || y.bn != c.bn) {
      return Err(loc, "operands were loaded for a different accumulator",
                 "load them with this accumulator");
    }
    if (x.cols != y.rows) {
      return Err(loc,
                 absl::StrCat("K extents differ: A is ", x.rows, "x", x.cols, ", B is ", y.rows,
                              "x", y.cols),
                 "load both with the same BK");
    }
    if (c.mma->wgmma)
      return Err(loc, "wgmma accumulators are multiplied with wgmma(acc, a, b)",
                 "use wgmma() with wgmma_operand() operands");
    if (name != "mma" && c.mma->name != name) {
      return Err(loc, absl::StrCat(name, "() on fragments of ", c.mma->name),
                 absl::StrCat("call mma() or ", c.mma->name, "()"));
    }
    Emit(OpCode::kMma, loc, -1, {acc, fa, fb}).name = name;
    return Val::None(loc);
  }
  if (name == "warpgroup_id") {
    RETURN_IF_ERROR(args_of({}).status());
    RETURN_IF_ERROR(RequireHopper(loc, name));
    return special(ir::SpecialOp::kWarpGroupId, -1);
  }
  if (name == "mbarrier") {
    RETURN_IF_ERROR(RequireKernel(loc, "mbarrier()"));
    RETURN_IF_ERROR(RequireHopper(loc, name));
    ASSIGN_OR_RETURN(auto a, args_of({"count", "arrivals?"}));
    ASSIGN_OR_RETURN(int64_t n, ConstInt(*a[0], "mbarrier count"));
    int64_t arrivals = 1;
    if (a[1]) {
      ASSIGN_OR_RETURN(arrivals, ConstInt(*a[1], "arrivals"));
    }
    if (n < 1 || n > 64)
      return Err(a[0]->loc, absl::StrCat("mbarrier count must be 1..64, got ", n),
                 "one barrier per pipeline stage");
    if (arrivals < 1 || arrivals > 1024)
      return Err(a[1]->loc, absl::StrCat("arrivals must be 1..1024, got ", arrivals),
                 "count the threads (or warp groups) that arrive per phase");
    if (cur_ != &f_->body)
      return Err(loc, "mbarrier() must be called at the kernel's top level",
                 "allocate barriers before any if/for, like shared()");
    shared_bytes_ += 8 * n;
    Type t;
    t.kind = ir::TypeKind::kBarrier;
    t.shape = {n};
    int r = NewVar(t);
    Emit(OpCode::kMbarrier, loc, r).ints = {n, arrivals};
    return Val::Var(r, loc);
  }
  if (name == "mbarrier_arrive" || name == "mbarrier_arrive_expect_tx" || name == "mbarrier_wait") {
    RETURN_IF_ERROR(RequireKernel(loc, absl::StrCat(name, "()")));
    RETURN_IF_ERROR(RequireHopper(loc, name));
    ASSIGN_OR_RETURN(auto a, name == "mbarrier_arrive" ? args_of({"barrier"})
                             : name == "mbarrier_wait" ? args_of({"barrier", "parity"})
                                                       : args_of({"barrier", "nbytes"}));
    ASSIGN_OR_RETURN(auto bar, BarrierArg(*a[0]));
    std::vector<int> ops = {bar.first, bar.second};
    if (a.size() > 1) {
      ASSIGN_OR_RETURN(Val x, Eval(*a[1]));
      if (x.k == Val::K::kInt && name == "mbarrier_wait" && x.i != 0 && x.i != 1)
        return Err(a[1]->loc, absl::StrCat("parity must be 0 or 1, got ", x.i),
                   "write (k // STAGES) % 2");
      if (x.k == Val::K::kInt && name != "mbarrier_wait" && (x.i < 0 || x.i >= (1 << 20)))
        return Err(a[1]->loc, absl::StrCat("transaction bytes must be 0..2^20-1, got ", x.i),
                   "count the bytes of the TMA loads that complete on this barrier");
      ASSIGN_OR_RETURN(
          int v, Coerce(x, DType::kI32, x.loc, name == "mbarrier_wait" ? "parity" : "byte count"));
      ops.push_back(v);
    }
    Emit(name == "mbarrier_arrive" ? OpCode::kMbarArrive
         : name == "mbarrier_wait" ? OpCode::kMbarWait
                                   : OpCode::kMbarArriveTx,
         loc, -1, ops);
    return Val::None(loc);
  }
  if (name == "tma_load") {
    RETURN_IF_ERROR(RequireKernel(loc, "tma_load()"));
    RETURN_IF_ERROR(RequireHopper(loc, name));
    ASSIGN_OR_RETURN(auto a, args_of({"src", "dst", "barrier"}));
    ASSIGN_OR_RETURN(TmaTile tt,
                     TmaTensorTile(*a[0], "tma_load's source",
                                   "write tma_load(A.tile((BM, BK), (bm, k)), sA[s], full[s])"));
    ASSIGN_OR_RETURN(Val dv, Eval(*a[1]));
    ASSIGN_OR_RETURN(int dst, ViewVar(dv, a[1]->loc, "tma_load destination"));
    ASSIGN_OR_RETURN(auto bar, BarrierArg(*a[2]));
    RETURN_IF_ERROR(
        TmaSharedSide(tt, dst, a[1]->loc, "tma_load destination", "index the stage: sA[s]"));
    std::vector<int> ops = {tt.view, dst, bar.first, bar.second, tt.coord0, tt.coord1};
    ir::Op& op = Emit(OpCode::kTmaLoad, loc, -1, ops);
    op.ints = {tt.tensor, tt.box0, tt.box1};
    return Val::None(loc);
  }
  ASSIGN_OR_RETURN(std::optional<Val> epi, EpilogueBuiltin(name, e));
  if (epi) return *epi;
  if (name == "fence_proxy_async") {
    RETURN_IF_ERROR(RequireKernel(loc, "fence_proxy_async()"));
    RETURN_IF_ERROR(RequireHopper(loc, name));
    RETURN_IF_ERROR(args_of({}).status());
    Emit(OpCode::kFenceProxyAsync, loc);
    return Val::None(loc);
  }
  if (name == "setmaxnreg") {
    RETURN_IF_ERROR(RequireKernel(loc, "setmaxnreg()"));
    RETURN_IF_ERROR(RequireHopper(loc, name));
    ASSIGN_OR_RETURN(auto a, args_of({"registers"}));
    ASSIGN_OR_RETURN(int64_t n, ConstInt(*a[0], "register count"));
    if (n < 24 || n > 256 || n % 8 != 0)
      return Err(a[0]->loc, absl::StrCat("setmaxnreg takes 24..256 in steps of 8, got ", n),
                 "e.g. 40 for a producer, 232 for consumers");
    Emit(OpCode::kSetMaxNReg, loc).ints = {n};
    return Val::None(loc);
  }
  if (name == "wgmma_operand") {
    RETURN_IF_ERROR(RequireKernel(loc, "wgmma_operand()"));
    ASSIGN_OR_RETURN(auto a, args_of({"src", "acc", "operand"}));
    ASSIGN_OR_RETURN(Val sv, Eval(*a[0]));
    ASSIGN_OR_RETURN(Val av, Eval(*a[1]));
    ASSIGN_OR_RETURN(int src, ViewVar(sv, a[0]->loc, "wgmma operand source"));
    ASSIGN_OR_RETURN(int acc, FragVar(av, a[1]->loc, "accumulator"));
    ASSIGN_OR_RETURN(std::string operand, ConstStr(*a[2], "operand="));
    Type at = TypeOf(acc);
    const Type st = TypeOf(src);
    if (at.frag.role != FragRole::kAcc || !at.frag.mma->wgmma)
      return Err(a[1]->loc, "the second argument must be a wgmma accumulator",
                 "create it with fragment(f32, (BM, BN), mma=\"wgmma_m64n256k16_bf16\", ...)");
    const MmaInfo* mi = at.frag.mma;
    if (operand != "A" && operand != "B")
      return Err(a[2]->loc, absl::StrCat("operand must be \"A\" or \"B\", got \"", operand, "\""),
                 "write operand=\"A\"");
    if (st.space != Space::kShared)
      return Err(a[0]->loc, "wgmma reads its operands from shared memory",
                 "load the tile with tma_load into a shared buffer");
    if (st.dtype != mi->ab)
      return Err(a[0]->loc,
                 absl::StrCat(mi->name, " takes ", DTypeName(mi->ab),
                              " operands, the source holds ", DTypeName(st.dtype)),
                 "convert when filling the buffer");
    for (int64_t x : st.shape) {
      if (x < 0) return Err(a[0]->loc, "wgmma operand views need a static shape", "tile the view");
    }
    bool is_a = operand == "A";
    int64_t rows, cols;
    if (is_a) {
      if (st.rank() != 2 || st.shape[0] != at.frag.bm || st.shape[1] != 64)
        return Err(a[0]->loc,
                   absl::StrCat("operand A must be the (", at.frag.bm,
                                ", 64) tile (128-byte rows, K-major), found ", st.ToString()),
                   "use BK = 64: sA = shared(bf16, (STAGES, BM, 64), swizzle=Swizzle(3, 3, 3))");
      rows = st.shape[0];
      cols = 64;
    } else {
      // N-major: (BK, 64) or (BN/64, BK, 64). K-major: the transpose `.T` of a
      // (BN, 64) tile (a (64, BN) view; its strides are checked where known, at
      // run time and in codegen).
      bool ok2 =
          st.rank() == 2 && st.shape[1] == at.frag.bn && (at.frag.bn == 64 || st.shape[0] == 64);
      bool ok3 = st.rank() == 3 && st.shape[2] == 64 && st.shape[0] * 64 == at.frag.bn;
      if (!ok2 && !ok3)
        return Err(a[0]->loc,
                   absl::StrCat("operand B must be (", at.frag.bn / 64,
                                ", BK, 64): BN/64 column blocks of 64 (N-major), or the (64, ",
                                at.frag.bn, ") transpose of a (", at.frag.bn,
                                ", 64) tile (K-major), found ", st.ToString()),
                   "sB = shared(bf16, (STAGES, BN // 64, BK, 64), swizzle=Swizzle(3, 3, 3)); "
                   "K-major: wgmma_operand(sK[s].T, acc, operand=\"B\")");
      rows = st.shape[st.rank() - 2];
      cols = at.frag.bn;
    }
    int64_t kext = is_a ? cols : rows;
    if (kext % mi->k != 0)
      return Err(
          a[0]->loc,
          absl::StrCat("K extent ", kext, " is not a multiple of the instruction's K=", mi->k),
          "use BK a multiple of 16");
    Type t = at;
    t.dtype = mi->ab;
    t.frag.role = is_a ? FragRole::kA : FragRole::kB;
    t.frag.rows = static_cast<int>(rows);
    t.frag.cols = static_cast<int>(cols);
    int r = NewVar(t);
    Emit(OpCode::kWgmmaOperand, loc, r, {src, acc}).name = operand;
    return Val::Var(r, loc);
  }
  if (name == "wgmma") {
    RETURN_IF_ERROR(RequireKernel(loc, "wgmma()"));
    ASSIGN_OR_RETURN(auto a, args_of({"acc", "a", "b"}));
    ASSIGN_OR_RETURN(Val cv, Eval(*a[0]));
    ASSIGN_OR_RETURN(Val xv, Eval(*a[1]));
    ASSIGN_OR_RETURN(Val yv, Eval(*a[2]));
    ASSIGN_OR_RETURN(int acc, FragVar(cv, a[0]->loc, "accumulator"));
    ASSIGN_OR_RETURN(int fa, FragVar(xv, a[1]->loc, "A operand"));
    ASSIGN_OR_RETURN(int fb, FragVar(yv, a[2]->loc, "B operand"));
    const ir::FragType c = TypeOf(acc).frag, x = TypeOf(fa).frag, y = TypeOf(fb).frag;
    if (c.role != FragRole::kAcc || !c.mma->wgmma)
      return Err(a[0]->loc, "first argument must be a wgmma accumulator",
                 "mma=\"wgmma_m64nNk16_bf16\" fragments go to wgmma(); others to mma()");
    if (x.role != FragRole::kA || !x.mma || !x.mma->wgmma)
      return Err(a[1]->loc,
                 "second argument must be wgmma_operand(..., operand=\"A\") or to_operand(p, acc)",
                 "make it with wgmma_operand, or from a wgmma accumulator with to_operand");
    if (y.role != FragRole::kB || !y.is_desc())
      return Err(a[2]->loc, "third argument must be wgmma_operand(..., operand=\"B\")",
                 "make it with wgmma_operand");
    if ((x.mma != c.mma && !(x.regs && x.mma->ab == c.mma->ab)) || y.mma != c.mma || x.bm != c.bm ||
        x.bn != c.bn || y.bm != c.bm || y.bn != c.bn || x.wm != c.wm || y.wm != c.wm ||
        x.first != c.first)
      return Err(loc, "operands were made for a different accumulator",
                 "make them with this accumulator");
    if (x.cols != y.rows)
      return Err(loc,
                 absl::StrCat("K extents differ: A is ", x.rows, "x", x.cols, ", B is ", y.rows,
                              "x", y.cols),
                 "use the same BK for both");
    Emit(OpCode::kWgmma, loc, -1, {acc, fa, fb});
    return Val::None(loc);
  }
  if (name == "wgmma_commit") {
    RETURN_IF_ERROR(RequireKernel(loc, "wgmma_commit()"));
    RETURN_IF_ERROR(RequireHopper(loc, name));
    RETURN_IF_ERROR(args_of({}).status());
    Emit(OpCode::kWgmmaCommit, loc);
    return Val::None(loc);
  }
  if (name == "wgmma_wait") {
    RETURN_IF_ERROR(RequireKernel(loc, "wgmma_wait()"));
    RETURN_IF_ERROR(RequireHopper(loc, name));
    ASSIGN_OR_RETURN(auto a, args_of({"n"}));
    ASSIGN_OR_RETURN(int64_t n, ConstInt(*a[0], "wgmma_wait count"));
    if (n < 0 || n > 7)
      return Err(a[0]->loc, "wgmma_wait count must be 0..7", "use a small constant");
    Emit(OpCode::kWgmmaWait, loc).ints = {n};
    return Val::None(loc);
  }
  if (name == "store") {
    RETURN_IF_ERROR(RequireKernel(loc, "store()"));
    ASSIGN_OR_RETURN(auto a, args_of({"acc", "dst", "at?"}));
    ASSIGN_OR_RETURN(Val cv, Eval(*a[0]));
    ASSIGN_OR_RETURN(Val dv, Eval(*a[1]));
    ASSIGN_OR_RETURN(int acc, FragVar(cv, a[0]->loc, "stored fragment"));
    ASSIGN_OR_RETURN(int dst, ViewVar(dv, a[1]->loc, "store destination"));
    const ir::FragType& c = TypeOf(acc).frag;
    const Type& dt = TypeOf(dst);
    if (c.role != FragRole::kAcc)
      return Err(a[0]->loc, "store() writes accumulators", "store the fragment(...) result");
    if (a[2]) return StoreFragmentPart(acc, dst, *a[1], *a[2], loc);
    if (dt.rank() != 2 || dt.shape[0] != c.bm || dt.shape[1] != c.bn) {
      return Err(a[1]->loc,
                 absl::StrCat("store destination is ", dt.ToString(), ", the accumulator is ", c.bm,
                              "x", c.bn),
                 "tile the destination: C.tile((BM, BN), (bm, bn))");
    }
    Emit(OpCode::kStoreFragment, loc, -1, {acc, dst});
    return Val::None(loc);
  }
  if (name == "shfl_xor" || name == "shfl_down" || name == "shfl_idx") {
    ASSIGN_OR_RETURN(auto a, args_of({"x", name == "shfl_xor"    ? "mask"
                                           : name == "shfl_down" ? "delta"
                                                                 : "lane"}));
    ASSIGN_OR_RETURN(Val x, Eval(*a[0]));
    ASSIGN_OR_RETURN(Val y, Eval(*a[1]));
    ASSIGN_OR_RETURN(int vx, ScalarVar(x, x.loc, "shuffled value"));
    ASSIGN_OR_RETURN(int vy, Coerce(y, DType::kI32, y.loc, "lane argument"));
    int r = NewVar(TypeOf(vx));
    Emit(OpCode::kShfl, loc, r, {vx, vy}).sub =
        static_cast<uint8_t>(name == "shfl_xor"    ? ir::ShflKind::kXor
                             : name == "shfl_down" ? ir::ShflKind::kDown
                                                   : ir::ShflKind::kIdx);
    return Val::Var(r, loc);
  }
  if (name == "warp_reduce_sum" || name == "warp_reduce_max" || name == "block_reduce_sum" ||
      name == "block_reduce_max") {
    ASSIGN_OR_RETURN(Val x, one_scalar());
    ASSIGN_OR_RETURN(int vx, ScalarVar(x, x.loc, "reduced value"));
    if (TypeOf(vx).dtype == DType::kBool)
      return Err(x.loc, "cannot reduce a bool", "convert with i32(x)");
    int r = NewVar(TypeOf(vx));
    bool block = name[0] == 'b';
    Emit(block ? OpCode::kBlockReduce : OpCode::kWarpReduce, loc, r, {vx}).sub =
        static_cast<uint8_t>(name.back() == 'm' ? ir::ReduceKind::kSum : ir::ReduceKind::kMax);
    return Val::Var(r, loc);
  }
  if (name == "buffer_load") {
    RETURN_IF_ERROR(RequireKernel(loc, "buffer_load()"));
    if (e.args.size() < 2 || !e.kwargs.empty())
      return Err(loc, "buffer_load(view, i, ...) takes a view and one index per dim",
                 "write buffer_load(X, i)");
    ASSIGN_OR_RETURN(Val vv, Eval(*e.args[1]));
    ASSIGN_OR_RETURN(int view, ViewVar(vv, e.args[1]->loc, "buffer_load source"));
    const Type& vt = TypeOf(view);
    if (vt.space != Space::kGlobal)
      return Err(e.args[1]->loc, "buffer_load reads global memory",
                 "index shared/local views directly");
    if (static_cast<int>(e.args.size()) - 2 != vt.rank()) {
      return Err(loc,
                 absl::StrCat("buffer_load needs ", vt.rank(), " indices, got ", e.args.size() - 2),
                 "index every dim");
    }
    std::vector<int> ops = {view};
    for (size_t i = 2; i < e.args.size(); ++i) {
      ASSIGN_OR_RETURN(Val x, Eval(*e.args[i]));
      ASSIGN_OR_RETURN(int v, AsIndex(x, e.args[i]->loc, "index"));
      ops.push_back(v);
    }
    int r = NewVar(Type::Scalar(vt.dtype));
    Emit(OpCode::kBufferLoad, loc, r, ops);
    return Val::Var(r, loc);
  }
  if (name == "s_waitcnt" || name == "sched_group_barrier" || name == "s_setprio") {
    std::vector<int64_t> ints;
    if (name == "s_waitcnt") {
      ASSIGN_OR_RETURN(auto a, args_of({"vmcnt?", "lgkmcnt?"}));
      for (const Expr* x : a) {
        if (!x) {
          ints.push_back(-1);
          continue;
        }
        ASSIGN_OR_RETURN(int64_t v, ConstInt(*x, "s_waitcnt count"));
        if (v < 0 || v > 63)
          return Err(x->loc, "s_waitcnt counts are 0..63", "use a small constant");
        ints.push_back(v);
      }
    } else {
      ASSIGN_OR_RETURN(auto a, name == "s_setprio" ? args_of({"priority"})
                                                   : args_of({"mask", "size", "syncid"}));
      for (const Expr* x : a) {
        ASSIGN_OR_RETURN(int64_t v, ConstInt(*x, "hint argument"));
        if (v < 0 || v > 0xffff)
          return Err(x->loc, "hint arguments are 0..65535", "use a small constant");
        ints.push_back(v);
      }
      if (name == "s_setprio" && ints[0] > 3)
        return Err(a[0]->loc, "s_setprio priority is 0..3", "use 0..3");
    }
    if (f_->arch != "gfx942") {
      return Err(loc, absl::StrCat(name, " is an AMD instruction; this kernel targets ", f_->arch),
                 "pin the kernel with arch=\"gfx942\"");
    }
    ir::Op& op = Emit(OpCode::kHint, loc);
    op.name = name;
    op.ints = ints;
    return Val::None(loc);
  }
  if (name == "tag" || name == "assert_tag" || name == "assert_tag_eq" || name == "reset_tags") {
    RETURN_IF_ERROR(RequireKernel(loc, absl::StrCat(name, "()")));
    auto rank_of = [&](int v) { return TypeOf(v).is_frag() ? 2 : TypeOf(v).rank(); };
    auto tagged = [&](const Expr& x, const char* what) -> absl::StatusOr<int> {
      ASSIGN_OR_RETURN(Val v, Eval(x));
      if (v.k == Val::K::kVar && (TypeOf(v.var).is_view() || TypeOf(v.var).is_frag())) return v.var;
      return Err(x.loc, absl::StrCat(what, " must be a view or a fragment, found ", KindName(v)),
                 "tag memory or fragments");
    };
    ir::Op op;
    op.loc = loc;
    if (name == "reset_tags") {
      ASSIGN_OR_RETURN(auto a, args_of({"buf"}));
      ASSIGN_OR_RETURN(int b, tagged(*a[0], "reset_tags() argument"));
      op.code = OpCode::kResetTags;
      op.operands = {b};
    } else if (name == "assert_tag_eq") {
      ASSIGN_OR_RETURN(auto a, args_of({"a", "b"}));
      ASSIGN_OR_RETURN(int x, tagged(*a[0], "assert_tag_eq() argument"));
      ASSIGN_OR_RETURN(int y, tagged(*a[1], "assert_tag_eq() argument"));
      auto shape_of = [&](int v) {
        const Type& t = TypeOf(v);
        return t.is_frag() ? std::vector<int64_t>{t.frag.rows, t.frag.cols} : t.shape;
      };
      if (shape_of(x) != shape_of(y))
        return Err(loc, "assert_tag_eq() arguments differ in shape", "compare values of one shape");
      op.code = OpCode::kAssertTagEq;
      op.operands = {x, y};
    } else {
      ASSIGN_OR_RETURN(
          auto a, name == "tag" ? args_of({"buf", "fn", "name"}) : args_of({"x", "fn", "name?"}));
      ASSIGN_OR_RETURN(int x, tagged(*a[0], absl::StrCat(name, "() target").c_str()));
      if (name == "tag" && !TypeOf(x).is_view())
        return Err(a[0]->loc, "tag() binds tags to memory views", "tag a buffer");
      op.code = name == "tag" ? OpCode::kTag : OpCode::kAssertTag;
      op.operands = {x};
      if (a[2]) {
        ASSIGN_OR_RETURN(op.name, ConstStr(*a[2], "tag name"));
      }
      if (a[2] && op.name.empty())
        return Err(a[2]->loc, "tag name must not be empty", "name the tag, e.g. \"stage\"");
      int tensor = -1;
      RETURN_IF_ERROR(
          LowerLambda(*a[1], rank_of(x), loc, &op, op.name.empty() ? 0 : -1, &tensor).status());
      if (tensor >= 0) op.ints = {tensor};
    }
    cur_->push_back(std::move(op));
    return Val::None(loc);
  }
  return Err(loc, absl::StrCat("unknown function '", name, "'"),
             "see docs/dsl.md for the builtins");
}

// ---- statements -----------------------------------------------------------------

absl::StatusOr<FnLowering::TmaTile> FnLowering::TmaTensorTile(const Expr& se, const char* what,
                                                              const char* hint) {
  TmaTile tt;
  if (se.kind == ExprKind::kCall && !se.args.empty() && se.args[0]->kind == ExprKind::kAttr &&
      se.args[0]->name == "tile" && se.args[0]->args.size() == 1 &&
      se.args[0]->args[0]->kind == ExprKind::kName) {
    for (size_t i = 0; i < f_->tensors.size(); ++i) {
      if (f_->tensors[i].name == se.args[0]->args[0]->name) tt.tensor = static_cast<int>(i);
    }
  }
  if (tt.tensor < 0)
    return Err(se.loc,
               absl::StrCat(what, " must be T.tile((rows, cols), (i, j)) of a tensor parameter"),
               hint);
  ASSIGN_OR_RETURN(Val sv, Eval(se));
  ASSIGN_OR_RETURN(tt.view, ViewVar(sv, se.loc, what));
  // The tile op just emitted holds [tensor, i, j] and the box shape.
  const ir::Op* tile = nullptr;
  for (auto it = cur_->rbegin(); it != cur_->rend(); ++it) {
    if (it->result == tt.view) {
      tile = &*it;
      break;
    }
  }
  const Type st = TypeOf(tt.view);
  if (!tile || tile->code != OpCode::kTile || tile->operands.size() != 3 || st.rank() != 2)
    return Err(se.loc, "a TMA copies 2-D tiles of a rank-2 tensor",
               "write T.tile((rows, cols), (i, j))");
  if (st.shape[0] > 256 || st.shape[1] > 256)
    return Err(se.loc, absl::StrCat("a TMA box is at most 256 per dim, got ", st.ToString()),
               "split the tile into several TMAs");
  tt.coord0 = tile->operands[1];
  tt.coord1 = tile->operands[2];
  tt.box0 = st.shape[0];
  tt.box1 = st.shape[1];
  return tt;
}

absl::Status FnLowering::TmaSharedSide(const TmaTile& tt, int view, Loc loc, const char* what,
                                       const char* hint) {
  const Type st = TypeOf(tt.view), dt = TypeOf(view);
  if (dt.space != Space::kShared || dt.rank() != 2 || dt.shape != st.shape ||
      dt.dtype != st.dtype) {
    return Err(
        loc,
        absl::StrCat(what, " must be a shared ", st.ToString(), " view, found ", dt.ToString()),
        hint);
  }
  return absl::OkStatus();
}

absl::StatusOr<std::optional<Val>> FnLowering::EpilogueBuiltin(const std::string& name,
                                                               const Expr& e) {
  Loc loc = e.loc;
  if (name == "tma_store") {
    RETURN_IF_ERROR(RequireKernel(loc, "tma_store()"));
    RETURN_IF_ERROR(RequireHopper(loc, name));
    ASSIGN_OR_RETURN(auto a, BindArgs(e, name, {"src", "dst", "reduce?"}));
    // reduce="add": the copy engine adds the tile into the destination
    // (cp.reduce.async.bulk.tensor ... .add), for f32 partial sums (split-K).
    uint8_t reduce = 0;
    if (a[2]) {
      ASSIGN_OR_RETURN(std::string r, ConstStr(*a[2], "reduce="));
      if (r != "add")
        return Err(a[2]->loc, absl::StrCat("unknown tma_store reduction '", r, "'"),
                   "the one reduction is reduce=\"add\" (f32 partial sums)");
      reduce = 1;
    }
    ASSIGN_OR_RETURN(Val sv, Eval(*a[0]));
    ASSIGN_OR_RETURN(int src, ViewVar(sv, a[0]->loc, "tma_store source"));
    ASSIGN_OR_RETURN(TmaTile tt, TmaTensorTile(*a[1], "tma_store's destination",
                                               "write tma_store(sC[b], C.tile((64, 32), (i, j)))"));
    RETURN_IF_ERROR(
        TmaSharedSide(tt, src, a[0]->loc, "tma_store source", "store the sub-tile first"));
    if (reduce && TypeOf(tt.view).dtype != DType::kF32)
      return Err(a[1]->loc,
                 absl::StrCat("tma_store(reduce=\"add\") adds into f32 tensors only, found ",
                              TypeOf(tt.view).ToString()),
                 "accumulate partial sums in an f32 output (cast afterwards)");
    ir::Op& op = Emit(OpCode::kTmaStore, loc, -1, {src, tt.view, tt.coord0, tt.coord1});
    op.sub = reduce;
    op.ints = {tt.tensor, tt.box0, tt.box1};
    return Val::None(loc);
  }
  if (name == "tma_store_commit" || name == "warpgroup_barrier") {
    RETURN_IF_ERROR(RequireKernel(loc, absl::StrCat(name, "()")));
    RETURN_IF_ERROR(RequireHopper(loc, name));
    RETURN_IF_ERROR(BindArgs(e, name, {}).status());
    if (name == "warpgroup_barrier" && f_->threads % 128 != 0)
      return Err(loc,
                 absl::StrCat("warpgroup_barrier() needs whole warp groups: threads=", f_->threads,
                              " is not a multiple of 128"),
                 "launch 128, 256, 384, ... threads");
    Emit(name == "tma_store_commit" ? OpCode::kTmaStoreCommit : OpCode::kWarpgroupBarrier, loc);
    return Val::None(loc);
  }
  if (name == "named_barrier_sync" || name == "named_barrier_arrive") {
    RETURN_IF_ERROR(RequireKernel(loc, absl::StrCat(name, "()")));
    RETURN_IF_ERROR(RequireHopper(loc, name));
    ASSIGN_OR_RETURN(auto a, BindArgs(e, name, {"id", "threads"}));
    ASSIGN_OR_RETURN(Val idv, Eval(*a[0]));
    if (idv.k == Val::K::kInt && (idv.i < 1 || idv.i > 15))
      return Err(a[0]->loc, absl::StrCat("named barrier ids are 1..15, got ", idv.i),
                 "0 is barrier()'s; warpgroup_barrier() takes 1 + warpgroup_id()");
    ASSIGN_OR_RETURN(int id, Coerce(idv, DType::kI32, idv.loc, "barrier id"));
    ASSIGN_OR_RETURN(int64_t n, ConstInt(*a[1], "named barrier thread count"));
    if (n < 32 || n % 32 != 0 || n > f_->threads)
      return Err(a[1]->loc,
                 absl::StrCat("a named barrier counts whole warps: threads must be a multiple of "
                              "32 in 32..",
                              f_->threads, ", got ", n),
                 "count every thread that syncs or arrives, e.g. 256 for two warp groups");
    Emit(OpCode::kNamedBarrier, loc, -1, {id}).ints = {n, name == "named_barrier_sync" ? 1 : 0};
    return Val::None(loc);
  }
  if (name == "tma_store_wait") {
    RETURN_IF_ERROR(RequireKernel(loc, "tma_store_wait()"));
    RETURN_IF_ERROR(RequireHopper(loc, name));
    ASSIGN_OR_RETURN(auto a, BindArgs(e, name, {"n"}));
    ASSIGN_OR_RETURN(int64_t n, ConstInt(*a[0], "tma_store_wait count"));
    if (n < 0 || n > 63)
      return Err(a[0]->loc, absl::StrCat("tma_store_wait count must be 0..63, got ", n),
                 "the number of store groups left in flight, e.g. BUFS - 1");
    Emit(OpCode::kTmaStoreWait, loc).ints = {n};
    return Val::None(loc);
  }
  return std::optional<Val>();
}

absl::StatusOr<Val> FnLowering::StoreFragmentPart(int acc, int dst, const Expr& de, const Expr& at,
                                                  Loc loc) {
  const ir::FragType c = TypeOf(acc).frag;
  const Type dt = TypeOf(dst);
  if (!c.mma->wgmma)
    return Err(loc, "store(..., at=) takes a wgmma accumulator",
               "store whole mma.sync/MFMA accumulators");
  std::vector<int> part;
  if (dt.rank() != 2 || dt.shape[0] <= 0 || dt.shape[1] <= 0 ||
      !c.Geom().PartIndex(static_cast<int>(dt.shape[0]), static_cast<int>(dt.shape[1]), &part)) {
    return Err(de.loc,
               absl::StrCat("store destination ", dt.ToString(), " is not a sub-tile of the ", c.bm,
                            "x", c.bn, " accumulator aligned to its warp groups' ", c.bm / c.wm,
                            "x", c.bn / c.wn, " parts"),
               "rows a multiple of 64 dividing BM/WM, columns a multiple of 8 dividing BN/WN");
  }
  ASSIGN_OR_RETURN(Val av, Eval(at));
  if (av.k != Val::K::kTuple || av.elems.size() != 2)
    return Err(at.loc, "at= takes the sub-tile's (row, col) tile indices",
               "write at=(warpgroup_id() - 1, j)");
  std::vector<int> ops = {acc, dst};
  for (int d = 0; d < 2; ++d) {
    const Val& x = av.elems[d];
    int64_t n = (d == 0 ? c.bm : c.bn) / dt.shape[d];
    if (x.k == Val::K::kInt && (x.i < 0 || x.i >= n))
      return Err(at.loc, absl::StrCat("sub-tile index ", x.i, " is out of range 0..", n - 1),
                 "index the accumulator's sub-tiles");
    ASSIGN_OR_RETURN(int v, Coerce(x, DType::kI32, at.loc, "sub-tile index"));
    ops.push_back(v);
  }
  Emit(OpCode::kStoreFragment, loc, -1, ops);
  return Val::None(loc);
}

absl::Status FnLowering::Stmts(const std::vector<StmtPtr>& body) {
  for (const StmtPtr& s : body) RETURN_IF_ERROR(Statement(*s));
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
  auto it = env_.find(name);
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
  if (it == env_.end()) {
    if (v.k == Val::K::kVar && v.fresh && f_->vars[v.var].name.empty()) {
      f_->vars[v.var].name = name;
      env_[name] = Val::Var(v.var, loc, false);
      return absl::OkStatus();
    }
    int src;
    Type t;
    if (v.k == Val::K::kVar) {
      src = v.var;
      t = TypeOf(src);
    } else {
      ASSIGN_OR_RETURN(src, Materialize(v, loc));
      t = TypeOf(src);
    }
    int r = NewVar(t, name);
    Emit(OpCode::kMov, loc, r, {src});
    env_[name] = Val::Var(r, loc, false);
    return absl::OkStatus();
  }
  if (it->second.k != Val::K::kVar) {
    return Err(loc,
               absl::StrCat("'", name, "' is a compile-time ", KindName(it->second),
                            " and cannot be reassigned"),
               "use a new variable name");
  }
  int dst = it->second.var;
  const Type& dt = TypeOf(dst);
  int src;
  if (dt.is_scalar()) {
    ASSIGN_OR_RETURN(
        src, Coerce(v, dt.dtype, loc, absl::StrCat("value assigned to '", name, "'").c_str()));
  } else {
    if (v.k != Val::K::kVar || !(TypeOf(v.var) == dt)) {
      std::string found = v.k == Val::K::kVar ? TypeOf(v.var).ToString() : KindName(v);
      return Err(loc, absl::StrCat("'", name, "' is ", dt.ToString(), ", cannot assign ", found),
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

absl::Status FnLowering::Statement(const Stmt& s) {
  switch (s.kind) {
    case StmtKind::kPass:
      return absl::OkStatus();
    case StmtKind::kExpr: {
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
    case StmtKind::kReturn: {
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
  }
  return absl::OkStatus();
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
  ir::Block body;
  ir::Block* saved = cur_;
  cur_ = &body;
  loop_vars_.insert(name);
  absl::Status st = Stmts(s.body);
  loop_vars_.erase(name);
  cur_ = saved;
  RETURN_IF_ERROR(st);
  ir::Op op;
  op.code = OpCode::kFor;
  op.loc = s.loc;
  op.result = iv;
  op.operands = {vlo, vhi};
  op.ints = {step};
  op.regions.push_back(std::move(body));
  cur_->push_back(std::move(op));
  return absl::OkStatus();
}

absl::Status FnLowering::While(const Stmt& s) {
  ir::Block cond, body;
  ir::Block* saved = cur_;
  cur_ = &cond;
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
    cur_ = &body;
    absl::Status st = Stmts(s.body);
    if (!st.ok()) cv = st;
  }
  cur_ = saved;
  RETURN_IF_ERROR(cv.status());
  ir::Op op;
  op.code = OpCode::kWhile;
  op.loc = s.loc;
  op.operands = {*cv};
  op.regions.push_back(std::move(cond));
  op.regions.push_back(std::move(body));
  cur_->push_back(std::move(op));
  return absl::OkStatus();
}

absl::Status FnLowering::If(const Stmt& s) {
  ASSIGN_OR_RETURN(Val c, Eval(*s.value));
  ASSIGN_OR_RETURN(DType t, ScalarDType(c, c.loc, "if condition"));
  if (t != DType::kBool)
    return Err(c.loc, absl::StrCat("if condition must be bool, found ", DTypeName(t)),
               "compare explicitly, e.g. x != 0");
  if (c.is_const()) return Stmts(c.i ? s.body : s.orelse);  // static configuration
  ir::Block tb, eb;
  ir::Block* saved = cur_;
  cur_ = &tb;
  absl::Status st = Stmts(s.body);
  if (st.ok()) {
    cur_ = &eb;
    st = Stmts(s.orelse);
  }
  cur_ = saved;
  RETURN_IF_ERROR(st);
  ir::Op op;
  op.code = OpCode::kIf;
  op.loc = s.loc;
  op.operands = {c.var};
  op.regions.push_back(std::move(tb));
  op.regions.push_back(std::move(eb));
  cur_->push_back(std::move(op));
  return absl::OkStatus();
}

// ---- function headers -------------------------------------------------------------

absl::Status FnLowering::KernelHeader() {
  f_->is_kernel = true;
  const CheckOptions& opt = *m_->options;
  std::map<std::string, int> dim_index;
  auto dim = [&](const std::string& n, Loc loc) -> absl::StatusOr<int> {
    auto it = dim_index.find(n);
    if (it != dim_index.end()) return it->second;
    if (n.empty() || !(std::isalpha(static_cast<unsigned char>(n[0])) || n[0] == '_')) {
      return Err(loc, absl::StrCat("'", n, "' is not a valid dimension name"),
                 "name dims like identifiers: \"M\"");
    }
    for (char c : n) {
      if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) {
        return Err(loc, absl::StrCat("'", n, "' is not a valid dimension name"),
                   "name dims like identifiers: \"M\"");
      }
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
    dim_index[n] = idx;
    return idx;
  };
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
  for (int pass = 0; pass < 2; ++pass)
    for (const Param& p : def_.params) {
      const Expr& an = *p.annotation;
      bool is_const = an.kind == ExprKind::kName && an.name == "const";
      if (is_const != (pass == 0)) continue;
      if (env_.count(p.name))
        return Err(p.loc, absl::StrCat("parameter '", p.name, "' clashes with a dimension name"),
                   "rename one of them");
      if (is_const) {
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
          const std::string& text = ov->second;
          int64_t iv;
          double dv;
          bool want_float = p.default_value && v.k == Val::K::kFloat;
          bool want_bool = p.default_value && v.k == Val::K::kBool;
          if (want_bool) {
            if (text == "True" || text == "true" || text == "1")
              v = Val::Bool(true, p.loc);
            else if (text == "False" || text == "false" || text == "0")
              v = Val::Bool(false, p.loc);
            else
              return Err(p.loc,
                         absl::StrCat("--const ", p.name, "=", text, ": expected True or False"),
                         "pass a bool");
          } else if (!want_float && absl::SimpleAtoi(text, &iv)) {
            v = Val::Int(iv, p.loc);
          } else if (absl::SimpleAtod(text, &dv) && (want_float || !p.default_value)) {
            v = Val::Float(dv, p.loc);
          } else {
            return Err(p.loc,
                       absl::StrCat("--const ", p.name, "=", text, ": expected ",
                                    want_float ? "a number" : "an integer"),
                       "pass a value of the default's type");
          }
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
        int v = NewVar(Type::Scalar(*dt), p.name);
        f_->scalars.push_back(ir::ScalarParam{p.name, v, *dt});
        env_[p.name] = Val::Var(v, p.loc, false);
        readonly_.insert(p.name);
        continue;
      }
      if (an.kind != ExprKind::kSubscript || an.args[0]->kind != ExprKind::kName ||
          an.args[0]->name != "Tensor") {
        return Err(an.loc, "unsupported parameter annotation",
                   "use Tensor[dtype, dims...], const, or a scalar type");
      }
      if (an.args.size() < 3)
        return Err(an.loc, "Tensor[...] needs a dtype and at least one dim",
                   "write Tensor[f32, \"N\"]");
      const Expr& dte = *an.args[1];
      std::optional<DType> dt =
          dte.kind == ExprKind::kName ? DTypeFromName(dte.name) : std::nullopt;
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
      auto sym = [&](const Expr& x, bool allow_product) -> absl::StatusOr<ir::SymInt> {
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
            ASSIGN_OR_RETURN(int d, dim(part, x.loc));
            s.syms.push_back(d);
          }
          return s;
        }
        ASSIGN_OR_RETURN(Val v, Eval(x));
        if (v.k != Val::K::kInt || v.i <= 0)
          return Err(x.loc, "a tensor dim is a \"Name\" or a positive constant",
                     "write \"M\" or 64");
        s.coeff = v.i;
        return s;
      };
      for (const Expr* x : shape_items) {
        ASSIGN_OR_RETURN(ir::SymInt s, sym(*x, false));
        tp.shape.push_back(s);
      }
      if (explicit_stride) {
        for (const Expr* x : stride_items) {
          ASSIGN_OR_RETURN(ir::SymInt s, sym(*x, true));
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
    }
  // Decorator.
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
  std::string arch = opt.arch;
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

absl::Status FnLowering::Grid(const Stmt& s) {
  const Expr& call = *s.value;
  if (!call.kwargs.empty())
    return Err(call.kwargs[0].loc, "grid() takes positional arguments", "write grid(g0, g1)");
  size_t n = call.args.size() - 1;
  if (n < 1 || n > 3)
    return Err(call.loc, absl::StrCat("grid() takes 1 to 3 arguments, got ", n),
               "write grid(cdiv(M, BM), cdiv(N, BN))");
  cur_ = &f_->launch;
  in_launch_ = true;
  for (size_t i = 1; i <= n; ++i) {
    auto v = Eval(*call.args[i]);
    if (!v.ok()) {
      in_launch_ = false;
      return v.status();
    }
    if (v->k == Val::K::kInt && v->i <= 0) {
      in_launch_ = false;
      return Err(call.args[i]->loc, "grid extents must be positive", "launch at least one block");
    }
    auto g = Coerce(*v, DType::kI32, call.args[i]->loc, "grid extent");
    if (!g.ok()) {
      in_launch_ = false;
      return g.status();
    }
    f_->grid.push_back(*g);
  }
  in_launch_ = false;
  cur_ = &f_->body;
  return absl::OkStatus();
}

absl::Status FnLowering::Run() {
  f_->name = def_.name;
  f_->loc = def_.loc;
  CountAssigns(def_.body, false, &assigns_);
  cur_ = &f_->body;
  const Expr& dec = *def_.decorators[0];
  const std::string& dname = dec.kind == ExprKind::kCall ? dec.args[0]->name : dec.name;
  if (dname == "kernel") {
    RETURN_IF_ERROR(KernelHeader());
    size_t first = 0;
    if (def_.body.empty() || def_.body[0]->kind != StmtKind::kExpr ||
        def_.body[0]->value->kind != ExprKind::kCall ||
        def_.body[0]->value->args[0]->kind != ExprKind::kName ||
        def_.body[0]->value->args[0]->name != "grid") {
      return Err(def_.body.empty() ? def_.loc : def_.body[0]->loc,
                 "a kernel must start with grid(...)",
                 "write grid(cdiv(N, BLOCK)) as the first statement");
    }
    RETURN_IF_ERROR(Grid(*def_.body[0]));
    first = 1;
    for (size_t i = first; i < def_.body.size(); ++i) RETURN_IF_ERROR(Statement(*def_.body[i]));
  } else {
    RETURN_IF_ERROR(DeviceHeader());
    RETURN_IF_ERROR(Stmts(def_.body));
    if (f_->ret.is_scalar() && !EndsInReturn(def_.body)) {
      return Err(def_.loc,
                 absl::StrCat("device function '", def_.name, "' may end without returning a ",
                              f_->ret.ToString()),
                 "end every path with a return");
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<ir::Module> Check(std::shared_ptr<const SourceFile> src, const Module& ast,
                                 const CheckOptions& options) {
  ModuleCtx ctx;
  ctx.src = src;
  ctx.options = &options;
  ctx.out.source = src;
  for (const auto& [k, v] : options.consts) ctx.unused_consts[k] = v;
  if (!options.arch.empty() && options.arch != "sm_90a" && options.arch != "gfx942") {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown arch '", options.arch, "' (use sm_90a or gfx942)"));
  }
  std::set<std::string> names;
  bool any_kernel = false;
  for (const auto& fd : ast.funcs) {
    if (fd->decorators.size() != 1) {
      return ErrorAt(*src, fd->loc,
                     absl::StrCat("function '", fd->name,
                                  "' needs exactly one decorator, @kernel(...) or @device"),
                     "decorate it with @kernel(threads=N) or @device");
    }
    const Expr& dec = *fd->decorators[0];
    const Expr* dn = dec.kind == ExprKind::kCall ? dec.args[0].get() : &dec;
    if (dn->kind != ExprKind::kName || (dn->name != "kernel" && dn->name != "device")) {
      return ErrorAt(*src, dec.loc, "unknown decorator", "use @kernel(threads=N) or @device");
    }
    if (!names.insert(fd->name).second) {
      return ErrorAt(*src, fd->loc, absl::StrCat("function '", fd->name, "' defined twice"),
                     "rename one of them");
    }
    // Kernels are never called, so they may keep the names the fragment math
    // builtins took later (the KB's `row_sum` kernel predates row_sum()).
    static const std::set<std::string> kKernelMayUse = {"row_max",   "row_sum",  "row_index",
                                                        "col_index", "row_fill", "to_operand"};
    bool kernel_ok = dn->name == "kernel" && kKernelMayUse.count(fd->name);
    if ((Builtins().count(fd->name) && !kernel_ok) || DTypeFromName(fd->name)) {
      return ErrorAt(*src, fd->loc, absl::StrCat("'", fd->name, "' is a builtin name"),
                     "rename the function");
    }
    ir::Function f;
    FnLowering low(&ctx, *fd, &f);
    RETURN_IF_ERROR(low.Run());
    ctx.out.functions.push_back(std::move(f));
    if (dn->name == "device") {
      ctx.device_fns[fd->name] = static_cast<int>(ctx.out.functions.size()) - 1;
    } else {
      any_kernel = true;
    }
  }
  if (!any_kernel)
    return ErrorAt(*src, {1, 1}, "the file defines no @kernel",
                   "add a @kernel(threads=N) function");
  if (!ctx.unused_consts.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--const ", ctx.unused_consts.begin()->first,
                     ": no kernel has a const parameter of that name"));
  }
  return std::move(ctx.out);
}

absl::StatusOr<ir::Module> Compile(std::shared_ptr<const SourceFile> src,
                                   const CheckOptions& options) {
  ASSIGN_OR_RETURN(Module ast, Parse(*src));
  return Check(src, ast, options);
}

absl::StatusOr<ir::Module> CompileFile(const std::string& path, const CheckOptions& options) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read ", path));
  std::stringstream ss;
  ss << in.rdbuf();
  auto src = std::make_shared<SourceFile>(path, ss.str());
  return Compile(src, options);
}

}  // namespace argus::dsl
