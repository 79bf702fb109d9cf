// The lowering's driver (lower.h): runs pass 1 (CheckTargetSupport), emits
// the device functions, declares the kernel with its parameters (tensor maps
// last), lays out its shared memory and mbarriers, binds its local arrays,
// and runs the emitter (emit/emitter.h, which runs pass 2 per function).
#include <algorithm>
#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "base/status.h"
#include "codegen/amdgpu_backend.h"
#include "codegen/emit/emitter.h"
#include "codegen/lower.h"
#include "codegen/nvptx_backend.h"
#include "llvm/IR/Module.h"
#include "llvm/Target/TargetMachine.h"

namespace argus::codegen {

namespace ir = dsl::ir;
using dsl::DType;
using emit::Emitter;
using emit::KernelBindings;
using emit::ModuleState;
using ir::OpCode;
using llvm::IRBuilder;
using llvm::Type;
using llvm::Value;

LoweredKernel::LoweredKernel() = default;
LoweredKernel::LoweredKernel(LoweredKernel&&) = default;
LoweredKernel& LoweredKernel::operator=(LoweredKernel&&) = default;
LoweredKernel::~LoweredKernel() = default;

namespace {

// The LLVM type of a parameter, a return value or a buffer element.
Type* ScalarType(IRBuilder<>& tb, DType t) {
  switch (t) {
    case DType::kBool:
      return tb.getInt1Ty();
    case DType::kI64:
      return tb.getInt64Ty();
    case DType::kF32:
      return tb.getFloatTy();
    case DType::kBF16:
      return tb.getBFloatTy();
    case DType::kF16:
      return tb.getHalfTy();
    default:
      return tb.getInt32Ty();
  }
}

// The element type of a buffer of `t` (bool is a byte in memory).
Type* MemoryType(IRBuilder<>& tb, DType t) {
  return t == DType::kBool ? tb.getInt8Ty() : ScalarType(tb, t);
}

std::string ParamKind(DType t) {
  return t == DType::kI64 ? "i64" : dsl::IsFloat(t) ? "f32" : "i32";
}

void CollectOps(const ir::Block& b, OpCode code, std::vector<const ir::Op*>* out) {
  for (const ir::Op& op : b) {
    if (op.code == code) out->push_back(&op);
    for (const ir::Block& r : op.regions) CollectOps(r, code, out);
  }
}

absl::Status CheckScalarParams(const ir::Module& m, const ir::Function& k) {
  for (const ir::ScalarParam& s : k.scalars) {
    if (s.dtype != DType::kF32 && s.dtype != DType::kI32 && s.dtype != DType::kI64)
      return LoweringError(m, k.loc,
                           absl::StrCat("scalar parameter ", s.name, " of type ",
                                        dsl::DTypeName(s.dtype), ": kernels take i32, i64 or f32"));
  }
  return absl::OkStatus();
}

// Device functions become internal always-inline functions, emitted before
// the kernel (they precede their callers).
absl::Status EmitDeviceFunctions(ModuleState* ms, IRBuilder<>& tb) {
  const ir::Module& m = *ms->m;
  for (size_t i = 0; i < m.functions.size(); ++i) {
    const ir::Function& f = m.functions[i];
    if (f.is_kernel) continue;
    std::vector<Type*> ps;
    for (int p : f.params) ps.push_back(ScalarType(tb, f.vars[p].type.dtype));
    Type* rt = f.ret.is_scalar() ? ScalarType(tb, f.ret.dtype) : tb.getVoidTy();
    auto* fn = llvm::Function::Create(llvm::FunctionType::get(rt, ps, false),
                                      llvm::GlobalValue::InternalLinkage, f.name, ms->mod);
    fn->addFnAttr(llvm::Attribute::AlwaysInline);
    ms->fns[i] = fn;
    Emitter e(ms, f, fn);
    RETURN_IF_ERROR(e.Emit());
  }
  return absl::OkStatus();
}

using TmapKey = std::array<int64_t, 4>;  // tensor, box rows, box cols, swizzled

// The kernel's parameter types, recorded in md: every tensor, dim and scalar,
// then one tensor map per (tensor, box, swizzle) that a TMA uses, passed as a
// pointer to its 128 bytes in global memory (the launcher encodes it).
absl::StatusOr<std::vector<Type*>> KernelParams(const ir::Module& m, const ir::Function& k,
                                                IRBuilder<>& tb, KernelMetadata* md,
                                                std::vector<TmapKey>* tmap_keys) {
  llvm::LLVMContext& ctx = tb.getContext();
  std::vector<Type*> ps;
  for (const ir::TensorParam& t : k.tensors) {
    ps.push_back(llvm::PointerType::get(ctx, 1));
    md->params.push_back({t.name, "ptr", dsl::DTypeName(t.dtype)});
  }
  for (const std::string& d : k.dims) {
    ps.push_back(tb.getInt32Ty());
    md->params.push_back({d, "i32", ""});
  }
  for (const ir::ScalarParam& s : k.scalars) {
    ps.push_back(ScalarType(tb, s.dtype));
    md->params.push_back({s.name, ParamKind(s.dtype), ""});
  }
  std::vector<const ir::Op*> tma;
  CollectOps(k.body, OpCode::kTmaLoad, &tma);
  CollectOps(k.body, OpCode::kTmaStore, &tma);
  if (tma.empty()) return ps;
  ASSIGN_OR_RETURN(std::vector<ViewFact> facts, AnalyzeViews(m, k));
  for (const ir::Op* op : tma) {
    // The shared side: tma_load's destination, tma_store's source.
    const ViewFact& f = facts[op->operands[op->code == OpCode::kTmaStore ? 0 : 1]];
    bool swz = f.alloc && f.alloc->layout.swizzle.active();
    TmapKey key{op->ints[0], op->ints[1], op->ints[2], swz ? 1 : 0};
    if (std::find(tmap_keys->begin(), tmap_keys->end(), key) != tmap_keys->end()) continue;
    tmap_keys->push_back(key);
    const ir::TensorParam& t = k.tensors[key[0]];
    ps.push_back(llvm::PointerType::get(ctx, 1));
    KernelParam kp{absl::StrCat("tmap", tmap_keys->size() - 1),
                   "tensormap",
                   dsl::DTypeName(t.dtype),
                   t.name,
                   {key[1], key[2]},
                   swz ? "128B" : "none"};
    md->params.push_back(kp);
  }
  return ps;
}

int64_t RoundUp(int64_t x, int64_t a) { return (x + a - 1) / a * a; }

// 128-byte swizzled tiles (TMA, wgmma) start 1024-byte aligned, other
// buffers 128-byte aligned (TMA destinations).
int64_t SharedAlign(const ir::Op* op) {
  const dsl::Swizzle& z = op->layout.swizzle;
  return z.b == 3 && z.m == 3 && z.s == 3 ? 1024 : 128;
}

// Shared buffers: static globals, or — on sm_90a past the 48 KiB static
// limit — windows of one dynamic `extern .shared` array (the launch passes
// dynamic_shared_bytes and opts in to the larger size). mbarriers follow the
// buffers.
void LayoutShared(const ir::Function& k, const GpuTarget& target, IRBuilder<>& tb, ModuleState* ms,
                  KernelMetadata* md, KernelBindings* kb) {
  std::vector<const ir::Op*> sh, mb;
  CollectOps(k.body, OpCode::kAllocShared, &sh);
  CollectOps(k.body, OpCode::kMbarrier, &mb);
  auto buffer_bytes = [&](const ir::Op* op) {
    return RoundUp(op->layout.Cosize() * dsl::DTypeBytes(k.vars[op->result].type.dtype), 16);
  };
  int64_t total = 0;
  for (const ir::Op* op : sh) total = RoundUp(total, SharedAlign(op)) + buffer_bytes(op);
  for (const ir::Op* op : mb) total = RoundUp(total, 8) + 8 * op->ints[0];
  const bool dynamic = target.vendor == GpuVendor::kNvidia && total > 48 * 1024;
  llvm::GlobalVariable* dyn = nullptr;
  if (dynamic) {
    auto* at = llvm::ArrayType::get(tb.getInt8Ty(), 0);
    dyn = new llvm::GlobalVariable(*ms->mod, at, false, llvm::GlobalValue::ExternalLinkage, nullptr,
                                   "argus_dynamic_shared", nullptr,
                                   llvm::GlobalValue::NotThreadLocal, 3);
    dyn->setAlignment(llvm::Align(1024));
    md->dynamic_shared_bytes = static_cast<int>(total);
  }
  int64_t offset = 0;
  // `count` elements of `elem` for op's result, `bytes` of shared memory.
  auto place = [&](const ir::Op* op, int64_t bytes, int64_t align, Type* elem,
                   int64_t count) -> Value* {
    if (dynamic) {
      offset = RoundUp(offset, align);
      Value* p =
          llvm::ConstantExpr::getInBoundsGetElementPtr(tb.getInt8Ty(), dyn, tb.getInt64(offset));
      offset += bytes;
      return p;
    }
    ms->shared_bytes += static_cast<int>(bytes);
    return emit::NewSharedGlobal(*ms->mod, llvm::ArrayType::get(elem, count),
                                 k.vars[op->result].name, align);
  };
  for (const ir::Op* op : sh) {
    kb->shared[op] = place(op, buffer_bytes(op), SharedAlign(op),
                           MemoryType(tb, k.vars[op->result].type.dtype), op->layout.Cosize());
  }
  for (const ir::Op* op : mb)
    kb->mbars[op] = place(op, 8 * op->ints[0], 8, tb.getInt64Ty(), op->ints[0]);
}

}  // namespace

absl::StatusOr<LoweredKernel> LowerKernel(const ir::Module& m, const ir::Function& k,
                                          const GpuTarget& target, llvm::LLVMContext& ctx) {
  if (!k.is_kernel) return absl::InvalidArgumentError(absl::StrCat(k.name, " is not a kernel"));
  LoweredKernel out;
  RETURN_IF_ERROR(CheckTargetSupport(m, k, target, &out.notes));
  RETURN_IF_ERROR(CheckScalarParams(m, k));
  ASSIGN_OR_RETURN(std::unique_ptr<llvm::TargetMachine> tm, CreateTargetMachine(target));
  out.module = std::make_unique<llvm::Module>(k.name, ctx);
  PrepareModule(*out.module, *tm);
  std::unique_ptr<TargetOps> ops = TargetOps::Create(target, out.module.get());
  ModuleState ms{&m, &target, out.module.get(), ops.get(), {}, 0};
  ms.fns.assign(m.functions.size(), nullptr);
  IRBuilder<> tb(ctx);
  RETURN_IF_ERROR(EmitDeviceFunctions(&ms, tb));
  KernelMetadata& md = out.metadata;
  std::vector<TmapKey> tmap_keys;
  ASSIGN_OR_RETURN(std::vector<Type*> ps, KernelParams(m, k, tb, &md, &tmap_keys));
  auto* fn = llvm::Function::Create(llvm::FunctionType::get(tb.getVoidTy(), ps, false),
                                    llvm::GlobalValue::ExternalLinkage, k.name, out.module.get());
  for (size_t i = 0; i < md.params.size(); ++i) fn->getArg(i)->setName(md.params[i].name);
  KernelBindings kb;
  for (size_t i = 0; i < tmap_keys.size(); ++i)
    kb.tmaps[tmap_keys[i]] =
        fn->getArg(static_cast<unsigned>(md.params.size() - tmap_keys.size() + i));
  if (const char* v = std::getenv("ARGUS_WGMMA_VARIANT")) {  // descriptor experiments
    std::string s(v);
    kb.b_swap = s.find("swap") != std::string::npos;
    kb.b_trans = s.find("notrans") == std::string::npos;
  }
  // setmaxnreg needs a register cap at entry: .maxntid threads and one block
  // per SM make ptxas cap at 64K / threads (rounded down to 8).
  std::vector<const ir::Op*> setreg;
  CollectOps(k.body, OpCode::kSetMaxNReg, &setreg);
  if (!setreg.empty()) kb.reg_cap = std::min(255, 65536 / k.threads) / 8 * 8;
  LayoutShared(k, target, tb, &ms, &md, &kb);
  // Locals live in the entry block as private arrays: built in a block of
  // their own, moved into the emitter's alloca block afterwards.
  llvm::BasicBlock* tmp = llvm::BasicBlock::Create(ctx, "locals", fn);
  IRBuilder<> lb(tmp);
  std::vector<const ir::Op*> lo;
  CollectOps(k.body, OpCode::kAllocLocal, &lo);
  // thread_copy moves locals in 16-byte chunks: their base must be aligned to that.
  std::vector<const ir::Op*> thread_copies;
  CollectOps(k.body, OpCode::kThreadCopy, &thread_copies);
  for (const ir::Op* op : lo) {
    auto* at =
        llvm::ArrayType::get(MemoryType(tb, k.vars[op->result].type.dtype), op->layout.Cosize());
    llvm::AllocaInst* a = lb.CreateAlloca(at, nullptr, k.vars[op->result].name);
    if (!thread_copies.empty()) a->setAlignment(llvm::Align(16));
    kb.locals[op] = a;
  }
  Emitter e(&ms, k, fn, std::move(kb));
  RETURN_IF_ERROR(e.Emit());
  llvm::BasicBlock* entry = &fn->getEntryBlock() == tmp ? tmp->getNextNode() : &fn->getEntryBlock();
  while (!tmp->empty()) tmp->front().moveBefore(&*entry->getFirstInsertionPt());
  tmp->eraseFromParent();
  if (target.vendor == GpuVendor::kAmd)
    MarkAmdgpuKernel(*fn, k.threads);
  else
    MarkNvptxKernel(*fn, k.threads, setreg.empty() ? 0 : 1);
  md.symbol = k.name;
  md.target = target.arch;
  md.block = {k.threads, 1, 1};
  md.resources.static_shared_bytes = ms.shared_bytes;
  RETURN_IF_ERROR(VerifyModule(*out.module));
  return out;
}

}  // namespace argus::codegen
