// Pass 3 of the lowering: tile IR -> LLVM IR with IRBuilder (see lower.h).
//
// Every IR variable lives in an entry-block alloca (scalars), a set of them
// (views: offset, shape and stride per dim, i64) or an array (fragments: f32
// accumulators, 16-bit A/B elements); SROA/mem2reg in the O3 pipeline turn
// them into registers. Structured control flow maps to branches one to one.
#include <functional>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "base/status.h"
#include "codegen/amdgpu_backend.h"
#include "codegen/lower.h"
#include "codegen/lower_hopper.h"
#include "codegen/lower_internal.h"
#include "codegen/nvptx_backend.h"
#include "llvm/IR/IntrinsicsAMDGPU.h"
#include "llvm/IR/IntrinsicsNVPTX.h"
#include "llvm/IR/Module.h"
#include "llvm/Target/TargetMachine.h"

namespace argus::codegen {

namespace ir = dsl::ir;
using dsl::DType;
using ir::OpCode;
using llvm::AllocaInst;
using llvm::BasicBlock;
using llvm::IRBuilder;
using llvm::Type;
using llvm::Value;
namespace I = llvm::Intrinsic;

LoweredKernel::LoweredKernel() = default;
LoweredKernel::LoweredKernel(LoweredKernel&&) = default;
LoweredKernel& LoweredKernel::operator=(LoweredKernel&&) = default;
LoweredKernel::~LoweredKernel() = default;

namespace {

// Kernel-wide state shared by the kernel's and its device functions' emitters.
struct ModuleState {
  const ir::Module* m;
  const GpuTarget* target;
  llvm::Module* mod;
  TargetOps* ops;
  std::vector<llvm::Function*> fns;  // by module function index
  int shared_bytes = 0;
};

// A lane-dependent coordinate part: sum over lane bits of weight * bit.
struct LanePart {
  std::vector<int> weight;  // per lane bit
  bool operator==(const LanePart& o) const { return weight == o.weight; }
};

class Emitter {
 public:
  Emitter(ModuleState* ms, const ir::Function& f, llvm::Function* fn)
      : ms_(ms), m_(*ms->m), f_(f), fn_(fn), ctx_(fn->getContext()), b_(ctx_), ops_(ms->ops) {
    amd_ = ms->target->vendor == GpuVendor::kAmd;
  }

  absl::Status Emit() {
    ASSIGN_OR_RETURN(facts_, AnalyzeViews(m_, f_));
    BasicBlock* allocas = BasicBlock::Create(ctx_, "allocas", fn_);
    BasicBlock* body = BasicBlock::Create(ctx_, "entry", fn_);
    alloca_b_ = std::make_unique<IRBuilder<>>(allocas);
    b_.SetInsertPoint(body);
    RETURN_IF_ERROR(BindParams());
    RETURN_IF_ERROR(Block(f_.body));
    if (!b_.GetInsertBlock()->getTerminator()) {
      if (fn_->getReturnType()->isVoidTy())
        b_.CreateRetVoid();
      else
        b_.CreateRet(llvm::Constant::getNullValue(fn_->getReturnType()));
    }
    alloca_b_->CreateBr(body);
    return absl::OkStatus();
  }

 private:
  // ---- types and slots
  Type* Ty(DType t) {
    switch (t) {
      case DType::kBool:
        return b_.getInt1Ty();
      case DType::kI32:
      case DType::kU32:
        return b_.getInt32Ty();
      case DType::kI64:
        return b_.getInt64Ty();
      case DType::kF16:
        return b_.getHalfTy();
      case DType::kBF16:
        return b_.getBFloatTy();
      default:
        return b_.getFloatTy();
    }
  }
  Type* MemTy(DType t) { return t == DType::kBool ? b_.getInt8Ty() : Ty(t); }
  int Bytes(DType t) { return t == DType::kBool ? 1 : dsl::DTypeBytes(t); }
  const ir::Type& VT(int v) const { return f_.vars[v].type; }
  Value* C32(int64_t v) { return b_.getInt32(static_cast<uint32_t>(v)); }
  Value* C64(int64_t v) { return b_.getInt64(static_cast<uint64_t>(v)); }
  Value* Call(I::ID id, llvm::ArrayRef<Value*> args, llvm::ArrayRef<Type*> types = {}) {
    return b_.CreateCall(I::getDeclaration(ms_->mod, id, types), args);
  }

  AllocaInst* Alloca(Type* t, const std::string& name) {
    return alloca_b_->CreateAlloca(t, nullptr, name);
  }
  AllocaInst* Slot(int v) {
    auto it = slots_.find(v);
    if (it != slots_.end()) return it->second;
    AllocaInst* a = Alloca(Ty(VT(v).dtype), f_.vars[v].name);
    slots_[v] = a;
    return a;
  }
  Value* Get(int v) { return b_.CreateLoad(Ty(VT(v).dtype), Slot(v)); }
  void Set(int v, Value* x) { b_.CreateStore(x, Slot(v)); }

  struct ViewSlots {
    AllocaInst* off = nullptr;
    std::vector<AllocaInst*> shape, stride;
  };
  ViewSlots& View(int v) {
    auto it = views_.find(v);
    if (it != views_.end()) return it->second;
    ViewSlots s;
    std::string n = f_.vars[v].name;
    s.off = Alloca(b_.getInt64Ty(), n + ".off");
    for (int d = 0; d < VT(v).rank(); ++d) {
      s.shape.push_back(Alloca(b_.getInt64Ty(), n + ".shape"));
      s.stride.push_back(Alloca(b_.getInt64Ty(), n + ".stride"));
    }
    return views_[v] = s;
  }
  struct ViewVals {
    Value* off;
    std::vector<Value*> shape, stride;
  };
  ViewVals LoadView(int v) {
    ViewSlots& s = View(v);
    ViewVals r;
    Type* i64 = b_.getInt64Ty();
    r.off = b_.CreateLoad(i64, s.off);
    for (size_t d = 0; d < s.shape.size(); ++d) {
      r.shape.push_back(b_.CreateLoad(i64, s.shape[d]));
      r.stride.push_back(b_.CreateLoad(i64, s.stride[d]));
    }
    return r;
  }
  void StoreView(int v, const ViewVals& x) {
    ViewSlots& s = View(v);
    b_.CreateStore(x.off, s.off);
    for (size_t d = 0; d < s.shape.size(); ++d) {
      b_.CreateStore(x.shape[d], s.shape[d]);
      b_.CreateStore(x.stride[d], s.stride[d]);
    }
  }

  bool FragIsAcc(int v) const { return VT(v).frag.role == dsl::FragRole::kAcc; }
  // Accumulators and row vectors (and the i32/bool fragments of fragment math)
  // hold f32 elements; A/B operands hold 16-bit operand bits.
  Type* FragElemTy(int v) {
    dsl::FragRole r = VT(v).frag.role;
    return r == dsl::FragRole::kA || r == dsl::FragRole::kB ? b_.getInt16Ty() : b_.getFloatTy();
  }
  AllocaInst* Frag(int v) {
    auto it = frags_.find(v);
    if (it != frags_.end()) return it->second;
    int n = VT(v).frag.Geom().PerLane();
    AllocaInst* a = Alloca(llvm::ArrayType::get(FragElemTy(v), n), f_.vars[v].name);
    a->setAlignment(llvm::Align(4));  // operand pairs are accessed as one .b32
    return frags_[v] = a;
  }
  Value* FragPtr(int v, int e) {
    AllocaInst* a = Frag(v);
    return b_.CreateConstInBoundsGEP2_32(a->getAllocatedType(), a, 0, e);
  }
  Value* FragGet(int v, int e) { return b_.CreateLoad(FragElemTy(v), FragPtr(v, e)); }
  // Operand elements 2j and 2j+1 (16-bit) as one 32-bit register, 2j in the low
  // half: to_operand writes and register-A wgmma reads them so, which keeps
  // them packed through loop-carried values (no 16-bit splits for ptxas).
  bool FragPairs(int v) const {
    dsl::FragRole r = VT(v).frag.role;
    return (r == dsl::FragRole::kA || r == dsl::FragRole::kB) &&
           VT(v).frag.Geom().PerLane() % 2 == 0;
  }
  Value* FragGetPair(int v, int e) {
    return b_.CreateAlignedLoad(b_.getInt32Ty(), FragPtr(v, e), llvm::Align(4));
  }
  void FragSetPair(int v, int e, Value* x) {
    b_.CreateAlignedStore(x, FragPtr(v, e), llvm::Align(4));
  }
  void FragSet(int v, int e, Value* x) { b_.CreateStore(x, FragPtr(v, e)); }

  // ---- arithmetic helpers
  Value* ToF32(Value* x) {
    return x->getType()->isFloatTy() ? x : b_.CreateFPExt(x, b_.getFloatTy());
  }
  Value* FromF32(Value* x, DType t) { return t == DType::kF32 ? x : b_.CreateFPTrunc(x, Ty(t)); }
  Value* Convert(Value* x, DType from, DType to) {
    if (from == to) return x;
    bool ff = dsl::IsFloat(from), ft = dsl::IsFloat(to);
    if (ff && ft) return FromF32(ToF32(x), to);
    if (!ff && ft) {
      Value* f = (from == DType::kU32 || from == DType::kBool)
                     ? b_.CreateUIToFP(x, b_.getFloatTy())
                     : b_.CreateSIToFP(x, b_.getFloatTy());
      return FromF32(f, to);
    }
    if (ff && !ft) {
      Value* f = ToF32(x);
      if (to == DType::kBool) return b_.CreateFCmpONE(f, llvm::ConstantFP::get(f->getType(), 0));
      I::ID id = to == DType::kU32 ? I::fptoui_sat : I::fptosi_sat;
      return Call(id, {f}, {Ty(to), b_.getFloatTy()});
    }
    if (to == DType::kBool) return b_.CreateICmpNE(x, llvm::Constant::getNullValue(x->getType()));
    if (from == DType::kBool || from == DType::kU32) return b_.CreateZExtOrTrunc(x, Ty(to));
    return b_.CreateSExtOrTrunc(x, Ty(to));
  }
  Value* ToMem(Value* x, DType t) {
    return t == DType::kBool ? b_.CreateZExt(x, b_.getInt8Ty()) : x;
  }
  Value* FromMem(Value* x, DType t) {
    return t == DType::kBool ? b_.CreateTrunc(x, b_.getInt1Ty()) : x;
  }

  Value* FloatBin(ir::BinOp op, Value* x, Value* y, DType t) {
    x = ToF32(x);
    y = ToF32(y);
    Value* r = nullptr;
    switch (op) {
      case ir::BinOp::kAdd:
        r = b_.CreateFAdd(x, y);
        break;
      case ir::BinOp::kSub:
        r = b_.CreateFSub(x, y);
        break;
      case ir::BinOp::kMul:
        r = b_.CreateFMul(x, y);
        break;
      case ir::BinOp::kDiv:
        r = b_.CreateFDiv(x, y);
        break;
      case ir::BinOp::kMin:
        r = b_.CreateBinaryIntrinsic(I::minnum, x, y);
        break;
      case ir::BinOp::kMax:
        r = b_.CreateBinaryIntrinsic(I::maxnum, x, y);
        break;
      case ir::BinOp::kFloorDiv:
        r = b_.CreateUnaryIntrinsic(I::floor, b_.CreateFDiv(x, y));
        break;
      case ir::BinOp::kMod:
        r = b_.CreateFSub(x,
                          b_.CreateFMul(b_.CreateUnaryIntrinsic(I::floor, b_.CreateFDiv(x, y)), y));
        break;
      default:
        r = llvm::ConstantFP::get(b_.getFloatTy(), 0.0);
    }
    return FromF32(r, t);
  }

  Value* IntBin(ir::BinOp op, Value* x, Value* y, DType t) {
    bool u = t == DType::kU32 || t == DType::kBool;
    unsigned bits = x->getType()->getIntegerBitWidth();
    switch (op) {
      case ir::BinOp::kAdd:
        return b_.CreateAdd(x, y);
      case ir::BinOp::kSub:
        return b_.CreateSub(x, y);
      case ir::BinOp::kMul:
        return b_.CreateMul(x, y);
      case ir::BinOp::kDiv:
        return llvm::Constant::getNullValue(x->getType());
      case ir::BinOp::kFloorDiv:
      case ir::BinOp::kMod: {
        bool mod = op == ir::BinOp::kMod;
        if (auto* c = llvm::dyn_cast<llvm::ConstantInt>(y)) {
          if (c->getValue().isPowerOf2() && !c->isNegative()) {
            if (mod) return b_.CreateAnd(x, c->getValue() - 1);
            unsigned sh = c->getValue().logBase2();
            return u ? b_.CreateLShr(x, sh) : b_.CreateAShr(x, sh);
          }
        }
        if (u) return mod ? b_.CreateURem(x, y) : b_.CreateUDiv(x, y);
        Value* q = b_.CreateSDiv(x, y);
        Value* r = b_.CreateSRem(x, y);
        Value* zero = llvm::Constant::getNullValue(x->getType());
        Value* fix =
            b_.CreateAnd(b_.CreateICmpNE(r, zero), b_.CreateICmpSLT(b_.CreateXor(r, y), zero));
        if (mod) return b_.CreateSelect(fix, b_.CreateAdd(r, y), r);
        return b_.CreateSub(q, b_.CreateZExt(fix, x->getType()));
      }
      case ir::BinOp::kShl: {
        Value* ok = b_.CreateICmpULT(y, llvm::ConstantInt::get(y->getType(), bits));
        return b_.CreateSelect(ok, b_.CreateShl(x, y), llvm::Constant::getNullValue(x->getType()));
      }
      case ir::BinOp::kShr: {
        Value* ok = b_.CreateICmpULT(y, llvm::ConstantInt::get(y->getType(), bits));
        if (u)
          return b_.CreateSelect(ok, b_.CreateLShr(x, y),
                                 llvm::Constant::getNullValue(x->getType()));
        return b_.CreateSelect(ok, b_.CreateAShr(x, y), b_.CreateAShr(x, bits - 1));
      }
      case ir::BinOp::kAnd:
        return b_.CreateAnd(x, y);
      case ir::BinOp::kOr:
        return b_.CreateOr(x, y);
      case ir::BinOp::kXor:
        return b_.CreateXor(x, y);
      case ir::BinOp::kMin:
        return b_.CreateBinaryIntrinsic(u ? I::umin : I::smin, x, y);
      case ir::BinOp::kMax:
        return b_.CreateBinaryIntrinsic(u ? I::umax : I::smax, x, y);
    }
    return x;
  }

