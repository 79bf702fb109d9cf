// MMA fragment builtins: accumulators (fragment), operand loads
// (load_fragment, ldmatrix), mma.sync/MFMA (mma and the instructions' own
// names) and accumulator stores (store, store(..., at=)).
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status.h"
#include "dsl/sema/lowering.h"

namespace argus::dsl::sema {

using ir::OpCode;
using ir::Type;

absl::StatusOr<Val> FnLowering::Fragment(const BuiltinCall& c) {
  const auto& a = c.args;
  ASSIGN_OR_RETURN(Val dt, Eval(*a[0]));
  if (dt.k != Val::K::kDType) return Err(a[0]->loc, "dtype expected", "write f32");
  ASSIGN_OR_RETURN(std::vector<int64_t> shape, ConstShape(*a[1], "fragment shape"));
  if (shape.size() != 2)
    return Err(a[1]->loc, "fragment shape must be (BM, BN)", "give two extents");
  std::string kind;
  ASSIGN_OR_RETURN(const MmaInfo* mi, FragmentMma(c, dt.dt, shape, &kind));
  std::vector<int64_t> warps = {1, 1};
  int64_t first = 0;
  RETURN_IF_ERROR(FragmentWarps(c, mi, &warps, &first));
  if (shape[0] % (warps[0] * mi->m) != 0 || shape[1] % (warps[1] * mi->n) != 0) {
    return Err(a[1]->loc,
               absl::StrCat("fragment ", shape[0], "x", shape[1], " does not split into ", warps[0],
                            "x", warps[1], mi->wgmma ? " warp groups" : " warps", " of ", mi->m,
                            "x", mi->n, " tiles"),
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
  Emit(OpCode::kFragment, c.loc, r).name = kind;
  return Val::Var(r, c.loc);
}

absl::StatusOr<const MmaInfo*> FnLowering::FragmentMma(const BuiltinCall& c, DType dtype,
                                                       const std::vector<int64_t>& shape,
                                                       std::string* kind) {
  const auto& a = c.args;
  ASSIGN_OR_RETURN(*kind, ConstStr(*a[2], "mma="));
  if ((*kind == "wgmma_bf16" || *kind == "wgmma_f16") && a[4]) {
    // The widest instruction for the warp group's columns: N = BN / WN, or, past the widest
    // wgmma (256), the widest multiple of 64 that divides it (BN = 320: five n64 tiles), so
    // that each tile's B columns start on a 64-column (128-byte swizzle) block.
    ASSIGN_OR_RETURN(std::vector<int64_t> wg, ConstShape(*a[4], "warpgroups"));
    if (wg.size() == 2 && wg[1] > 0 && shape[1] % wg[1] == 0) {
      int64_t n = shape[1] / wg[1];
      for (int64_t w = 256; n > 256 && w >= 64; w -= 64) {
        if (n % w == 0) n = w;
      }
      *kind = absl::StrCat("wgmma_m64n", n, "k16_", kind->substr(6));
    }
  }
  const MmaInfo* mi = FindMma(*kind);
  if (!mi) {
    int n;
    const MmaInfo* all = AllMmas(&n);
    std::vector<std::string> names;
    for (int i = 0; i < n; ++i) {
      if (!all[i].wgmma) names.push_back(all[i].name);
    }
    names.push_back("wgmma_m64nNk16_bf16 / _f16 (N = 8..256, step 8)");
    return Err(a[2]->loc, absl::StrCat("unknown MMA instruction '", *kind, "'"),
               absl::StrCat("one of: ", absl::StrJoin(names, ", ")));
  }
  if (f_->arch != mi->arch) {
    return Err(
        a[2]->loc,
        absl::StrCat(*kind, " is a ", mi->arch, " instruction; this kernel targets ", f_->arch),
        f_->arch == "gfx942" ? "use mfma_f32_32x32x8_bf16 or mfma_f32_16x16x16_bf16"
                             : "use mma_sync_m16n8k16_bf16");
  }
  if (dtype != mi->acc)
    return Err(a[0]->loc, absl::StrCat(*kind, " accumulates in ", DTypeName(mi->acc)),
               absl::StrCat("write fragment(", DTypeName(mi->acc), ", ...)"));
  return mi;
}

// mma.sync/MFMA fragments spread over warps=(WM, WN) that fill the block;
// wgmma fragments over warpgroups=(WM, WN) from first_warpgroup on.
absl::Status FnLowering::FragmentWarps(const BuiltinCall& c, const MmaInfo* mi,
                                       std::vector<int64_t>* warps, int64_t* first) {
  const auto& a = c.args;
  if (mi->wgmma) {
    if (a[3])
      return Err(a[3]->loc, "wgmma fragments are spread over warp groups",
                 "write warpgroups=(WM, WN) instead of warps=");
    if (a[4]) {
      ASSIGN_OR_RETURN(*warps, ConstShape(*a[4], "warpgroups"));
      if (warps->size() != 2)
        return Err(a[4]->loc, "warpgroups must be (WM, WN)", "give two counts");
    }
    if (a[5]) {
      ASSIGN_OR_RETURN(*first, ConstInt(*a[5], "first_warpgroup"));
    }
    int64_t groups = (*warps)[0] * (*warps)[1];
    if (*first < 0 || (*first + groups) * 128 > f_->threads) {
      return Err(a[4] ? a[4]->loc : c.loc,
                 absl::StrCat("warp groups ", *first, "..", *first + groups - 1, " need ",
                              (*first + groups) * 128, " threads, the block has ", f_->threads),
                 "threads= must cover every warp group (128 threads each)");
    }
  } else if (a[4] || a[5]) {
    return Err(a[4] ? a[4]->loc : a[5]->loc, "warpgroups= is for wgmma fragments",
               "write warps=(WM, WN)");
  }
  if (a[3]) {
    ASSIGN_OR_RETURN(*warps, ConstShape(*a[3], "warps"));
    if (warps->size() != 2) return Err(a[3]->loc, "warps must be (WM, WN)", "give two counts");
  }
  int64_t threads = (*warps)[0] * (*warps)[1] * f_->warp_size;
  if (!mi->wgmma && threads != f_->threads) {
    return Err(a[3] ? a[3]->loc : c.loc,
               absl::StrCat("warps ", (*warps)[0], "x", (*warps)[1], " of ", f_->warp_size,
                            " lanes is ", threads, " threads, the block has ", f_->threads),
               "make WM * WN * warp size equal threads=");
  }
  return absl::OkStatus();
}

absl::StatusOr<FnLowering::OperandArgs> FnLowering::OperandSource(const BuiltinCall& c,
                                                                  const char* what) {
  const auto& a = c.args;
  ASSIGN_OR_RETURN(Val sv, Eval(*a[0]));
  ASSIGN_OR_RETURN(Val av, Eval(*a[1]));
  OperandArgs out;
  ASSIGN_OR_RETURN(out.src, ViewVar(sv, a[0]->loc, what));
  ASSIGN_OR_RETURN(out.acc, FragVar(av, a[1]->loc, "accumulator"));
  ASSIGN_OR_RETURN(out.operand, ConstStr(*a[2], "operand="));
  return out;
}

absl::StatusOr<Val> FnLowering::LoadFragment(const BuiltinCall& c) {
  const auto& a = c.args;
  ASSIGN_OR_RETURN(OperandArgs oa, OperandSource(c, "fragment source"));
  const int src = oa.src, acc = oa.acc;
  const std::string& operand = oa.operand;
  const Type st = TypeOf(src);
  Type at = TypeOf(acc);
  if (at.frag.role != FragRole::kAcc)
    return Err(a[1]->loc, "the second argument must be the accumulator fragment",
               "pass the fragment(...) result");
  const MmaInfo* mi = at.frag.mma;
  if (mi->wgmma)
    return Err(c.loc, "wgmma operands come from shared memory descriptors",
               "use wgmma_operand(src, acc, operand=...)");
  if (operand != "A" && operand != "B")
    return Err(a[2]->loc, absl::StrCat("operand must be \"A\" or \"B\", got \"", operand, "\""),
               "write operand=\"A\"");
  if (c.name == "ldmatrix") {
    if (f_->arch != "sm_90a")
      return Err(c.loc, "ldmatrix is an NVIDIA instruction", "use load_fragment");
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
               absl::StrCat(mi->name, " takes ", DTypeName(mi->ab), " operands, the source holds ",
                            DTypeName(st.dtype)),
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
    return Err(a[0]->loc,
               absl::StrCat("K extent ", kext, " is not a multiple of the instruction's K=", mi->k),
               "use BK a multiple of K");
  }
  int r = NewVar(t);
  Emit(OpCode::kLoadFragment, c.loc, r, {src, acc}).name = c.name;
  return Val::Var(r, c.loc);
}

absl::StatusOr<std::vector<int>> FnLowering::MmaOperands(const BuiltinCall& c) {
  const auto& a = c.args;
  ASSIGN_OR_RETURN(std::vector<Val> v, EvalAll(a));
  ASSIGN_OR_RETURN(int acc, FragVar(v[0], a[0]->loc, "accumulator"));
  ASSIGN_OR_RETURN(int fa, FragVar(v[1], a[1]->loc, "A operand"));
  ASSIGN_OR_RETURN(int fb, FragVar(v[2], a[2]->loc, "B operand"));
  return std::vector<int>{acc, fa, fb};
}

absl::StatusOr<Val> FnLowering::Mma(const BuiltinCall& c) {
  const auto& a = c.args;
  Loc loc = c.loc;
  ASSIGN_OR_RETURN(std::vector<int> ops, MmaOperands(c));
  const ir::FragType acc = TypeOf(ops[0]).frag, x = TypeOf(ops[1]).frag, y = TypeOf(ops[2]).frag;
  if (acc.role != FragRole::kAcc)
    return Err(a[0]->loc, "first argument must be an accumulator", "pass the fragment(...) result");
  if (x.role != FragRole::kA)
    return Err(a[1]->loc, "second argument must be an A operand fragment",
               "load it with operand=\"A\"");
  if (y.role != FragRole::kB)
    return Err(a[2]->loc, "third argument must be a B operand fragment",
               "load it with operand=\"B\"");
  if ((x.mma != acc.mma && !(x.regs && x.mma->ab == acc.mma->ab)) || y.mma != acc.mma ||
      x.bm != acc.bm || x.bn != acc.bn || y.bm != acc.bm || y.bn != acc.bn) {
    return Err(loc, "operands were loaded for a different accumulator",
               "load them with this accumulator");
  }
  if (x.cols != y.rows) {
    return Err(loc,
               absl::StrCat("K extents differ: A is ", x.rows, "x", x.cols, ", B is ", y.rows, "x",
                            y.cols),
               "load both with the same BK");
  }
  if (acc.mma->wgmma)
    return Err(loc, "wgmma accumulators are multiplied with wgmma(acc, a, b)",
               "use wgmma() with wgmma_operand() operands");
  if (c.name != "mma" && acc.mma->name != c.name) {
    return Err(loc, absl::StrCat(c.name, "() on fragments of ", acc.mma->name),
               absl::StrCat("call mma() or ", acc.mma->name, "()"));
  }
  Emit(OpCode::kMma, loc, -1, ops).name = c.name;
  return Val::None(loc);
}

absl::StatusOr<Val> FnLowering::Store(const BuiltinCall& c) {
  const auto& a = c.args;
  ASSIGN_OR_RETURN(Val cv, Eval(*a[0]));
  ASSIGN_OR_RETURN(Val dv, Eval(*a[1]));
  ASSIGN_OR_RETURN(int acc, FragVar(cv, a[0]->loc, "stored fragment"));
  ASSIGN_OR_RETURN(int dst, ViewVar(dv, a[1]->loc, "store destination"));
  const ir::FragType f = TypeOf(acc).frag;
  const Type dt = TypeOf(dst);
  if (f.role != FragRole::kAcc)
    return Err(a[0]->loc, "store() writes accumulators", "store the fragment(...) result");
  if (a[2]) return StoreFragmentPart(acc, dst, *a[1], *a[2], c.loc);
  if (dt.rank() != 2 || dt.shape[0] != f.bm || dt.shape[1] != f.bn) {
    return Err(a[1]->loc,
               absl::StrCat("store destination is ", dt.ToString(), ", the accumulator is ", f.bm,
                            "x", f.bn),
               "tile the destination: C.tile((BM, BN), (bm, bn))");
  }
  Emit(OpCode::kStoreFragment, c.loc, -1, {acc, dst});
  return Val::None(c.loc);
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

}  // namespace argus::dsl::sema
