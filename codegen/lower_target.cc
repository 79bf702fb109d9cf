// The NVPTX and AMDGPU implementations of TargetOps (lower_internal.h).
#include "codegen/lower_internal.h"
#include "llvm/IR/IntrinsicsAMDGPU.h"
#include "llvm/IR/IntrinsicsNVPTX.h"
#include "llvm/IR/Module.h"

namespace argus::codegen {

using llvm::IRBuilder;
using llvm::Value;
namespace I = llvm::Intrinsic;

Value* TargetOps::Call(IRBuilder<>& b, llvm::Intrinsic::ID id, llvm::ArrayRef<Value*> args,
                       llvm::ArrayRef<llvm::Type*> types) {
  return b.CreateCall(I::getDeclaration(m_, id, types), args);
}

namespace {

class NvptxOps : public TargetOps {
 public:
  explicit NvptxOps(llvm::Module* m) { m_ = m; }
  bool is_amd() const override { return false; }
  int hw_warp() const override { return 32; }
  Value* ThreadId(IRBuilder<>& b) override { return Call(b, I::nvvm_read_ptx_sreg_tid_x, {}); }
  Value* BlockId(IRBuilder<>& b, int d) override {
    static const I::ID ids[] = {I::nvvm_read_ptx_sreg_ctaid_x, I::nvvm_read_ptx_sreg_ctaid_y,
                                I::nvvm_read_ptx_sreg_ctaid_z};
    return Call(b, ids[d], {});
  }
  Value* GridDim(IRBuilder<>& b, int d) override {
    static const I::ID ids[] = {I::nvvm_read_ptx_sreg_nctaid_x, I::nvvm_read_ptx_sreg_nctaid_y,
                                I::nvvm_read_ptx_sreg_nctaid_z};
    return Call(b, ids[d], {});
  }
  void Barrier(IRBuilder<>& b) override { Call(b, I::nvvm_barrier0, {}); }
  Value* ShflIdx(IRBuilder<>& b, Value* x, Value* src) override {
    return Call(b, I::nvvm_shfl_sync_idx_i32, {b.getInt32(~0u), x, src, b.getInt32(31)});
  }
  Value* ShflXor(IRBuilder<>& b, Value* x, int mask) override {
    return Call(b, I::nvvm_shfl_sync_bfly_i32,
                {b.getInt32(~0u), x, b.getInt32(mask), b.getInt32(31)});
  }
  Value* Exp2(IRBuilder<>& b, Value* x) override { return Call(b, I::nvvm_ex2_approx_f, {x}); }
  Value* Exp2Ftz(IRBuilder<>& b, Value* x) override {
    return Call(b, I::nvvm_ex2_approx_ftz_f, {x});
  }
  Value* Log2(IRBuilder<>& b, Value* x) override { return Call(b, I::nvvm_lg2_approx_f, {x}); }
  Value* Rsqrt(IRBuilder<>& b, Value* x) override { return Call(b, I::nvvm_rsqrt_approx_f, {x}); }
};

class AmdgpuOps : public TargetOps {
 public:
  explicit AmdgpuOps(llvm::Module* m) { m_ = m; }
  bool is_amd() const override { return true; }
  int hw_warp() const override { return 64; }
  Value* ThreadId(IRBuilder<>& b) override { return Call(b, I::amdgcn_workitem_id_x, {}); }
  Value* BlockId(IRBuilder<>& b, int d) override {
    static const I::ID ids[] = {I::amdgcn_workgroup_id_x, I::amdgcn_workgroup_id_y,
                                I::amdgcn_workgroup_id_z};
    return Call(b, ids[d], {});
  }
  // hsa_kernel_dispatch_packet: workgroup_size_{x,y,z} (u16) at 4, grid_size (u32) at 12.
  Value* GridDim(IRBuilder<>& b, int d) override {
    Value* p = Call(b, I::amdgcn_dispatch_ptr, {});
    Value* wg = b.CreateZExt(
        b.CreateAlignedLoad(b.getInt16Ty(), b.CreateConstGEP1_32(b.getInt8Ty(), p, 4 + 2 * d),
                            llvm::Align(2)),
        b.getInt32Ty());
    Value* gs = b.CreateAlignedLoad(
        b.getInt32Ty(), b.CreateConstGEP1_32(b.getInt8Ty(), p, 12 + 4 * d), llvm::Align(4));
    return b.CreateUDiv(b.CreateAdd(gs, b.CreateSub(wg, b.getInt32(1))), wg);
  }
  void Barrier(IRBuilder<>& b) override {
    auto& ctx = b.getContext();
    b.CreateFence(llvm::AtomicOrdering::Release, ctx.getOrInsertSyncScopeID("workgroup"));
    Call(b, I::amdgcn_s_barrier, {});
    b.CreateFence(llvm::AtomicOrdering::Acquire, ctx.getOrInsertSyncScopeID("workgroup"));
  }
  Value* ShflIdx(IRBuilder<>& b, Value* x, Value* src) override {
    return Call(b, I::amdgcn_ds_bpermute, {b.CreateShl(src, 2), x});
  }
  Value* ShflXor(IRBuilder<>& b, Value* x, int mask) override {
    Value* lane = b.CreateAnd(ThreadId(b), b.getInt32(63));
    return ShflIdx(b, x, b.CreateXor(lane, b.getInt32(mask)));
  }
  Value* Exp2(IRBuilder<>& b, Value* x) override { return b.CreateUnaryIntrinsic(I::exp2, x); }
  Value* Log2(IRBuilder<>& b, Value* x) override { return b.CreateUnaryIntrinsic(I::log2, x); }
  Value* Rsqrt(IRBuilder<>& b, Value* x) override {
    return b.CreateFDiv(llvm::ConstantFP::get(x->getType(), 1.0),
                        b.CreateUnaryIntrinsic(I::sqrt, x));
  }
};

}  // namespace

std::unique_ptr<TargetOps> TargetOps::Create(const GpuTarget& target, llvm::Module* m) {
  if (target.vendor == GpuVendor::kAmd) return std::make_unique<AmdgpuOps>(m);
  return std::make_unique<NvptxOps>(m);
}

}  // namespace argus::codegen
