#include "codegen/test_kernels.h"

#include <vector>

#include "codegen/amdgpu_backend.h"
#include "codegen/nvptx_backend.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/GlobalVariable.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Intrinsics.h"
#include "llvm/IR/IntrinsicsAMDGPU.h"
#include "llvm/IR/IntrinsicsNVPTX.h"
#include "llvm/IR/Module.h"

namespace argus::codegen {

TestKernel::TestKernel() = default;
TestKernel::TestKernel(TestKernel&&) noexcept = default;
TestKernel::~TestKernel() = default;

namespace {

using llvm::BasicBlock;
using llvm::Function;
using llvm::IRBuilder;
using llvm::Type;
using llvm::Value;

// Shared by the NVIDIA and AMD builders.
struct Builder {
  llvm::LLVMContext& ctx;
  llvm::Module* m;
  IRBuilder<> b;
  Type* i8;
  Type* i16;
  Type* i32;
  Type* i64;
  Type* f32;
  llvm::PointerType* gptr;  // addrspace(1)
  llvm::PointerType* sptr;  // addrspace(3)

  Builder(llvm::LLVMContext& c, llvm::Module* mod)
      : ctx(c),
        m(mod),
        b(c),
        i8(Type::getInt8Ty(c)),
        i16(Type::getInt16Ty(c)),
        i32(Type::getInt32Ty(c)),
        i64(Type::getInt64Ty(c)),
        f32(Type::getFloatTy(c)),
        gptr(llvm::PointerType::get(c, 1)),
        sptr(llvm::PointerType::get(c, 3)) {}

