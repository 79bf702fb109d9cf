// kMma: the warp's tile of C += A * B as mma.sync.m16n8k16 (sm_90a) or
// mfma 32x32x8 / 16x16x16 (gfx942) instructions, tile-major with K innermost
// (the interpreter's order).
#include "codegen/emit/emitter.h"
#include "llvm/IR/IntrinsicsAMDGPU.h"
#include "llvm/IR/IntrinsicsNVPTX.h"

namespace argus::codegen::emit {

absl::Status Emitter::Mma(const ir::Op& op) {
  int cv = op.operands[0], av = op.operands[1], bv = op.operands[2];
  dsl::FragGeom gc = VT(cv).frag.Geom(), ga = VT(av).frag.Geom();
  const dsl::MmaInfo& mi = *gc.mma;
  int TM = gc.TilesM(), TN = gc.TilesN(), TK = ga.TilesK();
  auto vec16 = [&](int v, int e, int n) {
    Value* x = llvm::UndefValue::get(llvm::FixedVectorType::get(b_.getInt16Ty(), n));
    for (int i = 0; i < n; ++i) x = b_.CreateInsertElement(x, FragGet(v, e + i), uint64_t(i));
    return x;
  };
  for (int tm = 0; tm < TM; ++tm) {
    for (int tn = 0; tn < TN; ++tn) {
      int ce = (tm * TN + tn) * mi.regs_c;
      for (int tk = 0; tk < TK; ++tk) {
        int ae = (tm * TK + tk) * mi.regs_a, be = (tk * TN + tn) * mi.regs_b;
        if (!amd_) {
          std::vector<Value*> args;
          bool f16 = mi.ab == DType::kF16;
          auto h2 = [&](Value* w) {
            return f16 ? b_.CreateBitCast(w, llvm::FixedVectorType::get(b_.getHalfTy(), 2)) : w;
          };
          for (int j = 0; j < 4; ++j) args.push_back(h2(PackPair(av, ae + 2 * j)));
          for (int j = 0; j < 2; ++j) args.push_back(h2(PackPair(bv, be + 2 * j)));
          for (int j = 0; j < 4; ++j) args.push_back(FragGet(cv, ce + j));
          Value* d = Call(
              f16 ? I::nvvm_mma_m16n8k16_row_col_f32_f32 : I::nvvm_mma_m16n8k16_row_col_bf16, args);
          for (int j = 0; j < 4; ++j) FragSet(cv, ce + j, b_.CreateExtractValue(d, j));
          continue;
        }
        Value* c = llvm::UndefValue::get(llvm::FixedVectorType::get(b_.getFloatTy(), mi.regs_c));
        for (int j = 0; j < mi.regs_c; ++j)
          c = b_.CreateInsertElement(c, FragGet(cv, ce + j), uint64_t(j));
        I::ID id =
            mi.m == 32 ? I::amdgcn_mfma_f32_32x32x8bf16_1k : I::amdgcn_mfma_f32_16x16x16bf16_1k;
        Value* d = Call(id, {vec16(av, ae, 4), vec16(bv, be, 4), c, C32(0), C32(0), C32(0)});
        for (int j = 0; j < mi.regs_c; ++j)
          FragSet(cv, ce + j, b_.CreateExtractElement(d, uint64_t(j)));
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace argus::codegen::emit
