// Views: subscripts (element loads and stores, slices, dropped dims), view
// attributes (.T, .shape, .dtype) and methods (.tile(), .reshape()).
#include "absl/strings/str_cat.h"
#include "base/status.h"
#include "dsl/sema/lowering.h"

namespace argus::dsl::sema {
namespace {

using ir::OpCode;
using ir::Type;

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

}  // namespace

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
  if (!all_int) {
    if (store_value) {
      return Err(e.loc, "assignment to a sub-view",
                 "copy(src, dst, thread_layout(...)) copies tiles; v[i, j] = x stores one element");
    }
    return SubView(view, e);
  }
  std::vector<int> ops = {view};
  for (size_t i = 1; i < e.args.size(); ++i) {
    ASSIGN_OR_RETURN(Val x, Eval(*e.args[i]));
    if (x.k == Val::K::kInt && vt.shape[i - 1] >= 0 && (x.i < 0 || x.i >= vt.shape[i - 1])) {
      return Err(e.args[i]->loc,
                 absl::StrCat("index ", x.i, " out of bounds for dim ", i - 1, " of extent ",
                              vt.shape[i - 1]),
                 "index within the view's shape");
    }
    ASSIGN_OR_RETURN(int v, AsIndex(x, e.args[i]->loc, "index"));
    ops.push_back(v);
  }
  if (store_value) {
    ASSIGN_OR_RETURN(int val, Coerce(*store_value, vt.dtype, store_value->loc, "stored value"));
    ops.insert(ops.begin() + 1, val);
    Emit(OpCode::kStore, e.loc, -1, ops);
    return Val::None(e.loc);
  }
  int r = NewVar(Type::Scalar(vt.dtype));
  Emit(OpCode::kLoad, e.loc, r, ops);
  return Val::Var(r, e.loc);
}

// Slices first (dims keep their positions), then drop indexed dims from the back.
absl::StatusOr<Val> FnLowering::SubView(int view, const Expr& e) {
  int cur = view;
  std::vector<std::pair<int, int>> drops;  // (dim, index var)
  for (size_t i = 1; i < e.args.size(); ++i) {
    int d = static_cast<int>(i) - 1;
    const Expr& ix = *e.args[i];
    if (ix.kind == ExprKind::kSlice) {
      ASSIGN_OR_RETURN(cur, SliceDim(cur, d, ix));
      continue;
    }
    Type ct = TypeOf(cur);
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
  for (auto it = drops.rbegin(); it != drops.rend(); ++it) {
    Type nt = TypeOf(cur);
    nt.shape.erase(nt.shape.begin() + it->first);
    int r = NewVar(nt);
    Emit(OpCode::kIndex, e.loc, r, {cur, it->second}).ints = {it->first};
    cur = r;
  }
  return Val::Var(cur, e.loc);
}

absl::StatusOr<int> FnLowering::SliceDim(int view, int d, const Expr& ix) {
  Type ct = TypeOf(view);
  int64_t step = 1;
  if (ix.args[2]) {
    ASSIGN_OR_RETURN(step, ConstInt(*ix.args[2], "slice step"));
    if (step <= 0)
      return Err(ix.args[2]->loc, "slice step must be positive", "use a positive constant step");
  }
  if (!ix.args[0] && !ix.args[1] && step == 1) return view;
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
    Emit(OpCode::kExtent, ix.loc, x, {view}).ints = {d};
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
                   absl::StrCat("slice of ", n.i, " elements does not fit dim ", d, " of extent ",
                                ct.shape[d]),
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
  Emit(OpCode::kSlice, ix.loc, r, {view, vlo, vhi}).ints = {d, step};
  return r;
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
      Val t = Val::Object(Val::K::kTuple, e.loc);
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
      Val v = Val::Object(Val::K::kDType, e.loc);
      v.dt = vt.dtype;
      return v;
    }
    if (e.name == "tile" || e.name == "reshape") {
      return Err(e.loc, absl::StrCat("method '", e.name, "' must be called"),
                 absl::StrCat("write v.", e.name, "(...)"));
    }
  }
  return Err(e.loc, absl::StrCat(KindName(base), " has no attribute '", e.name, "'"),
             "views have .tile(), .reshape(), .T, .shape, .dtype");
}

absl::StatusOr<Val> FnLowering::Method(const Val& recv, const std::string& name, const Expr& e) {
  ASSIGN_OR_RETURN(
      int view, ViewVar(recv, e.args[0]->loc, absl::StrCat("receiver of .", name, "()").c_str()));
  if (name == "tile") return TileMethod(view, e);
  if (name == "reshape") return ReshapeMethod(view, e);
  return Err(e.loc, absl::StrCat("views have no method '", name, "'"),
             "views have .tile(), .reshape(), .T, .shape");
}

absl::StatusOr<Val> FnLowering::TileMethod(int view, const Expr& e) {
  Type vt = TypeOf(view);
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

absl::StatusOr<Val> FnLowering::ReshapeMethod(int view, const Expr& e) {
  Type vt = TypeOf(view);
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

}  // namespace argus::dsl::sema