  Value* Combine(ir::ReduceKind k, Value* x, Value* y, DType t) {
    if (dsl::IsFloat(t))
      return FloatBin(k == ir::ReduceKind::kMax ? ir::BinOp::kMax : ir::BinOp::kAdd, x, y, t);
    return IntBin(k == ir::ReduceKind::kMax ? ir::BinOp::kMax : ir::BinOp::kAdd, x, y, t);
  }

  // ---- special registers
  Value* Tid() { return ops_->ThreadId(b_); }
  Value* Lane() { return b_.CreateURem(Tid(), C32(f_.warp_size)); }
  Value* Warp() { return b_.CreateUDiv(Tid(), C32(f_.warp_size)); }

  // ---- memory
  struct Root {
    ViewFact::Root kind;
    Value* base;
    DType dt;
    dsl::Swizzle swz;
    int tensor = -1;
  };
  absl::StatusOr<Root> RootOf(const ir::Op& op, int v) {
    const ViewFact& f = facts_[v];
    Root r;
    r.kind = f.root;
    r.dt = VT(v).dtype;
    switch (f.root) {
      case ViewFact::Root::kTensor:
        r.base = tensor_args_[f.tensor];
        r.tensor = f.tensor;
        return r;
      case ViewFact::Root::kShared:
        r.base = shared_[f.alloc];
        r.swz = f.alloc->layout.swizzle;
        return r;
      case ViewFact::Root::kLocal:
        r.base = locals_[f.alloc];
        r.swz = f.alloc->layout.swizzle;
        return r;
      case ViewFact::Root::kNone:
        break;
    }
    return LoweringError(m_, op.loc, "codegen cannot tell which buffer this view windows");
  }
  Value* Swizzle(Value* o, const dsl::Swizzle& s) {
    if (!s.active()) return o;
    int64_t mask = ((int64_t{1} << s.b) - 1) << s.m;
    return b_.CreateXor(o, b_.CreateAnd(b_.CreateLShr(o, s.s), C64(mask)));
  }
  // Element offset (before swizzling) of idx in view v.
  Value* Linear(const ViewVals& vv, const std::vector<Value*>& idx) {
    Value* o = vv.off;
    for (size_t d = 0; d < idx.size(); ++d) o = b_.CreateAdd(o, b_.CreateMul(idx[d], vv.stride[d]));
    return o;
  }
  Value* ElemPtr(const Root& r, Value* lin) {
    Value* p = Swizzle(lin, r.swz);
    if (r.kind != ViewFact::Root::kTensor) p = b_.CreateTrunc(p, b_.getInt32Ty());
    return b_.CreateGEP(MemTy(r.dt), r.base, p);
  }
  std::vector<Value*> Indices(const ir::Op& op, int first) {
    std::vector<Value*> idx;
    for (size_t i = first; i < op.operands.size(); ++i)
      idx.push_back(b_.CreateSExt(Get(op.operands[i]), b_.getInt64Ty()));
    return idx;
  }

  // AMD buffer resource for tensor t (hardware bounds = the tensor's bytes).
  Value* Rsrc(int t) { return rsrc_[t]; }
  Value* BufferLoad(int t, Type* ty, Value* byte_off) {
    Value* off = b_.CreateTrunc(byte_off, b_.getInt32Ty());
    return Call(I::amdgcn_raw_ptr_buffer_load, {Rsrc(t), off, C32(0), C32(0)}, {ty});
  }

  // ---- parameters
  absl::Status BindParams() {
    if (!f_.is_kernel) {
      for (size_t i = 0; i < f_.params.size(); ++i) Set(f_.params[i], fn_->getArg(i));
      return absl::OkStatus();
    }
    int a = 0;
    for (size_t i = 0; i < f_.tensors.size(); ++i) tensor_args_.push_back(fn_->getArg(a++));
    for (int dv : f_.dim_vars) Set(dv, fn_->getArg(a++));
    for (const ir::ScalarParam& s : f_.scalars) Set(s.var, fn_->getArg(a++));
    // Tensor views: offset 0, shape and stride from the dims.
    auto sym = [&](const ir::SymInt& s) {
      Value* v = C64(s.coeff);
      for (int d : s.syms) v = b_.CreateMul(v, b_.CreateZExt(Get(f_.dim_vars[d]), b_.getInt64Ty()));
      return v;
    };
    for (size_t i = 0; i < f_.tensors.size(); ++i) {
      const ir::TensorParam& t = f_.tensors[i];
      ViewVals vv;
      vv.off = C64(0);
      Value* cos = C64(1);
      for (size_t d = 0; d < t.shape.size(); ++d) {
        vv.shape.push_back(sym(t.shape[d]));
        vv.stride.push_back(sym(t.stride[d]));
        cos = b_.CreateAdd(cos,
                           b_.CreateMul(b_.CreateSub(vv.shape.back(), C64(1)), vv.stride.back()));
      }
      StoreView(t.var, vv);
      if (amd_) {
        Value* bytes = b_.CreateMul(cos, C64(Bytes(t.dtype)));
        bytes = b_.CreateBinaryIntrinsic(I::umin, bytes, C64(0xFFFFFFFFll));
        rsrc_.push_back(Call(I::amdgcn_make_buffer_rsrc,
                             {tensor_args_[i], b_.getInt16(0),
                              b_.CreateTrunc(bytes, b_.getInt32Ty()), C32(0x00020000)},
                             {tensor_args_[i]->getType()}));
      }
    }
    return absl::OkStatus();
  }

  // ---- blocks
  void EnsureOpen() {
    if (b_.GetInsertBlock()->getTerminator())
      b_.SetInsertPoint(BasicBlock::Create(ctx_, "dead", fn_));
  }
  absl::Status Block(const ir::Block& blk) {
    for (const ir::Op& op : blk) {
      EnsureOpen();
      RETURN_IF_ERROR(One(op));
    }
    EnsureOpen();
    return absl::OkStatus();
  }

  absl::Status One(const ir::Op& op);
  absl::Status Copy(const ir::Op& op);
  absl::Status LoadFragment(const ir::Op& op);
  absl::Status StoreFragment(const ir::Op& op);
  absl::Status Mma(const ir::Op& op);
  absl::Status FragMath(const ir::Op& op);
  absl::Status Shuffle(const ir::Op& op);
  Value* WarpReduce(ir::ReduceKind k, Value* x, DType t);
  Value* BlockReduce(const ir::Op& op, Value* x, DType t);
  absl::Status Hint(const ir::Op& op);
  // Hopper (lower_hopper.h spells the instructions).
  absl::Status Hopper(const ir::Op& op);
  absl::Status Wgmma(const ir::Op& op);
  absl::Status WgmmaWait(const ir::Op& op);
  // The TMA store epilogue: tma_store, its commit and wait, warpgroup_barrier.
  absl::Status Epilogue(const ir::Op& op);
  // The shared address of view `v` (root `r`) and its tensor map for a TMA
  // of op's tensor and box.
  absl::Status TmaOperands(const ir::Op& op, int v, Value** smem, Value** tmap);
  // Stores fragment elements `elems` of op's accumulator to op's destination
  // at (row - r0, col - c0); paired 2-element stores where the layout allows.
  absl::Status StoreFragElems(const ir::Op& op, const std::vector<int>& elems, Value* r0,
                              Value* c0);
  Value* SharedAddr(Value* ptr) { return b_.CreatePtrToInt(ptr, b_.getInt32Ty()); }
  Value* BarrierAddr(const ir::Op& op, int first);
  Value* WarpGroupUnit(const dsl::FragGeom& g) {
    return b_.CreateSub(b_.CreateUDiv(Tid(), C32(g.mma->warp_size)), C32(g.first));
  }
  Value* ShflValue(Value* x, DType t, const std::function<Value*(Value*)>& shfl);

  // Fragment coordinates: (row, col) of lane-element e of fragment var v for
  // this thread, as i64 values.
  absl::Status FragCoord(const ir::Op& op, int v, int e, Value** row, Value** col);
  Value* EmitLanePart(const LanePart& p, Value* lane);

  ModuleState* ms_;
  const ir::Module& m_;
  const ir::Function& f_;
  llvm::Function* fn_;
  llvm::LLVMContext& ctx_;
  IRBuilder<> b_;
  std::unique_ptr<IRBuilder<>> alloca_b_;
  TargetOps* ops_;
  bool amd_ = false;
  std::vector<ViewFact> facts_;
  std::map<int, AllocaInst*> slots_;
  std::map<int, ViewSlots> views_;
  std::map<int, AllocaInst*> frags_;
  std::vector<Value*> tensor_args_;
  std::vector<Value*> rsrc_;
  std::map<int, int> desc_src_;     // wgmma operand var -> the view var it describes
  std::map<int, Value*> bar_base_;  // mbarrier array var -> its shared u64 array
  std::map<const ir::Op*, std::vector<int>> wait_accs_;  // kWgmmaWait -> accumulators

