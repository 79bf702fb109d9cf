// Hopper warp-group MMA builtins: shared-memory operand descriptors
// (wgmma_operand), the asynchronous wgmma, and its commit and wait.
#include "absl/strings/str_cat.h"
#include "base/status.h"
#include "dsl/sema/lowering.h"

namespace argus::dsl::sema {

using ir::OpCode;
using ir::Type;

// wgmma_operand(src, acc, operand="A"|"B"): a descriptor of a shared tile in
// the layout the instruction reads (128-byte rows, swizzled).
absl::StatusOr<Val> FnLowering::WgmmaOperand(const BuiltinCall& c) {
  const auto& a = c.args;
  ASSIGN_OR_RETURN(OperandArgs oa, OperandSource(c, "wgmma operand source"));
  const int src = oa.src, acc = oa.acc;
  const std::string& operand = oa.operand;
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
               absl::StrCat(mi->name, " takes ", DTypeName(mi->ab), " operands, the source holds ",
                            DTypeName(st.dtype)),
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
    return Err(a[0]->loc,
               absl::StrCat("K extent ", kext, " is not a multiple of the instruction's K=", mi->k),
               "use BK a multiple of 16");
  Type t = at;
  t.dtype = mi->ab;
  t.frag.role = is_a ? FragRole::kA : FragRole::kB;
  t.frag.rows = static_cast<int>(rows);
  t.frag.cols = static_cast<int>(cols);
  int r = NewVar(t);
  Emit(OpCode::kWgmmaOperand, c.loc, r, {src, acc}).name = operand;
  return Val::Var(r, c.loc);
}

absl::StatusOr<Val> FnLowering::Wgmma(const BuiltinCall& c) {
  const auto& a = c.args;
  ASSIGN_OR_RETURN(std::vector<int> ops, MmaOperands(c));
  const ir::FragType acc = TypeOf(ops[0]).frag, x = TypeOf(ops[1]).frag, y = TypeOf(ops[2]).frag;
  if (acc.role != FragRole::kAcc || !acc.mma->wgmma)
    return Err(a[0]->loc, "first argument must be a wgmma accumulator",
               "mma=\"wgmma_m64nNk16_bf16\" fragments go to wgmma(); others to mma()");
  if (x.role != FragRole::kA || !x.mma || !x.mma->wgmma)
    return Err(a[1]->loc,
               "second argument must be wgmma_operand(..., operand=\"A\") or to_operand(p, acc)",
               "make it with wgmma_operand, or from a wgmma accumulator with to_operand");
  if (y.role != FragRole::kB || !y.is_desc())
    return Err(a[2]->loc, "third argument must be wgmma_operand(..., operand=\"B\")",
               "make it with wgmma_operand");
  if ((x.mma != acc.mma && !(x.regs && x.mma->ab == acc.mma->ab)) || y.mma != acc.mma ||
      x.bm != acc.bm || x.bn != acc.bn || y.bm != acc.bm || y.bn != acc.bn || x.wm != acc.wm ||
      y.wm != acc.wm || x.first != acc.first)
    return Err(c.loc, "operands were made for a different accumulator",
               "make them with this accumulator");
  if (x.cols != y.rows)
    return Err(c.loc,
               absl::StrCat("K extents differ: A is ", x.rows, "x", x.cols, ", B is ", y.rows, "x",
                            y.cols),
               "use the same BK for both");
  Emit(OpCode::kWgmma, c.loc, -1, ops);
  return Val::None(c.loc);
}

absl::StatusOr<Val> FnLowering::WgmmaCommit(const BuiltinCall& c) {
  return EmitBare(OpCode::kWgmmaCommit, c.loc);
}

absl::StatusOr<Val> FnLowering::WgmmaWait(const BuiltinCall& c) {
  ASSIGN_OR_RETURN(int64_t n, ConstInt(*c.args[0], "wgmma_wait count"));
  if (n < 0 || n > 7)
    return Err(c.args[0]->loc, "wgmma_wait count must be 0..7", "use a small constant");
  Emit(OpCode::kWgmmaWait, c.loc).ints = {n};
  return Val::None(c.loc);
}

}  // namespace argus::dsl::sema
