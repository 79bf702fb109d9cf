// Fragment math (docs/dsl.md "Fragment math"): elementwise operations on
// accumulators and row vectors, fma, row reductions, row/column indices,
// row fills and the accumulator-to-A-operand conversion (to_operand).
#include "absl/strings/str_cat.h"
#include "base/status.h"
#include "dsl/sema/lowering.h"

namespace argus::dsl::sema {
namespace {

using ir::OpCode;
using ir::Type;

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

// The row vector of accumulator type `acc`: one value per row, held like the
// accumulator's rows.
Type RowType(Type acc, DType dt) {
  acc.dtype = dt;
  acc.frag.role = FragRole::kRow;
  acc.frag.cols = 1;
  acc.frag.bn = 0;
  return acc;
}

// Whether every element of A operand fragment `a` sits in the same lane as
// the element of accumulator `acc` with the same coordinates.
bool SameLanes(const ir::FragType& a, const ir::FragType& acc) {
  FragGeom ga = a.Geom(), gc = acc.Geom();
  for (int w = 0; w < ga.wm * ga.wn; ++w) {
    for (int l = 0; l < a.mma->warp_size; ++l) {
      for (int e = 0; e < ga.PerLane(); ++e) {
        int r0, c0;
        ga.Coord(w, l, e, &r0, &c0);
        bool found = false;
        for (int q = 0; q < gc.PerLane() && !found; ++q) {
          int r1, c1;
          gc.Coord(w, l, q, &r1, &c1);
          found = r1 == r0 && c1 == c0;
        }
        if (!found) return false;
      }
    }
  }
  return true;
}

}  // namespace

absl::StatusOr<int> FnLowering::FragEwShape(const std::vector<Val>& args, const std::string& what) {
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
  return shape;
}

absl::StatusOr<Val> FnLowering::FragEw(ir::FragEwOp op, const std::vector<Val>& args, Loc loc,
                                       const std::string& what) {
  ASSIGN_OR_RETURN(int shape, FragEwShape(args, what));
  const ir::FragType sf = TypeOf(shape).frag;
  bool any_float = false;
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
    }
  }
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

// a * b + c rounded once (fma.rn.f32): the scaled softmax exponent in one instruction.
absl::StatusOr<Val> FnLowering::Fma(const BuiltinCall& c) {
  ASSIGN_OR_RETURN(std::vector<Val> v, EvalAll(c.args));
  if (!IsFragVal(v[0]) && !IsFragVal(v[1]) && !IsFragVal(v[2]))
    return Err(c.loc, "fma() takes at least one fragment operand", "for scalars write a * b + c");
  return FragEw(ir::FragEwOp::kFma, v, c.loc, "fma()");
}

absl::StatusOr<int> FnLowering::RowAcc(const Val& v, const std::string& what) {
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
  return acc;
}

absl::StatusOr<int> FnLowering::RowAccArg(const BuiltinCall& c, Val* x) {
  ASSIGN_OR_RETURN(*x, Eval(*c.args[0]));
  return RowAcc(*x, absl::StrCat(c.name, "() argument"));
}

absl::StatusOr<Val> FnLowering::RowReduce(const BuiltinCall& c) {
  Val x;
  ASSIGN_OR_RETURN(int acc, RowAccArg(c, &x));
  const Type at = TypeOf(acc);
  if (at.dtype != DType::kF32)
    return Err(x.loc, absl::StrCat(c.name, "() of a ", DTypeName(at.dtype), " fragment"),
               "reduce f32 accumulators");
  int r = NewVar(RowType(at, DType::kF32));
  Emit(OpCode::kFragRowReduce, c.loc, r, {acc}).sub =
      static_cast<uint8_t>(c.name == "row_max" ? ir::ReduceKind::kMax : ir::ReduceKind::kSum);
  return Val::Var(r, c.loc);
}

absl::StatusOr<Val> FnLowering::RowCoord(const BuiltinCall& c) {
  Val x;
  ASSIGN_OR_RETURN(int acc, RowAccArg(c, &x));
  Type t = TypeOf(acc);
  t.dtype = DType::kI32;
  int r = NewVar(t);
  Emit(OpCode::kFragCoord, c.loc, r, {acc}).ints = {c.name == "row_index" ? 0 : 1};
  return Val::Var(r, c.loc);
}

absl::StatusOr<Val> FnLowering::RowFill(const BuiltinCall& c) {
  Val x;
  ASSIGN_OR_RETURN(int acc, RowAccArg(c, &x));
  ASSIGN_OR_RETURN(Val y, Eval(*c.args[1]));
  ASSIGN_OR_RETURN(int v, Coerce(y, DType::kF32, y.loc, "row_fill value"));
  int r = NewVar(RowType(TypeOf(acc), DType::kF32));
  Emit(OpCode::kFragRowFill, c.loc, r, {acc, v});
  return Val::Var(r, c.loc);
}

// to_operand(p, o): p as the A operand of mma(o, p', b).
absl::StatusOr<Val> FnLowering::ToOperand(const BuiltinCall& c) {
  Loc loc = c.loc;
  Val x;
  ASSIGN_OR_RETURN(int acc, RowAccArg(c, &x));
  const Type at = TypeOf(acc);
  ASSIGN_OR_RETURN(Val y, Eval(*c.args[1]));
  ASSIGN_OR_RETURN(int o, RowAcc(y, "to_operand() target accumulator"));
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
  if (!SameLanes(t.frag, at.frag)) {
    return Err(loc,
               absl::StrCat("to_operand(): on ", mi->name,
                            " the accumulator layout is not the A operand layout"),
               "store the accumulator to shared memory and load_fragment it");
  }
  int r = NewVar(t);
  Emit(OpCode::kToOperand, loc, r, {acc}).name = DTypeName(mi->ab);
  return Val::Var(r, loc);
}

}  // namespace argus::dsl::sema