  Value* C32(int64_t v) { return b.getInt32(static_cast<uint32_t>(v)); }
  Value* C64(int64_t v) { return b.getInt64(static_cast<uint64_t>(v)); }
  Value* Call(llvm::Intrinsic::ID id, llvm::ArrayRef<Value*> args = {},
              llvm::ArrayRef<Type*> types = {}) {
    Function* fn = llvm::Intrinsic::getDeclaration(m, id, types);
    return b.CreateCall(fn, args);
  }
  // Byte-addressed pointer arithmetic.
  Value* Gep(Value* base, Value* byte_offset) { return b.CreateGEP(i8, base, byte_offset); }
  llvm::GlobalVariable* SharedArray(const char* name, int bytes) {
    auto* ty = llvm::ArrayType::get(i8, bytes);
    auto* gv = new llvm::GlobalVariable(*m, ty, false, llvm::GlobalValue::InternalLinkage,
                                        llvm::UndefValue::get(ty), name, nullptr,
                                        llvm::GlobalValue::NotThreadLocal, 3);
    gv->setAlignment(llvm::Align(16));
    return gv;
  }
  Function* Kernel(const char* name, std::vector<Type*> params, std::vector<const char*> names) {
    auto* ft = llvm::FunctionType::get(Type::getVoidTy(ctx), params, false);
    Function* f = Function::Create(ft, llvm::GlobalValue::ExternalLinkage, name, m);
    for (size_t i = 0; i < names.size(); ++i) {
      f->getArg(i)->setName(names[i]);
      if (params[i]->isPointerTy()) f->addParamAttr(i, llvm::Attribute::NoAlias);
    }
    b.SetInsertPoint(BasicBlock::Create(ctx, "entry", f));
    return f;
  }
};

std::vector<KernelParam> VaddParams() {
  return {{"a", "ptr", "f32"}, {"b", "ptr", "f32"}, {"c", "ptr", "f32"}, {"n", "i32", ""}};
}
std::vector<KernelParam> GemmParams() {
  return {{"A", "ptr", "bf16"}, {"B", "ptr", "bf16"}, {"C", "ptr", "f32"},
          {"M", "i32", ""},     {"N", "i32", ""},     {"K", "i32", ""}};
}

// c[i] = a[i] + b[i]: 4 elements per thread with one 16-byte load per operand,
// a scalar tail for n % 4. `global_id` is (block * 256 + thread).
void EmitVaddBody(Builder& g, Function* f, Value* global_id) {
  IRBuilder<>& b = g.b;
  Value* a = f->getArg(0);
  Value* bb = f->getArg(1);
  Value* c = f->getArg(2);
  Value* n = b.CreateZExt(f->getArg(3), g.i64, "n64");
  Value* i = b.CreateMul(b.CreateZExt(global_id, g.i64), g.C64(kVaddPerThread), "i");
  BasicBlock* vec = BasicBlock::Create(g.ctx, "vec", f);
  BasicBlock* tail = BasicBlock::Create(g.ctx, "tail", f);
  BasicBlock* done = BasicBlock::Create(g.ctx, "done", f);
  b.CreateCondBr(b.CreateICmpULE(b.CreateAdd(i, g.C64(kVaddPerThread)), n), vec, tail);

  b.SetInsertPoint(vec);
  auto* v4 = llvm::FixedVectorType::get(g.f32, 4);
  Value* va = b.CreateAlignedLoad(v4, b.CreateGEP(g.f32, a, i), llvm::Align(16), "va");
  Value* vb = b.CreateAlignedLoad(v4, b.CreateGEP(g.f32, bb, i), llvm::Align(16), "vb");
  b.CreateAlignedStore(b.CreateFAdd(va, vb), b.CreateGEP(g.f32, c, i), llvm::Align(16));
  b.CreateBr(done);

  b.SetInsertPoint(tail);
  for (int j = 0; j < kVaddPerThread - 1; ++j) {
    Value* idx = b.CreateAdd(i, g.C64(j));
    BasicBlock* body = BasicBlock::Create(g.ctx, "tail_elem", f);
    BasicBlock* next = BasicBlock::Create(g.ctx, "tail_next", f);
    b.CreateCondBr(b.CreateICmpULT(idx, n), body, done);
    b.SetInsertPoint(body);
    Value* x = b.CreateLoad(g.f32, b.CreateGEP(g.f32, a, idx));
    Value* y = b.CreateLoad(g.f32, b.CreateGEP(g.f32, bb, idx));
    b.CreateStore(b.CreateFAdd(x, y), b.CreateGEP(g.f32, c, idx));
    b.CreateBr(next);
    b.SetInsertPoint(next);
  }
  b.CreateBr(done);
  b.SetInsertPoint(done);
  b.CreateRetVoid();
}

}  // namespace

TestKernel BuildVectorAddNvptx(llvm::LLVMContext& ctx) {
  TestKernel k;
  k.module = std::make_unique<llvm::Module>("vadd_f32", ctx);
  Builder g(ctx, k.module.get());
  Function* f = g.Kernel("vadd_f32", {g.gptr, g.gptr, g.gptr, g.i32}, {"a", "b", "c", "n"});
  namespace I = llvm::Intrinsic;
  Value* tid = g.Call(I::nvvm_read_ptx_sreg_tid_x);
  Value* bid = g.Call(I::nvvm_read_ptx_sreg_ctaid_x);
  Value* gid = g.b.CreateAdd(g.b.CreateMul(bid, g.C32(kVaddThreads)), tid, "gid");
  EmitVaddBody(g, f, gid);
  MarkNvptxKernel(*f, kVaddThreads);
  k.metadata.symbol = "vadd_f32";
  k.metadata.target = "sm_90a";
  k.metadata.params = VaddParams();
  k.metadata.block = {kVaddThreads, 1, 1};
  return k;
}

TestKernel BuildOobStoreNvptx(llvm::LLVMContext& ctx) {
  TestKernel k;
  k.module = std::make_unique<llvm::Module>("oob_store", ctx);
  Builder g(ctx, k.module.get());
  Function* f = g.Kernel("oob_store", {g.gptr, g.i32}, {"c", "n"});
  Value* tid = g.Call(llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x);
  // c[n + 2^38 + tid]: one TiB past the end of the allocation.
  Value* idx = g.b.CreateAdd(g.b.CreateZExt(f->getArg(1), g.i64),
                             g.b.CreateAdd(g.C64(int64_t{1} << 38), g.b.CreateZExt(tid, g.i64)));
  g.b.CreateStore(llvm::ConstantFP::get(g.f32, 1.0), g.b.CreateGEP(g.f32, f->getArg(0), idx),
                  /*isVolatile=*/true);
  g.b.CreateRetVoid();
  MarkNvptxKernel(*f, 32);
  k.metadata.symbol = "oob_store";
  k.metadata.target = "sm_90a";
  k.metadata.params = {{"c", "ptr", "f32"}, {"n", "i32", ""}};
  k.metadata.block = {32, 1, 1};
  return k;
}

// NVPTX GEMM tile. Block (128 threads = 4 warps, 2x2) computes a 64x64 tile of
// C; each warp a 32x32 sub-tile as 2 (m16) x 4 (n8) mma.sync accumulators.
// Shared memory: [stage 2][operand 2][row 64][40 bf16] (80-byte rows: 16-byte
// aligned for cp.async/ldmatrix and conflict-free for ldmatrix's 8 rows).
TestKernel BuildGemmBf16Nvptx(llvm::LLVMContext& ctx) {
  constexpr int kThreads = 128;
  constexpr int kRowBytes = 80;
  constexpr int kOperandBytes = kGemmTileM * kRowBytes;  // 5120
  constexpr int kStageBytes = 2 * kOperandBytes;         // 10240
  constexpr int kSmemBytes = 2 * kStageBytes;            // 20480
  namespace I = llvm::Intrinsic;
  TestKernel k;
  k.module = std::make_unique<llvm::Module>("gemm_bf16_tn", ctx);
  Builder g(ctx, k.module.get());
  IRBuilder<>& b = g.b;
  Function* f = g.Kernel("gemm_bf16_tn", {g.gptr, g.gptr, g.gptr, g.i32, g.i32, g.i32},
                         {"A", "B", "C", "M", "N", "K"});
  Value* A = f->getArg(0);
  Value* B = f->getArg(1);
  Value* C = f->getArg(2);
  Value* N = f->getArg(4);
  Value* K = f->getArg(5);
  llvm::GlobalVariable* smem = g.SharedArray("gemm_smem", kSmemBytes);

  Value* tid = g.Call(I::nvvm_read_ptx_sreg_tid_x);
  Value* bn = g.Call(I::nvvm_read_ptx_sreg_ctaid_x);
  Value* bm = g.Call(I::nvvm_read_ptx_sreg_ctaid_y);
  Value* warp = b.CreateLShr(tid, 5, "warp");
  Value* lane = b.CreateAnd(tid, 31, "lane");
  Value* warp_m = b.CreateLShr(warp, 1, "warp_m");
  Value* warp_n = b.CreateAnd(warp, 1, "warp_n");
  Value* kt_count = b.CreateLShr(K, 5, "kt_count");
  Value* K64 = b.CreateZExt(K, g.i64);

  // Each thread copies 2 16-byte chunks of each operand tile per stage.
  struct Chunk {
    Value* a_elem;  // i64 element offset of the chunk in A for k-tile 0
    Value* b_elem;
    Value* smem_off;  // i32 byte offset within an operand's stage area
  };
  std::vector<Chunk> chunks;
  for (int i = 0; i < 2; ++i) {
    Value* chunk = b.CreateAdd(tid, g.C32(i * kThreads));
    Value* row = b.CreateLShr(chunk, 2);
    Value* cc = b.CreateAnd(chunk, 3);
    Value* col = b.CreateZExt(b.CreateMul(cc, g.C32(8)), g.i64);
    Value* arow = b.CreateZExt(b.CreateAdd(b.CreateMul(bm, g.C32(kGemmTileM)), row), g.i64);
    Value* brow = b.CreateZExt(b.CreateAdd(b.CreateMul(bn, g.C32(kGemmTileN)), row), g.i64);
    chunks.push_back({b.CreateAdd(b.CreateMul(arow, K64), col),
                      b.CreateAdd(b.CreateMul(brow, K64), col),
                      b.CreateAdd(b.CreateMul(row, g.C32(kRowBytes)), b.CreateMul(cc, g.C32(16)))});
  }
  // Copies k-tile `kt` into `stage`; `valid` false turns the copies into zero
  // fills that read nothing (cp.async's src-size 0).
  auto issue = [&](Value* stage, Value* kt, Value* valid) {
    Value* kcol = b.CreateZExt(b.CreateMul(kt, g.C32(kGemmTileK)), g.i64);
    Value* src_size = b.CreateSelect(valid, g.C32(16), g.C32(0));
    Value* stage_off = b.CreateMul(stage, g.C32(kStageBytes));
    for (const Chunk& c : chunks) {
      for (int op = 0; op < 2; ++op) {
        Value* elem = b.CreateAdd(op == 0 ? c.a_elem : c.b_elem, kcol);
        Value* src = b.CreateGEP(b.getInt16Ty(), op == 0 ? A : B, elem);
        Value* dst_off = b.CreateAdd(stage_off, b.CreateAdd(c.smem_off, g.C32(op * kOperandBytes)));
        Value* dst = g.Gep(smem, dst_off);
        g.Call(I::nvvm_cp_async_cg_shared_global_16_s, {dst, src, src_size});
      }
    }
    g.Call(I::nvvm_cp_async_commit_group);
  };
  issue(g.C32(0), g.C32(0), b.getTrue());

  // ldmatrix.x4 row addresses of this lane (byte offsets within a stage).
  Value* l7 = b.CreateAnd(lane, 7);
  Value* l3 = b.CreateAnd(b.CreateLShr(lane, 3), 1);
  Value* l4 = b.CreateLShr(lane, 4);
  Value* a_off[2];
  Value* b_off[2];
  for (int t = 0; t < 2; ++t) {
    Value* arow = b.CreateAdd(b.CreateAdd(b.CreateMul(warp_m, g.C32(32)), g.C32(t * 16)),
                              b.CreateAdd(l7, b.CreateMul(l3, g.C32(8))));
    a_off[t] = b.CreateAdd(b.CreateMul(arow, g.C32(kRowBytes)), b.CreateMul(l4, g.C32(16)));
    Value* brow = b.CreateAdd(b.CreateAdd(b.CreateMul(warp_n, g.C32(32)), g.C32(t * 16)),
                              b.CreateAdd(l7, b.CreateMul(l4, g.C32(8))));
    b_off[t] = b.CreateAdd(g.C32(kOperandBytes), b.CreateAdd(b.CreateMul(brow, g.C32(kRowBytes)),
                                                             b.CreateMul(l3, g.C32(16))));
  }

  BasicBlock* entry = b.GetInsertBlock();
  BasicBlock* loop = BasicBlock::Create(ctx, "k_loop", f);
  BasicBlock* exit = BasicBlock::Create(ctx, "epilogue", f);
  b.CreateBr(loop);
  b.SetInsertPoint(loop);
  llvm::PHINode* kt = b.CreatePHI(g.i32, 2, "kt");
  kt->addIncoming(g.C32(0), entry);
  llvm::PHINode* acc_phi[2][4][4];
  Value* acc[2][4][4];
  for (int mi = 0; mi < 2; ++mi)
    for (int ni = 0; ni < 4; ++ni)
      for (int e = 0; e < 4; ++e) {
        acc_phi[mi][ni][e] = b.CreatePHI(g.f32, 2, "acc");
        acc_phi[mi][ni][e]->addIncoming(llvm::ConstantFP::get(g.f32, 0.0), entry);
        acc[mi][ni][e] = acc_phi[mi][ni][e];
      }
  Value* kt_next = b.CreateAdd(kt, g.C32(1), "kt_next");
  Value* has_next = b.CreateICmpULT(kt_next, kt_count, "has_next");
  // Prefetch the next k-tile into the other stage (a clamped, zero-size copy
  // on the last iteration keeps the group count uniform).
  issue(b.CreateAnd(kt_next, 1), b.CreateSelect(has_next, kt_next, kt), has_next);
  g.Call(I::nvvm_cp_async_wait_group, {g.C32(1)});  // tile kt has landed
  g.Call(I::nvvm_barrier0);
  Value* stage_off = b.CreateMul(b.CreateAnd(kt, 1), g.C32(kStageBytes));
  for (int ks = 0; ks < kGemmTileK / 16; ++ks) {
    Value* af[2][4];
    Value* bf[2][4];
    for (int t = 0; t < 2; ++t) {
      Value* pa = g.Gep(smem, b.CreateAdd(stage_off, b.CreateAdd(a_off[t], g.C32(ks * 32))));
      Value* ra = g.Call(I::nvvm_ldmatrix_sync_aligned_m8n8_x4_b16, {pa}, {g.sptr});
      Value* pb = g.Gep(smem, b.CreateAdd(stage_off, b.CreateAdd(b_off[t], g.C32(ks * 32))));
      Value* rb = g.Call(I::nvvm_ldmatrix_sync_aligned_m8n8_x4_b16, {pb}, {g.sptr});
      for (int r = 0; r < 4; ++r) {
        af[t][r] = b.CreateExtractValue(ra, r);
        bf[t][r] = b.CreateExtractValue(rb, r);
      }
    }
    for (int mi = 0; mi < 2; ++mi)
      for (int ni = 0; ni < 4; ++ni) {
        Value* b0 = bf[ni / 2][(ni % 2) * 2];
        Value* b1 = bf[ni / 2][(ni % 2) * 2 + 1];
        Value* d = g.Call(I::nvvm_mma_m16n8k16_row_col_bf16,
                          {af[mi][0], af[mi][1], af[mi][2], af[mi][3], b0, b1, acc[mi][ni][0],
                           acc[mi][ni][1], acc[mi][ni][2], acc[mi][ni][3]});
        for (int e = 0; e < 4; ++e) acc[mi][ni][e] = b.CreateExtractValue(d, e);
      }
  }
  g.Call(I::nvvm_barrier0);  // the stage read here is refilled next iteration
  BasicBlock* latch = b.GetInsertBlock();
  kt->addIncoming(kt_next, latch);
  for (int mi = 0; mi < 2; ++mi)
    for (int ni = 0; ni < 4; ++ni)
      for (int e = 0; e < 4; ++e) acc_phi[mi][ni][e]->addIncoming(acc[mi][ni][e], latch);
  b.CreateCondBr(has_next, loop, exit);

  b.SetInsertPoint(exit);
  auto* v2 = llvm::FixedVectorType::get(g.f32, 2);
  Value* N64 = b.CreateZExt(N, g.i64);
  Value* row_base = b.CreateAdd(b.CreateMul(bm, g.C32(kGemmTileM)),
                                b.CreateAdd(b.CreateMul(warp_m, g.C32(32)), b.CreateLShr(lane, 2)));
  Value* col_base = b.CreateAdd(
      b.CreateMul(bn, g.C32(kGemmTileN)),
      b.CreateAdd(b.CreateMul(warp_n, g.C32(32)), b.CreateMul(b.CreateAnd(lane, 3), g.C32(2))));
  for (int mi = 0; mi < 2; ++mi)
    for (int ni = 0; ni < 4; ++ni)
      for (int half = 0; half < 2; ++half) {
        Value* row = b.CreateZExt(b.CreateAdd(row_base, g.C32(mi * 16 + half * 8)), g.i64);
        Value* col = b.CreateZExt(b.CreateAdd(col_base, g.C32(ni * 8)), g.i64);
        Value* idx = b.CreateAdd(b.CreateMul(row, N64), col);
        Value* v = llvm::UndefValue::get(v2);
        v = b.CreateInsertElement(v, acc[mi][ni][half * 2], uint64_t{0});
        v = b.CreateInsertElement(v, acc[mi][ni][half * 2 + 1], uint64_t{1});
        b.CreateAlignedStore(v, b.CreateGEP(g.f32, C, idx), llvm::Align(8));
      }
  b.CreateRetVoid();
  MarkNvptxKernel(*f, kThreads);
  k.metadata.symbol = "gemm_bf16_tn";
  k.metadata.target = "sm_90a";
  k.metadata.params = GemmParams();
  k.metadata.block = {kThreads, 1, 1};
  k.metadata.resources.static_shared_bytes = kSmemBytes;
  return k;
}

TestKernel BuildVectorAddAmdgpu(llvm::LLVMContext& ctx) {
  TestKernel k;
  k.module = std::make_unique<llvm::Module>("vadd_f32", ctx);
  Builder g(ctx, k.module.get());
  Function* f = g.Kernel("vadd_f32", {g.gptr, g.gptr, g.gptr, g.i32}, {"a", "b", "c", "n"});
  Value* tid = g.Call(llvm::Intrinsic::amdgcn_workitem_id_x);
  Value* bid = g.Call(llvm::Intrinsic::amdgcn_workgroup_id_x);
  Value* gid = g.b.CreateAdd(g.b.CreateMul(bid, g.C32(kVaddThreads)), tid, "gid");
  EmitVaddBody(g, f, gid);
  MarkAmdgpuKernel(*f);
  f->addFnAttr("amdgpu-flat-work-group-size", "256,256");
  k.metadata.symbol = "vadd_f32";
  k.metadata.target = "gfx942";
  k.metadata.params = VaddParams();
  k.metadata.block = {kVaddThreads, 1, 1};
  return k;
}

// AMDGPU GEMM tile. Block of 256 threads (4 wave64, 2x2) computes a 64x64 tile
// of C; each wave a 32x32 sub-tile with v_mfma_f32_32x32x8_bf16 (4 per k-tile
// of 32). Global -> registers by raw buffer loads (16 bytes per thread per
// operand; hardware bounds make the last prefetch harmless), registers -> LDS
// (80-byte rows), LDS -> MFMA operands with 8-byte ds_read.
TestKernel BuildGemmBf16Amdgpu(llvm::LLVMContext& ctx) {
  constexpr int kThreads = 256;
  constexpr int kRowBytes = 80;
  constexpr int kOperandBytes = kGemmTileM * kRowBytes;  // 5120
  constexpr int kLdsBytes = 2 * kOperandBytes;           // 10240
  // sched_group_barrier masks.
  constexpr int kMaskMfma = 0x008, kMaskVmemRead = 0x020, kMaskDsRead = 0x100;
  // s_waitcnt vmcnt(0) expcnt(7) lgkmcnt(15) on gfx9.
  constexpr int kWaitVmcnt0 = 0x0F70;
  namespace I = llvm::Intrinsic;
  TestKernel k;
  k.module = std::make_unique<llvm::Module>("gemm_bf16_tn_mfma", ctx);
  Builder g(ctx, k.module.get());
  IRBuilder<>& b = g.b;
  Function* f = g.Kernel("gemm_bf16_tn_mfma", {g.gptr, g.gptr, g.gptr, g.i32, g.i32, g.i32},
                         {"A", "B", "C", "M", "N", "K"});
  Value* A = f->getArg(0);
  Value* B = f->getArg(1);
  Value* C = f->getArg(2);
  Value* M = f->getArg(3);
  Value* N = f->getArg(4);
  Value* K = f->getArg(5);
  llvm::GlobalVariable* lds = g.SharedArray("gemm_lds", kLdsBytes);
  auto* v4i32 = llvm::FixedVectorType::get(g.i32, 4);
  auto* v4i16 = llvm::FixedVectorType::get(g.i16, 4);
  auto* v16f32 = llvm::FixedVectorType::get(g.f32, 16);

  // Buffer resource: base, stride 0, num_records = bytes, gfx9 dword3.
  auto rsrc = [&](Value* base, Value* rows) {
    Value* addr = b.CreatePtrToInt(base, g.i64);
    Value* lo = b.CreateTrunc(addr, g.i32);
    Value* hi = b.CreateAnd(b.CreateTrunc(b.CreateLShr(addr, 32), g.i32), 0xFFFF);
    Value* bytes = b.CreateMul(b.CreateMul(rows, K), g.C32(2));
    Value* r = llvm::UndefValue::get(v4i32);
    r = b.CreateInsertElement(r, lo, uint64_t{0});
    r = b.CreateInsertElement(r, hi, uint64_t{1});
    r = b.CreateInsertElement(r, bytes, uint64_t{2});
    r = b.CreateInsertElement(r, g.C32(0x00020000), uint64_t{3});
    return r;
  };
  Value* rsrc_a = rsrc(A, M);
  Value* rsrc_b = rsrc(B, N);

  Value* tid = g.Call(I::amdgcn_workitem_id_x);
  Value* bn = g.Call(I::amdgcn_workgroup_id_x);
  Value* bm = g.Call(I::amdgcn_workgroup_id_y);
  Value* wave = b.CreateLShr(tid, 6);
  Value* lane = b.CreateAnd(tid, 63);
  Value* wm = b.CreateLShr(wave, 1);
  Value* wn = b.CreateAnd(wave, 1);
  Value* kt_count = b.CreateLShr(K, 5);
  Value* row = b.CreateLShr(tid, 2);
  Value* cc = b.CreateAnd(tid, 3);
  // Byte offsets of this thread's 16-byte chunk for k-tile 0.
  Value* a_voff =
      b.CreateMul(b.CreateAdd(b.CreateMul(b.CreateAdd(b.CreateMul(bm, g.C32(64)), row), K),
                              b.CreateMul(cc, g.C32(8))),
                  g.C32(2));
  Value* b_voff =
      b.CreateMul(b.CreateAdd(b.CreateMul(b.CreateAdd(b.CreateMul(bn, g.C32(64)), row), K),
                              b.CreateMul(cc, g.C32(8))),
                  g.C32(2));
  Value* lds_w = b.CreateAdd(b.CreateMul(row, g.C32(kRowBytes)), b.CreateMul(cc, g.C32(16)));
  auto load_tile = [&](Value* kt, Value** va, Value** vb) {
    Value* koff = b.CreateMul(kt, g.C32(kGemmTileK * 2));
    *va = g.Call(I::amdgcn_raw_buffer_load, {rsrc_a, b.CreateAdd(a_voff, koff), g.C32(0), g.C32(0)},
                 {v4i32});
    *vb = g.Call(I::amdgcn_raw_buffer_load, {rsrc_b, b.CreateAdd(b_voff, koff), g.C32(0), g.C32(0)},
                 {v4i32});
  };
  auto workgroup_barrier = [&]() {
    b.CreateFence(llvm::AtomicOrdering::Release, ctx.getOrInsertSyncScopeID("workgroup"));
    g.Call(I::amdgcn_s_barrier);
    b.CreateFence(llvm::AtomicOrdering::Acquire, ctx.getOrInsertSyncScopeID("workgroup"));
  };
  Value* va0;
  Value* vb0;
  load_tile(g.C32(0), &va0, &vb0);
  // MFMA operand addresses: lane holds row (lane % 32), k (lane / 32) * 4 .. +3.
  Value* frag_row = b.CreateAnd(lane, 31);
  Value* frag_k = b.CreateMul(b.CreateLShr(lane, 5), g.C32(8));  // bytes
  Value* a_rd = b.CreateAdd(
      b.CreateMul(b.CreateAdd(b.CreateMul(wm, g.C32(32)), frag_row), g.C32(kRowBytes)), frag_k);
  Value* b_rd = b.CreateAdd(
      g.C32(kOperandBytes),
      b.CreateAdd(b.CreateMul(b.CreateAdd(b.CreateMul(wn, g.C32(32)), frag_row), g.C32(kRowBytes)),
                  frag_k));

  BasicBlock* entry = b.GetInsertBlock();
  BasicBlock* loop = BasicBlock::Create(ctx, "k_loop", f);
  BasicBlock* exit = BasicBlock::Create(ctx, "epilogue", f);
  b.CreateBr(loop);
  b.SetInsertPoint(loop);
  llvm::PHINode* kt = b.CreatePHI(g.i32, 2, "kt");
  llvm::PHINode* acc = b.CreatePHI(v16f32, 2, "acc");
  llvm::PHINode* va = b.CreatePHI(v4i32, 2, "va");
  llvm::PHINode* vb = b.CreatePHI(v4i32, 2, "vb");
  kt->addIncoming(g.C32(0), entry);
  acc->addIncoming(llvm::Constant::getNullValue(v16f32), entry);
  va->addIncoming(va0, entry);
  vb->addIncoming(vb0, entry);
  workgroup_barrier();                                // previous tile's LDS reads done
  g.Call(I::amdgcn_s_waitcnt, {g.C32(kWaitVmcnt0)});  // this tile's buffer loads
  b.CreateAlignedStore(va, g.Gep(lds, lds_w), llvm::Align(16));
  b.CreateAlignedStore(vb, g.Gep(lds, b.CreateAdd(lds_w, g.C32(kOperandBytes))), llvm::Align(16));
  workgroup_barrier();
  Value* kt_next = b.CreateAdd(kt, g.C32(1));
  Value* va_next;
  Value* vb_next;
  load_tile(kt_next, &va_next, &vb_next);  // prefetch; overlaps the MFMAs below
  g.Call(I::amdgcn_sched_group_barrier, {g.C32(kMaskVmemRead), g.C32(2), g.C32(0)});
  g.Call(I::amdgcn_s_setprio, {b.getInt16(1)});
  Value* d = acc;
  for (int ks = 0; ks < kGemmTileK / 8; ++ks) {
    Value* fa =
        b.CreateAlignedLoad(v4i16, g.Gep(lds, b.CreateAdd(a_rd, g.C32(ks * 16))), llvm::Align(8));
    Value* fb =
        b.CreateAlignedLoad(v4i16, g.Gep(lds, b.CreateAdd(b_rd, g.C32(ks * 16))), llvm::Align(8));
    d = g.Call(I::amdgcn_mfma_f32_32x32x8bf16_1k, {fa, fb, d, g.C32(0), g.C32(0), g.C32(0)});
  }
  for (int ks = 0; ks < kGemmTileK / 8; ++ks) {
    g.Call(I::amdgcn_sched_group_barrier, {g.C32(kMaskDsRead), g.C32(2), g.C32(0)});
    g.Call(I::amdgcn_sched_group_barrier, {g.C32(kMaskMfma), g.C32(1), g.C32(0)});
  }
  g.Call(I::amdgcn_s_setprio, {b.getInt16(0)});
  kt->addIncoming(kt_next, loop);
  acc->addIncoming(d, loop);
  va->addIncoming(va_next, loop);
  vb->addIncoming(vb_next, loop);
  b.CreateCondBr(b.CreateICmpULT(kt_next, kt_count), loop, exit);

  b.SetInsertPoint(exit);
  Value* N64 = b.CreateZExt(N, g.i64);
  Value* col = b.CreateZExt(
      b.CreateAdd(b.CreateMul(bn, g.C32(64)), b.CreateAdd(b.CreateMul(wn, g.C32(32)), frag_row)),
      g.i64);
  Value* row0 = b.CreateAdd(
      b.CreateMul(bm, g.C32(64)),
      b.CreateAdd(b.CreateMul(wm, g.C32(32)), b.CreateMul(b.CreateLShr(lane, 5), g.C32(4))));
  for (int i = 0; i < 16; ++i) {
    Value* r = b.CreateZExt(b.CreateAdd(row0, g.C32((i / 4) * 8 + i % 4)), g.i64);
    Value* idx = b.CreateAdd(b.CreateMul(r, N64), col);
    b.CreateStore(b.CreateExtractElement(d, uint64_t(i)), b.CreateGEP(g.f32, C, idx));
  }
  b.CreateRetVoid();
  MarkAmdgpuKernel(*f);
  f->addFnAttr("amdgpu-flat-work-group-size", "256,256");
  k.metadata.symbol = "gemm_bf16_tn_mfma";
  k.metadata.target = "gfx942";
  k.metadata.params = GemmParams();
  k.metadata.block = {kThreads, 1, 1};
  k.metadata.resources.static_shared_bytes = kLdsBytes;
  return k;
}

}  // namespace argus::codegen