 public:
  std::map<const ir::Op*, Value*> shared_;  // set by the kernel driver
  std::map<const ir::Op*, Value*> locals_;
  std::map<const ir::Op*, Value*> mbars_;  // kMbarrier -> its u64 array
  // Tensor maps (kernel params): key (tensor, box rows, box cols, swizzled).
  std::map<std::array<int64_t, 4>, Value*> tmaps_;
  int reg_cap = 0;                      // registers per thread at entry (setmaxnreg picks inc/dec)
  bool b_swap = false, b_trans = true;  // descriptor variants (ARGUS_WGMMA_VARIANT)
};

Value* Emitter::EmitLanePart(const LanePart& p, Value* lane) {
  Value* r = C64(0);
  int n = static_cast<int>(p.weight.size());
  for (int b = 0; b < n;) {
    if (p.weight[b] == 0) {
      ++b;
      continue;
    }
    int e = b + 1;
    while (e < n && p.weight[e] == 2 * p.weight[e - 1]) ++e;
    Value* bits = b_.CreateAnd(b_.CreateLShr(lane, b), C32((1 << (e - b)) - 1));
    r = b_.CreateAdd(r, b_.CreateMul(b_.CreateZExt(bits, b_.getInt64Ty()), C64(p.weight[b])));
    b = e;
  }
  return r;
}

absl::Status Emitter::FragCoord(const ir::Op& op, int v, int e, Value** row, Value** col) {
  dsl::FragGeom g = VT(v).frag.Geom();
  int ws = g.mma->warp_size;
  int r0, c0;
  g.Coord(0, 0, e, &r0, &c0);
  LanePart pr, pc;
  int lane_bits = 0;
  while ((1 << lane_bits) < ws) ++lane_bits;
  for (int b = 0; b < lane_bits; ++b) {
    int r, c;
    g.Coord(0, 1 << b, e, &r, &c);
    pr.weight.push_back(r - r0);
    pc.weight.push_back(c - c0);
  }
  for (int l = 0; l < ws; ++l) {
    int r, c, er = r0, ec = c0;
    g.Coord(0, l, e, &r, &c);
    for (int b = 0; b < lane_bits; ++b) {
      if (l >> b & 1) {
        er += pr.weight[b];
        ec += pc.weight[b];
      }
    }
    if (r != er || c != ec)
      return LoweringError(m_, op.loc, "this MMA lane layout is not linear in the lane bits");
  }
  Value* lane = ws == f_.warp_size ? Lane() : b_.CreateURem(Tid(), C32(ws));
  Value* warp = ws == f_.warp_size && g.first == 0 ? Warp() : WarpGroupUnit(g);
  Value* wr = C64(0);
  Value* wc = C64(0);
  if (g.role != dsl::FragRole::kB)
    wr = b_.CreateMul(b_.CreateZExt(b_.CreateUDiv(warp, C32(g.wn)), b_.getInt64Ty()),
                      C64(g.bm / g.wm));
  if (g.role != dsl::FragRole::kA)
    wc = b_.CreateMul(b_.CreateZExt(b_.CreateURem(warp, C32(g.wn)), b_.getInt64Ty()),
                      C64(g.bn / g.wn));
  *row = b_.CreateAdd(b_.CreateAdd(wr, C64(r0)), EmitLanePart(pr, lane));
  *col = b_.CreateAdd(b_.CreateAdd(wc, C64(c0)), EmitLanePart(pc, lane));
  return absl::OkStatus();
}

// Fragment math (docs/dsl.md "Fragment math"): per-element f32 code on the
// fragment arrays, in the element order the interpreter uses.
absl::Status Emitter::FragMath(const ir::Op& op) {
  const ir::Type& rt = VT(op.result);
  dsl::FragGeom g = rt.frag.Geom();
  int n = g.PerLane();
  Type* f32 = b_.getFloatTy();
  switch (op.code) {
    case OpCode::kFragEw: {
      auto fop = static_cast<ir::FragEwOp>(op.sub);
      std::vector<Value*> scalar(op.operands.size(), nullptr);
      for (size_t j = 0; j < op.operands.size(); ++j) {
        int v = op.operands[j];
        if (VT(v).is_frag()) continue;
        DType t = VT(v).dtype;
        scalar[j] = t == DType::kBool ? Get(v) : Convert(Get(v), t, DType::kF32);
      }
      auto at = [&](size_t j, int e) -> Value* {
        if (scalar[j]) return scalar[j];
        int v = op.operands[j];
        bool row_in_acc =
            VT(v).frag.role == dsl::FragRole::kRow && rt.frag.role == dsl::FragRole::kAcc;
        return FragGet(v, row_in_acc ? g.RowSlot(e) : e);
      };
      for (int e = 0; e < n; ++e) {
        Value* x = at(0, e);
        Value* y = op.operands.size() > 1 ? at(1, e) : nullptr;
        Value* r = nullptr;
        auto cmp = [&](llvm::CmpInst::Predicate p) {
          return b_.CreateUIToFP(b_.CreateFCmp(p, x, y), f32);
        };
        switch (fop) {
          case ir::FragEwOp::kAdd:
            r = b_.CreateFAdd(x, y);
            break;
          case ir::FragEwOp::kSub:
            r = b_.CreateFSub(x, y);
            break;
          case ir::FragEwOp::kMul:
            r = b_.CreateFMul(x, y);
            break;
          case ir::FragEwOp::kDiv:
            r = b_.CreateFDiv(x, y);
            break;
          case ir::FragEwOp::kMax:
            r = b_.CreateBinaryIntrinsic(I::maxnum, x, y);
            break;
          case ir::FragEwOp::kMin:
            r = b_.CreateBinaryIntrinsic(I::minnum, x, y);
            break;
          case ir::FragEwOp::kExp2:
            r = ops_->Exp2Ftz(b_, x);
            break;
          case ir::FragEwOp::kLt:
            r = cmp(llvm::CmpInst::FCMP_OLT);
            break;
          case ir::FragEwOp::kLe:
            r = cmp(llvm::CmpInst::FCMP_OLE);
            break;
          case ir::FragEwOp::kGt:
            r = cmp(llvm::CmpInst::FCMP_OGT);
            break;
          case ir::FragEwOp::kGe:
            r = cmp(llvm::CmpInst::FCMP_OGE);
            break;
          case ir::FragEwOp::kEq:
            r = cmp(llvm::CmpInst::FCMP_OEQ);
            break;
          case ir::FragEwOp::kNe:
            r = cmp(llvm::CmpInst::FCMP_UNE);
            break;
          case ir::FragEwOp::kSelect: {
            Value* c = x->getType()->isFloatTy()
                           ? b_.CreateFCmpUNE(x, llvm::ConstantFP::get(f32, 0.0))
                           : x;
            r = b_.CreateSelect(c, y, at(2, e));
            break;
          }
          case ir::FragEwOp::kFma:
            r = b_.CreateIntrinsic(I::fma, {f32}, {x, y, at(2, e)});
            break;
        }
        FragSet(op.result, e, r);
      }
      return absl::OkStatus();
    }
    case OpCode::kFragRowReduce: {
      int acc = op.operands[0];
      dsl::FragGeom ga = VT(acc).frag.Geom();
      bool is_max = op.sub == static_cast<uint8_t>(ir::ReduceKind::kMax);
      auto comb = [&](Value* a, Value* b) {
        return is_max ? b_.CreateBinaryIntrinsic(I::maxnum, a, b) : b_.CreateFAdd(a, b);
      };
      std::vector<Value*> part(n, nullptr);
      if (is_max) {
        // max is exact in any order: a pairwise tree per row (log depth, where
        // the element-order chain puts 32+ dependent maxes before the exp2s).
        std::vector<std::vector<Value*>> row(n);
        for (int e = 0; e < ga.PerLane(); ++e) row[ga.RowSlot(e)].push_back(FragGet(acc, e));
        for (int j = 0; j < n; ++j) {
          std::vector<Value*>& v = row[j];
          while (v.size() > 1) {
            std::vector<Value*> next;
            for (size_t i = 0; i + 1 < v.size(); i += 2) next.push_back(comb(v[i], v[i + 1]));
            if (v.size() % 2) next.push_back(v.back());
            v.swap(next);
          }
          part[j] = v.empty() ? nullptr : v[0];
        }
      } else {
        for (int e = 0; e < ga.PerLane(); ++e) {
          int slot = ga.RowSlot(e);
          Value* x = FragGet(acc, e);
          part[slot] = part[slot] ? comb(part[slot], x) : x;
        }
      }
      int bits = dsl::AccColumnLaneBits(*ga.mma);
      for (int b = 1; b < ga.mma->warp_size; b <<= 1) {
        if (!(bits & b)) continue;
        for (int j = 0; j < n; ++j) {
          Value* o =
              ShflValue(part[j], DType::kF32, [&](Value* w) { return ops_->ShflXor(b_, w, b); });
          part[j] = comb(part[j], o);
        }
      }
      for (int j = 0; j < n; ++j) FragSet(op.result, j, part[j]);
      return absl::OkStatus();
    }
    case OpCode::kFragCoord:
      for (int e = 0; e < n; ++e) {
        Value *row, *col;
        RETURN_IF_ERROR(FragCoord(op, op.result, e, &row, &col));
        FragSet(op.result, e, b_.CreateSIToFP(op.ints[0] == 0 ? row : col, f32));
      }
      return absl::OkStatus();
    case OpCode::kFragRowFill: {
      Value* x = Convert(Get(op.operands[1]), VT(op.operands[1]).dtype, DType::kF32);
      for (int e = 0; e < n; ++e) FragSet(op.result, e, x);
      return absl::OkStatus();
    }
    case OpCode::kToOperand: {
      int acc = op.operands[0];
      dsl::FragGeom gc = VT(acc).frag.Geom();
      std::vector<int> src(n);
      for (int e = 0; e < n; ++e) {
        // The accumulator element with the same coordinates, the same for every lane.
        int q = -1;
        for (int l = 0; l < g.mma->warp_size; ++l) {
          int r0, c0, ql = -1;
          g.Coord(0, l, e, &r0, &c0);
          for (int k = 0; k < gc.PerLane() && ql < 0; ++k) {
            int r1, c1;
            gc.Coord(0, l, k, &r1, &c1);
            if (r1 == r0 && c1 == c0) ql = k;
          }
          if (ql < 0 || (q >= 0 && ql != q))
            return LoweringError(m_, op.loc, "to_operand: the layouts differ across lanes");
          q = ql;
        }
        src[e] = q;
      }
      // Elements 2j, 2j+1 share a .b32 operand register: one cvt.rn.bf16x2.f32
      // per pair (its first source goes to the high half).
      for (int e = 0; e + 1 < n; e += 2) {
        Value* lo = FragGet(acc, src[e]);
        Value* hi = FragGet(acc, src[e + 1]);
        if (rt.dtype == DType::kBF16) {
          Value* w = Call(I::nvvm_ff2bf16x2_rn, {hi, lo});
          FragSetPair(op.result, e, b_.CreateBitCast(w, b_.getInt32Ty()));
        } else {
          FragSet(op.result, e,
                  b_.CreateBitCast(b_.CreateFPTrunc(lo, Ty(rt.dtype)), b_.getInt16Ty()));
          FragSet(op.result, e + 1,
                  b_.CreateBitCast(b_.CreateFPTrunc(hi, Ty(rt.dtype)), b_.getInt16Ty()));
        }
      }
      return absl::OkStatus();
    }
    default:
      return LoweringError(m_, op.loc, "not a fragment math op");
  }
}

absl::Status Emitter::One(const ir::Op& op) {
  switch (op.code) {
    case OpCode::kConst: {
      const ir::Type& t = VT(op.result);
      if (dsl::IsFloat(t.dtype))
        Set(op.result, llvm::ConstantFP::get(Ty(t.dtype), op.fval));
      else
        Set(op.result, llvm::ConstantInt::get(Ty(t.dtype), op.ints.empty() ? 0 : op.ints[0], true));
      return absl::OkStatus();
    }
    case OpCode::kMov: {
      const ir::Type& t = VT(op.result);
      if (t.is_view()) {
        StoreView(op.result, LoadView(op.operands[0]));
      } else if (t.is_frag() && t.frag.is_desc()) {
        desc_src_[op.result] = desc_src_[op.operands[0]];
      } else if (t.is_frag()) {
        int n = t.frag.Geom().PerLane();
        if (FragPairs(op.result) && FragPairs(op.operands[0])) {
          for (int e = 0; e < n; e += 2) FragSetPair(op.result, e, FragGetPair(op.operands[0], e));
        } else {
          for (int e = 0; e < n; ++e) FragSet(op.result, e, FragGet(op.operands[0], e));
        }
      } else {
        Set(op.result, Convert(Get(op.operands[0]), VT(op.operands[0]).dtype, t.dtype));
      }
      return absl::OkStatus();
    }
    case OpCode::kBinary: {
      DType t = VT(op.result).dtype;
      Value* x = Convert(Get(op.operands[0]), VT(op.operands[0]).dtype, t);
      Value* y = Convert(Get(op.operands[1]), VT(op.operands[1]).dtype, t);
      auto bop = static_cast<ir::BinOp>(op.sub);
      Set(op.result, dsl::IsFloat(t) ? FloatBin(bop, x, y, t) : IntBin(bop, x, y, t));
      return absl::OkStatus();
    }
    case OpCode::kUnary: {
      DType t = VT(op.result).dtype;
      Value* x = Get(op.operands[0]);
      Value* r;
      switch (static_cast<ir::UnaryOp>(op.sub)) {
        case ir::UnaryOp::kNeg:
          r = dsl::IsFloat(t) ? FromF32(b_.CreateFNeg(ToF32(x)), t) : b_.CreateNeg(x);
          break;
        case ir::UnaryOp::kNot:
          r = b_.CreateICmpEQ(x, llvm::Constant::getNullValue(x->getType()));
          break;
        default:
          r = b_.CreateNot(x);
      }
      Set(op.result, Convert(r, op.sub == 1 ? DType::kBool : t, t));
      return absl::OkStatus();
    }
    case OpCode::kCompare: {
      DType t = VT(op.operands[0]).dtype;
      Value* x = Get(op.operands[0]);
      Value* y = Convert(Get(op.operands[1]), VT(op.operands[1]).dtype, t);
      auto c = static_cast<ir::CmpOp>(op.sub);
      Value* r;
      if (dsl::IsFloat(t)) {
        static const llvm::CmpInst::Predicate kF[] = {
            llvm::CmpInst::FCMP_OLT, llvm::CmpInst::FCMP_OLE, llvm::CmpInst::FCMP_OGT,
            llvm::CmpInst::FCMP_OGE, llvm::CmpInst::FCMP_OEQ, llvm::CmpInst::FCMP_UNE};
        r = b_.CreateFCmp(kF[static_cast<int>(c)], ToF32(x), ToF32(y));
      } else {
        bool u = t == DType::kU32 || t == DType::kBool;
        static const llvm::CmpInst::Predicate kS[] = {
            llvm::CmpInst::ICMP_SLT, llvm::CmpInst::ICMP_SLE, llvm::CmpInst::ICMP_SGT,
            llvm::CmpInst::ICMP_SGE, llvm::CmpInst::ICMP_EQ,  llvm::CmpInst::ICMP_NE};
        static const llvm::CmpInst::Predicate kU[] = {
            llvm::CmpInst::ICMP_ULT, llvm::CmpInst::ICMP_ULE, llvm::CmpInst::ICMP_UGT,
            llvm::CmpInst::ICMP_UGE, llvm::CmpInst::ICMP_EQ,  llvm::CmpInst::ICMP_NE};
        r = b_.CreateICmp((u ? kU : kS)[static_cast<int>(c)], x, y);
      }
      Set(op.result, r);
      return absl::OkStatus();
    }
    case OpCode::kSelect: {
      DType t = VT(op.result).dtype;
      Set(op.result, b_.CreateSelect(Get(op.operands[0]),
                                     Convert(Get(op.operands[1]), VT(op.operands[1]).dtype, t),
                                     Convert(Get(op.operands[2]), VT(op.operands[2]).dtype, t)));
      return absl::OkStatus();
    }
    case OpCode::kCast:
      Set(op.result, Convert(Get(op.operands[0]), VT(op.operands[0]).dtype, VT(op.result).dtype));
      return absl::OkStatus();
    case OpCode::kMath: {
      DType t = VT(op.result).dtype;
      Value* x = Convert(Get(op.operands[0]), VT(op.operands[0]).dtype, t);
      if (!dsl::IsFloat(t)) {
        Set(op.result, b_.CreateBinaryIntrinsic(I::abs, x, b_.getFalse()));
        return absl::OkStatus();
      }
      Value* f = ToF32(x);
      Value* r;
      switch (static_cast<ir::MathOp>(op.sub)) {
        case ir::MathOp::kExp:
          r = ops_->Exp2(b_,
                         b_.CreateFMul(f, llvm::ConstantFP::get(f->getType(), 1.4426950408889634)));
          break;
        case ir::MathOp::kExp2:
          r = ops_->Exp2(b_, f);
          break;
        case ir::MathOp::kLog:
          r = b_.CreateFMul(ops_->Log2(b_, f),
                            llvm::ConstantFP::get(f->getType(), 0.6931471805599453));
          break;
        case ir::MathOp::kSqrt:
          r = b_.CreateUnaryIntrinsic(I::sqrt, f);
          break;
        case ir::MathOp::kRsqrt:
          r = ops_->Rsqrt(b_, f);
          break;
        default:
          r = b_.CreateUnaryIntrinsic(I::fabs, f);
      }
      Set(op.result, FromF32(r, t));
      return absl::OkStatus();
    }
    case OpCode::kSpecial: {
      Value* r = nullptr;
      switch (static_cast<ir::SpecialOp>(op.sub)) {
        case ir::SpecialOp::kThreadId:
          r = Tid();
          break;
        case ir::SpecialOp::kBlockId:
          r = ops_->BlockId(b_, static_cast<int>(op.ints.empty() ? 0 : op.ints[0]));
          break;
        case ir::SpecialOp::kGridDim:
          r = ops_->GridDim(b_, static_cast<int>(op.ints.empty() ? 0 : op.ints[0]));
          break;
        case ir::SpecialOp::kWarpId:
          r = Warp();
          break;
        case ir::SpecialOp::kLaneId:
          r = Lane();
          break;
        case ir::SpecialOp::kWarpSize:
          r = C32(f_.warp_size);
          break;
        case ir::SpecialOp::kWarpGroupId:
          r = b_.CreateLShr(Tid(), C32(7));
          break;
      }
      Set(op.result, Convert(r, DType::kI32, VT(op.result).dtype));
      return absl::OkStatus();
    }
    case OpCode::kAllocShared:
    case OpCode::kAllocLocal: {
      ViewVals vv;
      vv.off = C64(0);
      for (size_t d = 0; d < op.layout.shape.size(); ++d) {
        vv.shape.push_back(C64(op.layout.shape[d]));
        vv.stride.push_back(C64(op.layout.stride[d]));
      }
      StoreView(op.result, vv);
      return absl::OkStatus();
    }
    case OpCode::kTile: {
      ViewVals vv = LoadView(op.operands[0]);
      for (size_t d = 0; d < vv.shape.size(); ++d) {
        Value* c = b_.CreateSExt(Get(op.operands[1 + d]), b_.getInt64Ty());
        vv.off = b_.CreateAdd(vv.off, b_.CreateMul(b_.CreateMul(c, C64(op.ints[d])), vv.stride[d]));
        vv.shape[d] = C64(op.ints[d]);
      }
      StoreView(op.result, vv);
      return absl::OkStatus();
    }
    case OpCode::kIndex: {
      ViewVals vv = LoadView(op.operands[0]);
      int d = static_cast<int>(op.ints[0]);
      Value* i = b_.CreateSExt(Get(op.operands[1]), b_.getInt64Ty());
      vv.off = b_.CreateAdd(vv.off, b_.CreateMul(i, vv.stride[d]));
      vv.shape.erase(vv.shape.begin() + d);
      vv.stride.erase(vv.stride.begin() + d);
      StoreView(op.result, vv);
      return absl::OkStatus();
    }
    case OpCode::kSlice: {
      ViewVals vv = LoadView(op.operands[0]);
      int d = static_cast<int>(op.ints[0]);
      int64_t step = op.ints[1];
      Value* lo = b_.CreateSExt(Get(op.operands[1]), b_.getInt64Ty());
      Value* hi = b_.CreateSExt(Get(op.operands[2]), b_.getInt64Ty());
      hi = b_.CreateBinaryIntrinsic(I::smax, hi, lo);
      vv.off = b_.CreateAdd(vv.off, b_.CreateMul(lo, vv.stride[d]));
      vv.shape[d] = b_.CreateUDiv(b_.CreateAdd(b_.CreateSub(hi, lo), C64(step - 1)), C64(step));
      vv.stride[d] = b_.CreateMul(vv.stride[d], C64(step));
      StoreView(op.result, vv);
      return absl::OkStatus();
    }
    case OpCode::kTranspose: {
      ViewVals vv = LoadView(op.operands[0]);
      std::swap(vv.shape[0], vv.shape[1]);
      std::swap(vv.stride[0], vv.stride[1]);
      StoreView(op.result, vv);
      return absl::OkStatus();
    }
    case OpCode::kReshape: {
      ViewVals vv = LoadView(op.operands[0]);
      vv.shape.clear();
      vv.stride.assign(op.ints.size(), nullptr);
      int64_t st = 1;
      for (int d = static_cast<int>(op.ints.size()) - 1; d >= 0; --d) {
        vv.stride[d] = C64(st);
        st *= op.ints[d];
      }
      for (int64_t s : op.ints) vv.shape.push_back(C64(s));
      StoreView(op.result, vv);
      return absl::OkStatus();
    }
    case OpCode::kExtent: {
      ViewVals vv = LoadView(op.operands[0]);
      Set(op.result, b_.CreateTrunc(vv.shape[op.ints[0]], b_.getInt32Ty()));
      return absl::OkStatus();
    }
    case OpCode::kLoad:
    case OpCode::kStore:
    case OpCode::kBufferLoad: {
      int v = op.operands[0];
      ASSIGN_OR_RETURN(Root r, RootOf(op, v));
      ViewVals vv = LoadView(v);
      bool store = op.code == OpCode::kStore;
      std::vector<Value*> idx = Indices(op, store ? 2 : 1);
      Value* lin = Linear(vv, idx);
      if (store) {
        Value* x = Convert(Get(op.operands[1]), VT(op.operands[1]).dtype, r.dt);
        b_.CreateStore(ToMem(x, r.dt), ElemPtr(r, lin));
        return absl::OkStatus();
      }
      if (op.code == OpCode::kLoad) {
        Set(op.result, Convert(FromMem(b_.CreateLoad(MemTy(r.dt), ElemPtr(r, lin)), r.dt), r.dt,
                               VT(op.result).dtype));
        return absl::OkStatus();
      }
      // Buffer load: out-of-bounds reads give 0.
      Value* inb = b_.getTrue();
      for (size_t d = 0; d < idx.size(); ++d)
        inb = b_.CreateAnd(inb, b_.CreateICmpULT(idx[d], vv.shape[d]));
      DType rt = VT(op.result).dtype;
      if (amd_ && r.kind == ViewFact::Root::kTensor && !r.swz.active()) {
        Type* it = b_.getIntNTy(8 * Bytes(r.dt));
        Value* off = b_.CreateSelect(inb, b_.CreateMul(lin, C64(Bytes(r.dt))), C64(0xFFFFFFFFll));
        Value* raw = BufferLoad(r.tensor, it, off);
        Value* x = r.dt == DType::kBool ? b_.CreateTrunc(raw, b_.getInt1Ty())
                                        : b_.CreateBitCast(raw, MemTy(r.dt));
        Set(op.result, Convert(x, r.dt, rt));
        return absl::OkStatus();
      }
      Set(op.result, llvm::Constant::getNullValue(Ty(rt)));
      BasicBlock* yes = BasicBlock::Create(ctx_, "bl.in", fn_);
      BasicBlock* done = BasicBlock::Create(ctx_, "bl.done", fn_);
      b_.CreateCondBr(inb, yes, done);
      b_.SetInsertPoint(yes);
      Set(op.result, Convert(FromMem(b_.CreateLoad(MemTy(r.dt), ElemPtr(r, lin)), r.dt), r.dt, rt));
      b_.CreateBr(done);
      b_.SetInsertPoint(done);
      return absl::OkStatus();
    }
    case OpCode::kCopy:
      return Copy(op);
    case OpCode::kCommitGroup:
      if (!amd_) Call(I::nvvm_cp_async_commit_group, {});
      return absl::OkStatus();
    case OpCode::kWaitGroup:
      if (!amd_) Call(I::nvvm_cp_async_wait_group, {C32(op.ints[0])});
      return absl::OkStatus();
    case OpCode::kFragment: {
      int n = VT(op.result).frag.Geom().PerLane();
      for (int e = 0; e < n; ++e)
        FragSet(op.result, e, llvm::ConstantFP::get(b_.getFloatTy(), 0.0));
      return absl::OkStatus();
    }
    case OpCode::kLoadFragment:
      return LoadFragment(op);
    case OpCode::kStoreFragment:
      return StoreFragment(op);
    case OpCode::kMma:
      return Mma(op);
    case OpCode::kFragEw:
    case OpCode::kFragRowReduce:
    case OpCode::kFragCoord:
    case OpCode::kFragRowFill:
    case OpCode::kToOperand:
      return FragMath(op);
    case OpCode::kShfl:
      return Shuffle(op);
    case OpCode::kWarpReduce: {
      DType t = VT(op.result).dtype;
      Set(op.result, WarpReduce(static_cast<ir::ReduceKind>(op.sub), Get(op.operands[0]), t));
      return absl::OkStatus();
    }
    case OpCode::kBlockReduce: {
      DType t = VT(op.result).dtype;
      Set(op.result, BlockReduce(op, Get(op.operands[0]), t));
      return absl::OkStatus();
    }
    case OpCode::kBarrier:
      ops_->Barrier(b_);
      return absl::OkStatus();
    case OpCode::kHint:
      return Hint(op);
    case OpCode::kMbarrier:
    case OpCode::kMbarArrive:
    case OpCode::kMbarArriveTx:
    case OpCode::kMbarWait:
    case OpCode::kTmaLoad:
    case OpCode::kFenceProxyAsync:
    case OpCode::kSetMaxNReg:
    case OpCode::kWgmmaOperand:
    case OpCode::kWgmmaCommit:
      return Hopper(op);
    case OpCode::kWgmma:
      return Wgmma(op);
    case OpCode::kWgmmaWait:
      return WgmmaWait(op);
    case OpCode::kTmaStore:
    case OpCode::kTmaStoreCommit:
    case OpCode::kTmaStoreWait:
    case OpCode::kWarpgroupBarrier:
      return Epilogue(op);
    case OpCode::kNamedBarrier:
      if (op.ints[1])
        hopper::NamedBarrier(b_, Get(op.operands[0]), static_cast<int>(op.ints[0]));
      else
        hopper::NamedBarrierArrive(b_, Get(op.operands[0]), static_cast<int>(op.ints[0]));
      return absl::OkStatus();
    case OpCode::kTag:
    case OpCode::kAssertTag:
    case OpCode::kAssertTagEq:
    case OpCode::kResetTags:
    case OpCode::kYield:
      return absl::OkStatus();  // verified at compile time; nothing at run time
    case OpCode::kCall: {
      const ir::Function& callee = m_.functions[op.ints[0]];
      std::vector<Value*> args;
      for (size_t i = 0; i < op.operands.size(); ++i) {
        args.push_back(Convert(Get(op.operands[i]), VT(op.operands[i]).dtype,
                               callee.vars[callee.params[i]].type.dtype));
      }
      Value* r = b_.CreateCall(ms_->fns[op.ints[0]], args);
      if (op.result >= 0 && callee.ret.is_scalar())
        Set(op.result, Convert(r, callee.ret.dtype, VT(op.result).dtype));
      return absl::OkStatus();
    }
    case OpCode::kReturn:
      if (!op.operands.empty() && f_.ret.is_scalar())
        b_.CreateRet(Convert(Get(op.operands[0]), VT(op.operands[0]).dtype, f_.ret.dtype));
      else if (fn_->getReturnType()->isVoidTy())
        b_.CreateRetVoid();
      else
        b_.CreateRet(llvm::Constant::getNullValue(fn_->getReturnType()));
      return absl::OkStatus();
    case OpCode::kFor: {
      DType t = VT(op.result).dtype;
      Value* lo = Convert(Get(op.operands[0]), VT(op.operands[0]).dtype, t);
      Value* hi = Convert(Get(op.operands[1]), VT(op.operands[1]).dtype, t);
      int64_t step = op.ints[0];
      Set(op.result, lo);
      BasicBlock* cond = BasicBlock::Create(ctx_, "for.cond", fn_);
      BasicBlock* body = BasicBlock::Create(ctx_, "for.body", fn_);
      BasicBlock* exit = BasicBlock::Create(ctx_, "for.end", fn_);
      b_.CreateBr(cond);
      b_.SetInsertPoint(cond);
      Value* i = Get(op.result);
      b_.CreateCondBr(step > 0 ? b_.CreateICmpSLT(i, hi) : b_.CreateICmpSGT(i, hi), body, exit);
      b_.SetInsertPoint(body);
      RETURN_IF_ERROR(Block(op.regions[0]));
      Set(op.result, b_.CreateAdd(Get(op.result), llvm::ConstantInt::get(Ty(t), step, true)));
      b_.CreateBr(cond);
      b_.SetInsertPoint(exit);
      return absl::OkStatus();
    }
    case OpCode::kIf: {
      BasicBlock* then = BasicBlock::Create(ctx_, "if.then", fn_);
      BasicBlock* els = BasicBlock::Create(ctx_, "if.else", fn_);
      BasicBlock* done = BasicBlock::Create(ctx_, "if.end", fn_);
      b_.CreateCondBr(Get(op.operands[0]), then, els);
      b_.SetInsertPoint(then);
      RETURN_IF_ERROR(Block(op.regions[0]));
      b_.CreateBr(done);
      b_.SetInsertPoint(els);
      if (op.regions.size() > 1) RETURN_IF_ERROR(Block(op.regions[1]));
      b_.CreateBr(done);
      b_.SetInsertPoint(done);
      return absl::OkStatus();
    }
    case OpCode::kWhile: {
      BasicBlock* cond = BasicBlock::Create(ctx_, "while.cond", fn_);
      BasicBlock* body = BasicBlock::Create(ctx_, "while.body", fn_);
      BasicBlock* exit = BasicBlock::Create(ctx_, "while.end", fn_);
      b_.CreateBr(cond);
      b_.SetInsertPoint(cond);
      RETURN_IF_ERROR(Block(op.regions[0]));
      b_.CreateCondBr(Get(op.operands[0]), body, exit);
      b_.SetInsertPoint(body);
      RETURN_IF_ERROR(Block(op.regions[1]));
      b_.CreateBr(cond);
      b_.SetInsertPoint(exit);
      return absl::OkStatus();
    }
  }
  return LoweringError(m_, op.loc,
                       absl::StrCat("codegen does not lower ", ir::OpCodeName(op.code)));
}

absl::Status Emitter::Copy(const ir::Op& op) {
  int sv = op.operands[0], dv = op.operands[1];
  const ir::Type& st = VT(sv);
  int rank = st.rank();
  for (int64_t e : st.shape) {
    if (e < 0)
      return LoweringError(m_, op.loc, "codegen needs a copy with a compile-time tile shape",
                           "copy a .tile((R, C), ...) of the tensor");
  }
  const ir::Layout& tl = op.layout;
  int64_t vec = tl.vec;
  for (int d = 0; d < rank; ++d) {
    int64_t per = tl.shape[d] * (d == rank - 1 ? vec : 1);
    if (st.shape[d] % per != 0)
      return LoweringError(m_, op.loc,
                           absl::StrCat("copy extent ", st.shape[d], " of dim ", d,
                                        " is not a multiple of the thread layout's ", per));
  }
  ASSIGN_OR_RETURN(Root rs, RootOf(op, sv));
  ASSIGN_OR_RETURN(Root rd, RootOf(op, dv));
  ViewVals s = LoadView(sv), d = LoadView(dv);
  Value* tid = Tid();
  BasicBlock* done = BasicBlock::Create(ctx_, "copy.done", fn_);
  if (tl.Size() < f_.threads) {
    BasicBlock* go = BasicBlock::Create(ctx_, "copy", fn_);
    b_.CreateCondBr(b_.CreateICmpULT(tid, C32(tl.Size())), go, done);
    b_.SetInsertPoint(go);
  }
  int64_t tcols = rank == 2 ? tl.shape[1] : tl.shape[0];
  int64_t trows = rank == 2 ? tl.shape[0] : 1;
  Value* tr = rank == 2 ? b_.CreateZExt(b_.CreateUDiv(tid, C32(tcols)), b_.getInt64Ty()) : C64(0);
  Value* tc = b_.CreateZExt(b_.CreateURem(tid, C32(tcols)), b_.getInt64Ty());
  int64_t rows = rank == 2 ? st.shape[0] : 1;
  int64_t cols = st.shape[rank - 1];
  int64_t nI = rows / trows, nJ = cols / (tcols * vec);
  auto idx = [&](int64_t a, int64_t bj, int64_t v) {
    std::vector<Value*> ix;
    if (rank == 2) ix.push_back(b_.CreateAdd(tr, C64(a * trows)));
    ix.push_back(b_.CreateAdd(b_.CreateMul(tc, C64(vec)), C64(bj * tcols * vec + v)));
    return ix;
  };
  // Vector path: each thread's `vec` contiguous elements move in chunks of
  // 16, 8 or 4 bytes (cp.async on sm_90a when async; buffer loads on gfx942).
  const int eb = Bytes(rs.dt);
  const int total = eb * static_cast<int>(vec);
  const int bytes = total % 16 == 0 ? 16 : total % 8 == 0 ? 8 : total % 4 == 0 ? 4 : 0;
  const int64_t celems = bytes > 0 ? bytes / eb : 0;
  const ViewFact& fs = facts_[sv];
  const ViewFact& fd = facts_[dv];
  auto swz_ok = [&](const dsl::Swizzle& z) { return !z.active() || (int64_t{1} << z.m) >= celems; };
  bool vectorize = celems > 1 && rs.dt == rd.dt && fs.stride.back() == 1 && fd.stride.back() == 1 &&
                   swz_ok(rs.swz) && swz_ok(rd.swz) && rs.dt != DType::kBool;
  bool async = op.ints[0] != 0 && !amd_ && rs.kind == ViewFact::Root::kTensor &&
               rd.kind == ViewFact::Root::kShared;
  BasicBlock* scalar = BasicBlock::Create(ctx_, "copy.scalar", fn_);
  if (vectorize) {
    Value* bits = b_.CreateOr(s.off, d.off);
    if (rank == 2) bits = b_.CreateOr(bits, b_.CreateOr(s.stride[0], d.stride[0]));
    Value* aligned = b_.CreateICmpEQ(b_.CreateAnd(bits, C64(celems - 1)), C64(0));
    BasicBlock* vb = BasicBlock::Create(ctx_, "copy.vec", fn_);
    b_.CreateCondBr(aligned, vb, scalar);
    b_.SetInsertPoint(vb);
    Type* vt = bytes == 4 ? static_cast<Type*>(b_.getInt32Ty())
                          : llvm::FixedVectorType::get(b_.getInt32Ty(), bytes / 4);
    for (int64_t a = 0; a < nI; ++a) {
      for (int64_t bj = 0; bj < nJ; ++bj) {
        for (int64_t v0 = 0; v0 < vec; v0 += celems) {
          std::vector<Value*> ix = idx(a, bj, v0);
          Value* ls = Linear(s, ix);
          Value* dp = ElemPtr(rd, Linear(d, ix));
          if (async) {
            I::ID id = bytes == 16  ? I::nvvm_cp_async_cg_shared_global_16
                       : bytes == 8 ? I::nvvm_cp_async_ca_shared_global_8
                                    : I::nvvm_cp_async_ca_shared_global_4;
            Call(id, {dp, ElemPtr(rs, ls)});
            continue;
          }
          Value* x;
          if (amd_ && rs.kind == ViewFact::Root::kTensor)
            x = BufferLoad(rs.tensor, vt, b_.CreateMul(ls, C64(eb)));
          else
            x = b_.CreateAlignedLoad(vt, ElemPtr(rs, ls), llvm::Align(bytes));
          b_.CreateAlignedStore(x, dp, llvm::Align(bytes));
        }
      }
    }
    b_.CreateBr(done);
  } else {
    b_.CreateBr(scalar);
  }
  b_.SetInsertPoint(scalar);
  for (int64_t a = 0; a < nI; ++a) {
    for (int64_t bj = 0; bj < nJ; ++bj) {
      for (int64_t v = 0; v < vec; ++v) {
        std::vector<Value*> ix = idx(a, bj, v);
        Value* x;
        if (amd_ && rs.kind == ViewFact::Root::kTensor && rs.dt != DType::kBool) {
          Value* raw = BufferLoad(rs.tensor, b_.getIntNTy(8 * Bytes(rs.dt)),
                                  b_.CreateMul(Linear(s, ix), C64(Bytes(rs.dt))));
          x = b_.CreateBitCast(raw, MemTy(rs.dt));
        } else {
          x = FromMem(b_.CreateLoad(MemTy(rs.dt), ElemPtr(rs, Linear(s, ix))), rs.dt);
        }
        b_.CreateStore(ToMem(Convert(x, rs.dt, rd.dt), rd.dt), ElemPtr(rd, Linear(d, ix)));
      }
    }
  }
  b_.CreateBr(done);
  b_.SetInsertPoint(done);
  return absl::OkStatus();
}

absl::Status Emitter::LoadFragment(const ir::Op& op) {
  int sv = op.operands[0], fv = op.result;
  dsl::FragGeom g = VT(fv).frag.Geom();
  ASSIGN_OR_RETURN(Root r, RootOf(op, sv));
  ViewVals vv = LoadView(sv);
  DType ab = g.mma->ab;
  int n = g.PerLane();
  auto scalar_path = [&]() -> absl::Status {
    for (int e = 0; e < n; ++e) {
      Value *row, *col;
      RETURN_IF_ERROR(FragCoord(op, fv, e, &row, &col));
      Value* x = FromMem(b_.CreateLoad(MemTy(r.dt), ElemPtr(r, Linear(vv, {row, col}))), r.dt);
      x = Convert(x, r.dt, ab);
      FragSet(fv, e, b_.CreateBitCast(x, b_.getInt16Ty()));
    }
    return absl::OkStatus();
  };
  // ldmatrix (x4, .trans for B) where the shared tile fits: 16-bit elements,
  // unit column stride, rows of 8 elements 16-byte aligned, swizzle keeping
  // 8-element chunks together.
  const ViewFact& f = facts_[sv];
  bool nv16 = !amd_ && g.mma->m == 16 && g.mma->n == 8 && g.mma->k == 16;
  bool base_ok = nv16 && r.kind == ViewFact::Root::kShared && r.dt == ab && f.stride.size() == 2 &&
                 (!r.swz.active() || r.swz.m >= 3) &&
                 (g.role == dsl::FragRole::kA || g.TilesN() % 2 == 0);
  bool fits = base_ok && f.stride[1] == 1 && f.stride[0] > 0 && f.stride[0] % 8 == 0;
  // A transposed B view (B[k][n] at n * ld + k, e.g. K^T of a row-major K tile):
  // k runs contiguously, so plain (non-.trans) ldmatrix gives the B layout.
  bool fits_t = base_ok && g.role == dsl::FragRole::kB && f.stride[0] == 1 && f.stride[1] > 0 &&
                f.stride[1] % 8 == 0;
  if (fits_t) fits = true;
  if (!fits) return scalar_path();
  BasicBlock* lm = BasicBlock::Create(ctx_, "ldmatrix", fn_);
  BasicBlock* sc = BasicBlock::Create(ctx_, "ldfrag.scalar", fn_);
  BasicBlock* done = BasicBlock::Create(ctx_, "ldfrag.done", fn_);
  b_.CreateCondBr(b_.CreateICmpEQ(b_.CreateAnd(vv.off, C64(7)), C64(0)), lm, sc);
  b_.SetInsertPoint(sc);
  RETURN_IF_ERROR(scalar_path());
  b_.CreateBr(done);
  b_.SetInsertPoint(lm);
  Value* lane = Lane();
  Value* warp = Warp();
  Value* l8 = b_.CreateZExt(b_.CreateAnd(lane, C32(7)), b_.getInt64Ty());
  Value* lb3 = b_.CreateZExt(b_.CreateAnd(b_.CreateLShr(lane, 3), C32(1)), b_.getInt64Ty());
  Value* lb4 = b_.CreateZExt(b_.CreateLShr(lane, 4), b_.getInt64Ty());
  auto split = [&](Value* word, int e) {
    FragSet(fv, e, b_.CreateTrunc(word, b_.getInt16Ty()));
    FragSet(fv, e + 1, b_.CreateTrunc(b_.CreateLShr(word, 16), b_.getInt16Ty()));
  };
  if (g.role == dsl::FragRole::kA) {
    Value* wr = b_.CreateMul(b_.CreateZExt(b_.CreateUDiv(warp, C32(g.wn)), b_.getInt64Ty()),
                             C64(g.bm / g.wm));
    for (int tm = 0; tm < g.TilesM(); ++tm) {
      for (int tk = 0; tk < g.TilesK(); ++tk) {
        Value* row = b_.CreateAdd(b_.CreateAdd(wr, C64(tm * 16)),
                                  b_.CreateAdd(l8, b_.CreateMul(lb3, C64(8))));
        Value* col = b_.CreateAdd(C64(tk * 16), b_.CreateMul(lb4, C64(8)));
        Value* res = Call(I::nvvm_ldmatrix_sync_aligned_m8n8_x4_b16,
                          {ElemPtr(r, Linear(vv, {row, col}))}, {r.base->getType()});
        int base = (tm * g.TilesK() + tk) * 8;
        for (int j = 0; j < 4; ++j) split(b_.CreateExtractValue(res, j), base + 2 * j);
      }
    }
  } else {
    Value* wc = b_.CreateMul(b_.CreateZExt(b_.CreateURem(warp, C32(g.wn)), b_.getInt64Ty()),
                             C64(g.bn / g.wn));
    for (int tk = 0; tk < g.TilesK(); ++tk) {
      for (int tn = 0; tn < g.TilesN(); tn += 2) {
        Value* row;
        Value* col;
        if (fits_t) {  // lane l addresses memory row n = tn*8 + 8*lb4 + l8, k = tk*16 + 8*lb3
          row = b_.CreateAdd(C64(tk * 16), b_.CreateMul(lb3, C64(8)));
          col = b_.CreateAdd(b_.CreateAdd(wc, C64(tn * 8)),
                             b_.CreateAdd(l8, b_.CreateMul(lb4, C64(8))));
        } else {
          row = b_.CreateAdd(C64(tk * 16), b_.CreateAdd(l8, b_.CreateMul(lb3, C64(8))));
          col = b_.CreateAdd(b_.CreateAdd(wc, C64(tn * 8)), b_.CreateMul(lb4, C64(8)));
        }
        Value* res = Call(fits_t ? I::nvvm_ldmatrix_sync_aligned_m8n8_x4_b16
                                 : I::nvvm_ldmatrix_sync_aligned_m8n8_x4_trans_b16,
                          {ElemPtr(r, Linear(vv, {row, col}))}, {r.base->getType()});
        for (int j = 0; j < 4; ++j) {
          int t = tk * g.TilesN() + tn + j / 2;
          split(b_.CreateExtractValue(res, j), t * 4 + 2 * (j % 2));
        }
      }
    }
  }
  b_.CreateBr(done);
  b_.SetInsertPoint(done);
  return absl::OkStatus();
}

absl::Status Emitter::StoreFragment(const ir::Op& op) {
  int fv = op.operands[0], dv = op.operands[1];
  dsl::FragGeom g = VT(fv).frag.Geom();
  int n = g.PerLane();
  if (op.operands.size() == 2) {
    std::vector<int> all(n);
    for (int e = 0; e < n; ++e) all[e] = e;
    return StoreFragElems(op, all, C64(0), C64(0));
  }
  // store(acc, dst, at=(i, j)): a switch over the sub-tile within this
  // thread's warp group's part; each case stores the elements (known at
  // compile time) that lie in it. Threads outside the part store nothing.
  const ir::Type& dt = VT(dv);
  int h = static_cast<int>(dt.shape[0]), w = static_cast<int>(dt.shape[1]);
  std::vector<int> part;
  if (!g.PartIndex(h, w, &part))
    return LoweringError(m_, op.loc, "internal: sub-tile not aligned to the accumulator");
  int ni = g.bm / g.wm / h, nj = g.bn / g.wn / w;
  Value* unit = WarpGroupUnit(g);
  Value* i = Get(op.operands[2]);
  Value* j = Get(op.operands[3]);
  Value* li = b_.CreateSub(i, b_.CreateMul(b_.CreateUDiv(unit, C32(g.wn)), C32(ni)));
  Value* lj = b_.CreateSub(j, b_.CreateMul(b_.CreateURem(unit, C32(g.wn)), C32(nj)));
  Value* inside =
      b_.CreateAnd(b_.CreateAnd(b_.CreateICmpSGE(li, C32(0)), b_.CreateICmpSLT(li, C32(ni))),
                   b_.CreateAnd(b_.CreateICmpSGE(lj, C32(0)), b_.CreateICmpSLT(lj, C32(nj))));
  inside = b_.CreateAnd(inside, b_.CreateICmpULT(unit, C32(g.wm * g.wn)));
  Value* sel = b_.CreateSelect(inside, b_.CreateAdd(b_.CreateMul(li, C32(nj)), lj), C32(-1));
  Value* r0 = b_.CreateMul(b_.CreateSExt(i, b_.getInt64Ty()), C64(h));
  Value* c0 = b_.CreateMul(b_.CreateSExt(j, b_.getInt64Ty()), C64(w));
  BasicBlock* done = BasicBlock::Create(ctx_, "store.part.done", fn_);
  llvm::SwitchInst* sw = b_.CreateSwitch(sel, done, ni * nj);
  for (int p = 0; p < ni * nj; ++p) {
    BasicBlock* bb = BasicBlock::Create(ctx_, "store.part", fn_);
    sw->addCase(b_.getInt32(p), bb);
    b_.SetInsertPoint(bb);
    std::vector<int> elems;
    for (int e = 0; e < n; ++e) {
      if (part[e] == p) elems.push_back(e);
    }
    RETURN_IF_ERROR(StoreFragElems(op, elems, r0, c0));
    b_.CreateBr(done);
  }
  b_.SetInsertPoint(done);
  return absl::OkStatus();
}

absl::Status Emitter::StoreFragElems(const ir::Op& op, const std::vector<int>& elems, Value* r0,
                                     Value* c0) {
  int fv = op.operands[0], dv = op.operands[1];
  ASSIGN_OR_RETURN(Root r, RootOf(op, dv));
  ViewVals vv = LoadView(dv);
  dsl::FragGeom g = VT(fv).frag.Geom();
  auto at = [&](int e, Value** row, Value** col) -> absl::Status {
    RETURN_IF_ERROR(FragCoord(op, fv, e, row, col));
    *row = b_.CreateSub(*row, r0);
    *col = b_.CreateSub(*col, c0);
    return absl::OkStatus();
  };
  auto scalar = [&]() -> absl::Status {
    for (int e : elems) {
      Value *row, *col;
      RETURN_IF_ERROR(at(e, &row, &col));
      Value* x = Convert(FragGet(fv, e), DType::kF32, r.dt);
      b_.CreateStore(ToMem(x, r.dt), ElemPtr(r, Linear(vv, {row, col})));
    }
    return absl::OkStatus();
  };
  // Element pairs (e, e+1) at (row, col), (row, col+1) with col even for
  // every lane (the C layouts of mma.sync and wgmma) become one 2-element
  // store when the destination has unit column stride and even offset and
  // row stride (checked at run time): whole 32-byte sectors per quad of lanes.
  // A swizzle that moves chunks of 2+ elements keeps each pair together.
  bool pairs = elems.size() % 2 == 0 && (!r.swz.active() || r.swz.m >= 1) && r.dt != DType::kBool;
  for (size_t k = 0; pairs && k < elems.size(); k += 2) {
    int e = elems[k];
    pairs = elems[k + 1] == e + 1 && e % 2 == 0;
    for (int l = 0; pairs && l < g.mma->warp_size; ++l) {
      int rr0, cc0, rr1, cc1;
      g.Coord(0, l, e, &rr0, &cc0);
      g.Coord(0, l, e + 1, &rr1, &cc1);
      pairs = rr1 == rr0 && cc1 == cc0 + 1 && cc0 % 2 == 0;
    }
  }
  if (!pairs || vv.stride.size() != 2) return scalar();
  Value* ok = b_.CreateAnd(
      b_.CreateICmpEQ(vv.stride[1], C64(1)),
      b_.CreateICmpEQ(b_.CreateAnd(b_.CreateOr(vv.off, vv.stride[0]), C64(1)), C64(0)));
  BasicBlock* vec = BasicBlock::Create(ctx_, "store.v2", fn_);
  BasicBlock* sc = BasicBlock::Create(ctx_, "store.scalar", fn_);
  BasicBlock* done = BasicBlock::Create(ctx_, "store.done", fn_);
  b_.CreateCondBr(ok, vec, sc);
  b_.SetInsertPoint(vec);
  Type* vt = llvm::FixedVectorType::get(MemTy(r.dt), 2);
  for (size_t k = 0; k < elems.size(); k += 2) {
    int e = elems[k];
    Value *row, *col;
    RETURN_IF_ERROR(at(e, &row, &col));
    Value* x = llvm::UndefValue::get(vt);
    for (int i = 0; i < 2; ++i)
      x = b_.CreateInsertElement(x, Convert(FragGet(fv, e + i), DType::kF32, r.dt), uint64_t(i));
    b_.CreateAlignedStore(x, ElemPtr(r, Linear(vv, {row, col})), llvm::Align(2 * Bytes(r.dt)));
  }
  b_.CreateBr(done);
  b_.SetInsertPoint(sc);
  RETURN_IF_ERROR(scalar());
  b_.CreateBr(done);
  b_.SetInsertPoint(done);
  return absl::OkStatus();
}

absl::Status Emitter::Mma(const ir::Op& op) {
  int cv = op.operands[0], av = op.operands[1], bv = op.operands[2];
  dsl::FragGeom gc = VT(cv).frag.Geom(), ga = VT(av).frag.Geom();
  const dsl::MmaInfo& mi = *gc.mma;
  int TM = gc.TilesM(), TN = gc.TilesN(), TK = ga.TilesK();
  Type* i32 = b_.getInt32Ty();
  auto pack = [&](int v, int e) {
    Value* lo = b_.CreateZExt(FragGet(v, e), i32);
    Value* hi = b_.CreateZExt(FragGet(v, e + 1), i32);
    return b_.CreateOr(lo, b_.CreateShl(hi, 16));
  };
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
          for (int j = 0; j < 4; ++j) args.push_back(h2(pack(av, ae + 2 * j)));
          for (int j = 0; j < 2; ++j) args.push_back(h2(pack(bv, be + 2 * j)));
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

// Shuffles 32-bit pieces of x (any scalar type) through `shfl`.
Value* Emitter::ShflValue(Value* x, DType t, const std::function<Value*(Value*)>& shfl) {
  Type* i32 = b_.getInt32Ty();
  switch (t) {
    case DType::kF32:
      return b_.CreateBitCast(shfl(b_.CreateBitCast(x, i32)), x->getType());
    case DType::kBF16:
    case DType::kF16: {
      Value* w = b_.CreateZExt(b_.CreateBitCast(x, b_.getInt16Ty()), i32);
      return b_.CreateBitCast(b_.CreateTrunc(shfl(w), b_.getInt16Ty()), x->getType());
    }
    case DType::kBool:
      return b_.CreateTrunc(shfl(b_.CreateZExt(x, i32)), x->getType());
    case DType::kI64: {
      Value* lo = shfl(b_.CreateTrunc(x, i32));
      Value* hi = shfl(b_.CreateTrunc(b_.CreateLShr(x, 32), i32));
      return b_.CreateOr(b_.CreateZExt(lo, x->getType()),
                         b_.CreateShl(b_.CreateZExt(hi, x->getType()), 32));
    }
    default:
      return shfl(x);
  }
}

absl::Status Emitter::Shuffle(const ir::Op& op) {
  int ws = f_.warp_size;
  DType t = VT(op.result).dtype;
  Value* x = Convert(Get(op.operands[0]), VT(op.operands[0]).dtype, t);
  Value* arg = Get(op.operands[1]);
  Value* lane = Lane();
  Value* src = nullptr;
  switch (static_cast<ir::ShflKind>(op.sub)) {
    case ir::ShflKind::kXor:
      src = b_.CreateXor(lane, b_.CreateAnd(arg, C32(ws - 1)));
      break;
    case ir::ShflKind::kDown: {
      Value* s = b_.CreateAdd(lane, arg);
      Value* ok = b_.CreateAnd(b_.CreateICmpSGE(arg, C32(0)), b_.CreateICmpSLT(s, C32(ws)));
      src = b_.CreateSelect(ok, s, lane);
      break;
    }
    case ir::ShflKind::kIdx:
      src = b_.CreateAnd(arg, C32(ws - 1));
      break;
  }
  int hw = ops_->hw_warp();
  if (hw != ws) {  // logical warps inside a hardware warp
    Value* hwlane = b_.CreateAnd(Tid(), C32(hw - 1));
    src = b_.CreateAdd(b_.CreateSub(hwlane, lane), src);
  }
  Set(op.result, ShflValue(x, t, [&](Value* w) { return ops_->ShflIdx(b_, w, src); }));
  return absl::OkStatus();
}

Value* Emitter::WarpReduce(ir::ReduceKind k, Value* x, DType t) {
  for (int off = f_.warp_size / 2; off >= 1; off /= 2) {
    Value* y = ShflValue(x, t, [&](Value* w) { return ops_->ShflXor(b_, w, off); });
    x = Combine(k, x, y, t);
  }
  return x;
}

Value* Emitter::BlockReduce(const ir::Op& op, Value* x, DType t) {
  auto k = static_cast<ir::ReduceKind>(op.sub);
  int nw = (f_.threads + f_.warp_size - 1) / f_.warp_size;
  Type* mt = MemTy(t);
  auto* at = llvm::ArrayType::get(mt, nw);
  auto* gv = new llvm::GlobalVariable(*ms_->mod, at, false, llvm::GlobalValue::InternalLinkage,
                                      llvm::UndefValue::get(at), "block_reduce", nullptr,
                                      llvm::GlobalValue::NotThreadLocal, 3);
  gv->setAlignment(llvm::Align(8));
  ms_->shared_bytes += nw * 8;
  Value* w = WarpReduce(k, x, t);
  BasicBlock* wr = BasicBlock::Create(ctx_, "br.write", fn_);
  BasicBlock* cont = BasicBlock::Create(ctx_, "br.cont", fn_);
  b_.CreateCondBr(b_.CreateICmpEQ(Lane(), C32(0)), wr, cont);
  b_.SetInsertPoint(wr);
  b_.CreateStore(ToMem(w, t), b_.CreateGEP(mt, gv, Warp()));
  b_.CreateBr(cont);
  b_.SetInsertPoint(cont);
  ops_->Barrier(b_);
  Value* total = FromMem(b_.CreateLoad(mt, b_.CreateConstGEP1_32(mt, gv, 0)), t);
  for (int i = 1; i < nw; ++i)
    total = Combine(k, total, FromMem(b_.CreateLoad(mt, b_.CreateConstGEP1_32(mt, gv, i)), t), t);
  ops_->Barrier(b_);
  return total;
}

absl::Status Emitter::Hint(const ir::Op& op) {
  if (!amd_) return absl::OkStatus();  // AMD scheduling hints; noted by pass 1
  auto arg = [&](size_t i, int64_t dflt) {
    return i < op.ints.size() && op.ints[i] >= 0 ? op.ints[i] : dflt;
  };
  if (op.name == "s_waitcnt") {
    int64_t vm = std::min<int64_t>(arg(0, 63), 63), lgkm = std::min<int64_t>(arg(1, 15), 15);
    int64_t imm = (vm & 15) | ((vm >> 4) << 14) | (7 << 4) | (lgkm << 8);
    Call(I::amdgcn_s_waitcnt, {C32(imm)});
  } else if (op.name == "sched_group_barrier") {
    Call(I::amdgcn_sched_group_barrier, {C32(arg(0, 0)), C32(arg(1, 0)), C32(arg(2, 0))});
  } else if (op.name == "s_setprio") {
    Call(I::amdgcn_s_setprio, {b_.getInt16(static_cast<uint16_t>(arg(0, 0)))});
  } else {
    return LoweringError(m_, op.loc, absl::StrCat("unknown hint ", op.name));
  }
  return absl::OkStatus();
}

Value* Emitter::BarrierAddr(const ir::Op& op, int first) {
  Value* base = SharedAddr(bar_base_[op.operands[first]]);
  return b_.CreateAdd(base, b_.CreateMul(Get(op.operands[first + 1]), C32(8)));
}

absl::Status Emitter::TmaOperands(const ir::Op& op, int v, Value** smem, Value** tmap) {
  ASSIGN_OR_RETURN(Root r, RootOf(op, v));
  if (r.kind != ViewFact::Root::kShared)
    return LoweringError(m_, op.loc, "a TMA's tile side is in shared memory");
  ViewVals vv = LoadView(v);
  *smem = b_.CreateAdd(SharedAddr(r.base),
                       b_.CreateTrunc(b_.CreateMul(vv.off, C64(Bytes(r.dt))), b_.getInt32Ty()));
  auto it = tmaps_.find({op.ints[0], op.ints[1], op.ints[2], r.swz.active() ? 1 : 0});
  if (it == tmaps_.end()) return LoweringError(m_, op.loc, "internal: no tensor map for this TMA");
  *tmap = b_.CreatePtrToInt(it->second, b_.getInt64Ty());
  return absl::OkStatus();
}

absl::Status Emitter::Epilogue(const ir::Op& op) {
  switch (op.code) {
    case OpCode::kTmaStore: {
      Value *src, *tmap;
      RETURN_IF_ERROR(TmaOperands(op, op.operands[0], &src, &tmap));
      Value* c0 = b_.CreateMul(Get(op.operands[3]), C32(op.ints[2]));
      Value* c1 = b_.CreateMul(Get(op.operands[2]), C32(op.ints[1]));
      hopper::TmaStore2d(b_, tmap, c0, c1, src, op.sub != 0);
      return absl::OkStatus();
    }
    case OpCode::kTmaStoreCommit:
      hopper::BulkCommit(b_);
      return absl::OkStatus();
    case OpCode::kTmaStoreWait:
      hopper::BulkWaitRead(b_, static_cast<int>(op.ints[0]));
      return absl::OkStatus();
    default:  // kWarpgroupBarrier: named barrier 1 + warp group (0 is barrier())
      hopper::NamedBarrier(b_, b_.CreateAdd(b_.CreateUDiv(Tid(), C32(128)), C32(1)), 128);
      return absl::OkStatus();
  }
}

absl::Status Emitter::Hopper(const ir::Op& op) {
  switch (op.code) {
    case OpCode::kMbarrier: {
      // One thread initializes every barrier of the array; the block barrier
      // makes the initialization visible before any use.
      Value* base = mbars_.at(&op);
      bar_base_[op.result] = base;
      BasicBlock* init = BasicBlock::Create(ctx_, "mbar.init", fn_);
      BasicBlock* cont = BasicBlock::Create(ctx_, "mbar.cont", fn_);
      b_.CreateCondBr(b_.CreateICmpEQ(Tid(), C32(0)), init, cont);
      b_.SetInsertPoint(init);
      for (int64_t i = 0; i < op.ints[0]; ++i)
        hopper::MbarInit(b_, b_.CreateAdd(SharedAddr(base), C32(8 * i)), op.ints[1]);
      hopper::FenceMbarInit(b_);
      b_.CreateBr(cont);
      b_.SetInsertPoint(cont);
      ops_->Barrier(b_);
      return absl::OkStatus();
    }
    case OpCode::kMbarArrive:
      hopper::MbarArrive(b_, BarrierAddr(op, 0));
      return absl::OkStatus();
    case OpCode::kMbarArriveTx:
      hopper::MbarArriveExpectTx(b_, BarrierAddr(op, 0), Get(op.operands[2]));
      return absl::OkStatus();
    case OpCode::kMbarWait:
      hopper::MbarWait(b_, BarrierAddr(op, 0), Get(op.operands[2]));
      return absl::OkStatus();
    case OpCode::kTmaLoad: {
      Value *dst, *tmap;
      RETURN_IF_ERROR(TmaOperands(op, op.operands[1], &dst, &tmap));
      Value* c0 = b_.CreateMul(Get(op.operands[5]), C32(op.ints[2]));
      Value* c1 = b_.CreateMul(Get(op.operands[4]), C32(op.ints[1]));
      hopper::TmaLoad2d(b_, dst, tmap, c0, c1, BarrierAddr(op, 2));
      return absl::OkStatus();
    }
    case OpCode::kFenceProxyAsync:
      hopper::FenceProxyAsync(b_);
      return absl::OkStatus();
    case OpCode::kSetMaxNReg:
      hopper::SetMaxNReg(b_, static_cast<int>(op.ints[0]), op.ints[0] > reg_cap);
      return absl::OkStatus();
    case OpCode::kWgmmaOperand:
      // A descriptor names the view; wgmma() reads its (unchanged) offset.
      desc_src_[op.result] = op.operands[0];
      return absl::OkStatus();
    case OpCode::kWgmmaCommit:
      hopper::WgmmaCommit(b_);
      return absl::OkStatus();
    default:
      break;
  }
  return LoweringError(m_, op.loc, "internal: not a Hopper op");
}

// Each 64xNx16 instruction of this warp group's part of the accumulator, in
// the interpreter's order (tile-major, K innermost). A is K-major (128-byte
// rows, 8-row groups 1024 bytes apart) or registers (to_operand: 4 .b32 per
// instruction, element pairs packed low-first); B is N-major in 64-column
// blocks of BK rows (LBO = the block stride, SBO = 8 rows, 1024 bytes) or
// K-major (the .T of a (BN, 64) tile: like A, N rows of 128 bytes).
absl::Status Emitter::Wgmma(const ir::Op& op) {
  int cv = op.operands[0];
  const bool regs_a = VT(op.operands[1]).frag.regs;
  auto da = desc_src_.find(op.operands[1]), db = desc_src_.find(op.operands[2]);
  if ((!regs_a && da == desc_src_.end()) || db == desc_src_.end())
    return LoweringError(m_, op.loc, "codegen cannot tell which buffers these operands describe");
  dsl::FragGeom g = VT(cv).frag.Geom();
  const dsl::MmaInfo& mi = *g.mma;
  int bk = VT(op.operands[1]).frag.cols;
  if (mi.n % 64 != 0 && g.TilesN() > 1)
    return LoweringError(m_, op.loc, "codegen issues wgmma with N a multiple of 64 here",
                         "use a wider instruction or one tile per warp group");
  ASSIGN_OR_RETURN(Root rb, RootOf(op, db->second));
  if (rb.kind != ViewFact::Root::kShared)
    return LoweringError(m_, op.loc, "wgmma operands live in shared memory");
  const std::vector<int64_t>& bst = facts_[db->second].stride;
  for (int64_t x : bst) {
    if (x < 0)
      return LoweringError(m_, op.loc, "codegen needs the wgmma B operand's strides statically",
                           "take the operand view straight from the shared buffer");
  }
  const bool b_kmajor = bst.size() == 2 && bst[0] == 1 && bst[1] == 64;
  if (b_kmajor && g.TilesN() > 1)
    return LoweringError(m_, op.loc, "codegen issues K-major B with one wgmma tile per warp group",
                         "use mma=\"wgmma_bf16\" (N = BN / WN)");
  Value* a0 = nullptr;
  if (!regs_a) {
    ASSIGN_OR_RETURN(Root ra, RootOf(op, da->second));
    if (ra.kind != ViewFact::Root::kShared)
      return LoweringError(m_, op.loc, "wgmma operands live in shared memory");
    ViewVals va = LoadView(da->second);
    a0 = b_.CreateAdd(SharedAddr(ra.base),
                      b_.CreateTrunc(b_.CreateMul(va.off, C64(2)), b_.getInt32Ty()));
  }
  ViewVals vb = LoadView(db->second);
  Value* b0 = b_.CreateAdd(SharedAddr(rb.base),
                           b_.CreateTrunc(b_.CreateMul(vb.off, C64(2)), b_.getInt32Ty()));
  Value* unit = WarpGroupUnit(g);
  Value* wrow = b_.CreateMul(b_.CreateUDiv(unit, C32(g.wn)), C32(g.bm / g.wm));
  Value* wcol = b_.CreateMul(b_.CreateURem(unit, C32(g.wn)), C32(g.bn / g.wn));
  int64_t lbo = int64_t{bk} * 128, sbo = 1024;
  if (b_swap) std::swap(lbo, sbo);
  int TM = g.TilesM(), TN = g.TilesN(), TK = bk / 16;
  // Register A: every operand register is read (packed pairs) before the fence,
  // so that no register write separates the wgmmas (ptxas would give each its
  // own warpgroup.arrive).
  std::vector<std::vector<Value*>> areg(regs_a ? TM * TK : 0);
  for (size_t i = 0; i < areg.size(); ++i) {
    int ae = static_cast<int>(i) * mi.regs_a;
    for (int j = 0; j < mi.regs_a / 2; ++j) {
      int e = ae + 2 * j;
      if (FragPairs(op.operands[1])) {
        areg[i].push_back(FragGetPair(op.operands[1], e));
      } else {
        Value* lo = b_.CreateZExt(FragGet(op.operands[1], e), b_.getInt32Ty());
        Value* hi = b_.CreateZExt(FragGet(op.operands[1], e + 1), b_.getInt32Ty());
        areg[i].push_back(b_.CreateOr(lo, b_.CreateShl(hi, 16)));
      }
    }
  }
  hopper::WgmmaFence(b_);
  for (int tm = 0; tm < TM; ++tm) {
    Value* arow = regs_a
                      ? nullptr
                      : b_.CreateAdd(a0, b_.CreateMul(b_.CreateAdd(wrow, C32(tm * 64)), C32(128)));
    for (int tn = 0; tn < TN; ++tn) {
      Value* col = b_.CreateAdd(wcol, C32(tn * mi.n));
      Value* bcol =
          b_kmajor ? b_.CreateAdd(b0, b_.CreateMul(col, C32(128)))
                   : b_.CreateAdd(b0, b_.CreateMul(b_.CreateUDiv(col, C32(64)), C32(bk * 128)));
      int ce = (tm * TN + tn) * mi.regs_c;
      for (int ks = 0; ks < TK; ++ks) {
        Value* desc_b =
            b_kmajor ? hopper::SmemDesc128B(b_, b_.CreateAdd(bcol, C32(ks * 32)), 16, 1024)
                     : hopper::SmemDesc128B(b_, b_.CreateAdd(bcol, C32(ks * 2048)), lbo, sbo);
        std::vector<Value*> acc;
        for (int j = 0; j < mi.regs_c; ++j) acc.push_back(FragGet(cv, ce + j));
        std::vector<Value*> d;
        if (regs_a) {
          // Elements 2j (low half) and 2j+1 of the A fragment share register j.
          d = hopper::WgmmaRegA(b_, mi.n, mi.ab == DType::kF16, acc, areg[tm * TK + ks], desc_b,
                                b_kmajor ? false : b_trans);
        } else {
          Value* desc_a = hopper::SmemDesc128B(b_, b_.CreateAdd(arow, C32(ks * 32)), 16, 1024);
          d = hopper::Wgmma(b_, mi.n, mi.ab == DType::kF16, acc, desc_a, desc_b, false,
                            b_kmajor ? false : b_trans);
        }
        for (int j = 0; j < mi.regs_c; ++j) FragSet(cv, ce + j, d[j]);
      }
    }
  }
  return absl::OkStatus();
}

// The wait passes the accumulators of the wgmmas it may cover through its asm,
// so that nothing reads one above it: those of the innermost enclosing block
// that issues any (a warp group's branch never ties up another's registers).
absl::Status Emitter::WgmmaWait(const ir::Op& op) {
  if (wait_accs_.empty()) {
    std::function<void(const ir::Block&, std::set<int>*)> accs = [&](const ir::Block& blk,
                                                                     std::set<int>* out) {
      for (const ir::Op& o : blk) {
        if (o.code == OpCode::kWgmma) out->insert(o.operands[0]);
        for (const ir::Block& r : o.regions) accs(r, out);
      }
    };
    std::vector<const ir::Block*> stack;
    std::function<void(const ir::Block&)> walk = [&](const ir::Block& blk) {
      stack.push_back(&blk);
      for (const ir::Op& o : blk) {
        if (o.code == OpCode::kWgmmaWait) {
          std::set<int> s;
          for (auto it = stack.rbegin(); it != stack.rend() && s.empty(); ++it) accs(**it, &s);
          wait_accs_[&o] = std::vector<int>(s.begin(), s.end());
        }
        for (const ir::Block& r : o.regions) walk(r);
      }
      stack.pop_back();
    };
    walk(f_.body);
  }
  std::vector<Value*> live;
  std::vector<std::pair<int, int>> where;
  for (int v : wait_accs_[&op]) {
    int n = VT(v).frag.Geom().PerLane();
    for (int e = 0; e < n; ++e) {
      live.push_back(FragGet(v, e));
      where.push_back({v, e});
    }
  }
  std::vector<Value*> out = hopper::WgmmaWait(b_, static_cast<int>(op.ints[0]), live);
  for (size_t i = 0; i < out.size(); ++i) FragSet(where[i].first, where[i].second, out[i]);
  return absl::OkStatus();
}

void CollectAllocs(const ir::Block& b, std::vector<const ir::Op*>* out, OpCode code) {
  for (const ir::Op& op : b) {
    if (op.code == code) out->push_back(&op);
    for (const ir::Block& r : op.regions) CollectAllocs(r, out, code);
  }
}

std::string ParamKind(DType t) {
  return t == DType::kI64 ? "i64" : dsl::IsFloat(t) ? "f32" : "i32";
}

}  // namespace

absl::StatusOr<LoweredKernel> LowerKernel(const ir::Module& m, const ir::Function& k,
                                          const GpuTarget& target, llvm::LLVMContext& ctx) {
  if (!k.is_kernel) return absl::InvalidArgumentError(absl::StrCat(k.name, " is not a kernel"));
  LoweredKernel out;
  RETURN_IF_ERROR(CheckTargetSupport(m, k, target, &out.notes));
  for (const ir::ScalarParam& s : k.scalars) {
    if (s.dtype != DType::kF32 && s.dtype != DType::kI32 && s.dtype != DType::kI64)
      return LoweringError(m, k.loc,
                           absl::StrCat("scalar parameter ", s.name, " of type ",
                                        dsl::DTypeName(s.dtype), ": kernels take i32, i64 or f32"));
  }
  ASSIGN_OR_RETURN(std::unique_ptr<llvm::TargetMachine> tm, CreateTargetMachine(target));
  out.module = std::make_unique<llvm::Module>(k.name, ctx);
  PrepareModule(*out.module, *tm);
  std::unique_ptr<TargetOps> ops = TargetOps::Create(target, out.module.get());
  ModuleState ms{&m, &target, out.module.get(), ops.get(), {}, 0};
  ms.fns.assign(m.functions.size(), nullptr);
  IRBuilder<> tb(ctx);
  auto ty = [&](DType t) -> Type* {
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
  };
  // Device functions (they precede their callers).
  for (size_t i = 0; i < m.functions.size(); ++i) {
    const ir::Function& f = m.functions[i];
    if (f.is_kernel) continue;
    std::vector<Type*> ps;
    for (int p : f.params) ps.push_back(ty(f.vars[p].type.dtype));
    Type* rt = f.ret.is_scalar() ? ty(f.ret.dtype) : tb.getVoidTy();
    auto* fn = llvm::Function::Create(llvm::FunctionType::get(rt, ps, false),
                                      llvm::GlobalValue::InternalLinkage, f.name, out.module.get());
    fn->addFnAttr(llvm::Attribute::AlwaysInline);
    ms.fns[i] = fn;
    Emitter e(&ms, f, fn);
    RETURN_IF_ERROR(e.Emit());
  }
  // The kernel.
  std::vector<Type*> ps;
  KernelMetadata& md = out.metadata;
  for (const ir::TensorParam& t : k.tensors) {
    ps.push_back(llvm::PointerType::get(ctx, 1));
    md.params.push_back({t.name, "ptr", dsl::DTypeName(t.dtype)});
  }
  for (const std::string& d : k.dims) {
    ps.push_back(tb.getInt32Ty());
    md.params.push_back({d, "i32", ""});
  }
  for (const ir::ScalarParam& s : k.scalars) {
    ps.push_back(ty(s.dtype));
    md.params.push_back({s.name, ParamKind(s.dtype), ""});
  }
  // One tensor map per (tensor, box, swizzle) that a tma_load uses, passed as
  // a pointer to its 128 bytes in global memory (the launcher encodes it).
  std::vector<const ir::Op*> tma, mb, setreg;
  CollectAllocs(k.body, &tma, OpCode::kTmaLoad);
  CollectAllocs(k.body, &tma, OpCode::kTmaStore);
  CollectAllocs(k.body, &mb, OpCode::kMbarrier);
  CollectAllocs(k.body, &setreg, OpCode::kSetMaxNReg);
  std::vector<std::array<int64_t, 4>> tmap_keys;
  if (!tma.empty()) {
    ASSIGN_OR_RETURN(std::vector<ViewFact> facts, AnalyzeViews(m, k));
    for (const ir::Op* op : tma) {
      // The shared side: tma_load's destination, tma_store's source.
      const ViewFact& f = facts[op->operands[op->code == OpCode::kTmaStore ? 0 : 1]];
      bool swz = f.alloc && f.alloc->layout.swizzle.active();
      std::array<int64_t, 4> key{op->ints[0], op->ints[1], op->ints[2], swz ? 1 : 0};
      if (std::find(tmap_keys.begin(), tmap_keys.end(), key) != tmap_keys.end()) continue;
      tmap_keys.push_back(key);
      const ir::TensorParam& t = k.tensors[key[0]];
      ps.push_back(llvm::PointerType::get(ctx, 1));
      KernelParam kp{absl::StrCat("tmap", tmap_keys.size() - 1),
                     "tensormap",
                     dsl::DTypeName(t.dtype),
                     t.name,
                     {key[1], key[2]},
                     swz ? "128B" : "none"};
      md.params.push_back(kp);
    }
  }
  auto* fn = llvm::Function::Create(llvm::FunctionType::get(tb.getVoidTy(), ps, false),
                                    llvm::GlobalValue::ExternalLinkage, k.name, out.module.get());
  for (size_t i = 0; i < md.params.size(); ++i) fn->getArg(i)->setName(md.params[i].name);
  Emitter e(&ms, k, fn);
  for (size_t i = 0; i < tmap_keys.size(); ++i)
    e.tmaps_[tmap_keys[i]] =
        fn->getArg(static_cast<unsigned>(md.params.size() - tmap_keys.size() + i));
  if (const char* v = std::getenv("ARGUS_WGMMA_VARIANT")) {  // descriptor experiments
    std::string s(v);
    e.b_swap = s.find("swap") != std::string::npos;
    e.b_trans = s.find("notrans") == std::string::npos;
  }
  // setmaxnreg needs a register cap at entry: .maxntid threads and one block
  // per SM make ptxas cap at 64K / threads (rounded down to 8).
  if (!setreg.empty()) e.reg_cap = std::min(255, 65536 / k.threads) / 8 * 8;
  std::vector<const ir::Op*> sh, lo;
  CollectAllocs(k.body, &sh, OpCode::kAllocShared);
  CollectAllocs(k.body, &lo, OpCode::kAllocLocal);
  auto elem = [&](const ir::Op* op) {
    DType t = k.vars[op->result].type.dtype;
    return t == DType::kBool ? tb.getInt8Ty() : ty(t);
  };
  // Shared buffers: static globals, or — on sm_90a past the 48 KiB static
  // limit — windows of one dynamic `extern .shared` array (the launch passes
  // dynamic_shared_bytes and opts in to the larger size).
  // 128-byte swizzled tiles (TMA, wgmma) start 1024-byte aligned, other
  // buffers 128-byte aligned (TMA destinations); mbarriers follow the buffers.
  auto align_of = [&](const ir::Op* op) -> int64_t {
    const dsl::Swizzle& z = op->layout.swizzle;
    return z.b == 3 && z.m == 3 && z.s == 3 ? 1024 : 128;
  };
  auto round_up = [](int64_t x, int64_t a) { return (x + a - 1) / a * a; };
  int64_t total = 0;
  for (const ir::Op* op : sh) {
    total = round_up(total, align_of(op)) +
            round_up(op->layout.Cosize() * dsl::DTypeBytes(k.vars[op->result].type.dtype), 16);
  }
  for (const ir::Op* op : mb) total = round_up(total, 8) + 8 * op->ints[0];
  const bool dynamic = target.vendor == GpuVendor::kNvidia && total > 48 * 1024;
  llvm::GlobalVariable* dyn = nullptr;
  if (dynamic) {
    auto* at = llvm::ArrayType::get(tb.getInt8Ty(), 0);
    dyn = new llvm::GlobalVariable(*out.module, at, false, llvm::GlobalValue::ExternalLinkage,
                                   nullptr, "argus_dynamic_shared", nullptr,
                                   llvm::GlobalValue::NotThreadLocal, 3);
    dyn->setAlignment(llvm::Align(1024));
    md.dynamic_shared_bytes = static_cast<int>(total);
  }
  int64_t offset = 0;
  for (const ir::Op* op : sh) {
    int64_t bytes =
        round_up(op->layout.Cosize() * dsl::DTypeBytes(k.vars[op->result].type.dtype), 16);
    if (dynamic) {
      offset = round_up(offset, align_of(op));
      e.shared_[op] =
          llvm::ConstantExpr::getInBoundsGetElementPtr(tb.getInt8Ty(), dyn, tb.getInt64(offset));
      offset += bytes;
      continue;
    }
    auto* at = llvm::ArrayType::get(elem(op), op->layout.Cosize());
    auto* gv = new llvm::GlobalVariable(*out.module, at, false, llvm::GlobalValue::InternalLinkage,
                                        llvm::UndefValue::get(at), k.vars[op->result].name, nullptr,
                                        llvm::GlobalValue::NotThreadLocal, 3);
    gv->setAlignment(llvm::Align(align_of(op)));
    e.shared_[op] = gv;
    ms.shared_bytes += static_cast<int>(bytes);
  }
  for (const ir::Op* op : mb) {
    if (dynamic) {
      offset = round_up(offset, 8);
      e.mbars_[op] =
          llvm::ConstantExpr::getInBoundsGetElementPtr(tb.getInt8Ty(), dyn, tb.getInt64(offset));
      offset += 8 * op->ints[0];
      continue;
    }
    auto* at = llvm::ArrayType::get(tb.getInt64Ty(), op->ints[0]);
    auto* gv = new llvm::GlobalVariable(*out.module, at, false, llvm::GlobalValue::InternalLinkage,
                                        llvm::UndefValue::get(at), k.vars[op->result].name, nullptr,
                                        llvm::GlobalValue::NotThreadLocal, 3);
    gv->setAlignment(llvm::Align(8));
    e.mbars_[op] = gv;
    ms.shared_bytes += static_cast<int>(8 * op->ints[0]);
  }
  {
    // Locals live in the entry block as private arrays.
    llvm::BasicBlock* tmp = llvm::BasicBlock::Create(ctx, "locals", fn);
    IRBuilder<> lb(tmp);
    for (const ir::Op* op : lo) {
      auto* at = llvm::ArrayType::get(elem(op), op->layout.Cosize());
      e.locals_[op] = lb.CreateAlloca(at, nullptr, k.vars[op->result].name);
    }
    RETURN_IF_ERROR(e.Emit());
    // Move the local arrays into the alloca block and drop the temporary.
    llvm::BasicBlock* entry =
        &fn->getEntryBlock() == tmp ? tmp->getNextNode() : &fn->getEntryBlock();
    while (!tmp->empty()) tmp->front().moveBefore(&*entry->getFirstInsertionPt());
    tmp->eraseFromParent();
  }
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
