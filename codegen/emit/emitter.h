// codegen/emit/emitter.h: pass 3 of the lowering (lower.h) — one function's
// tile IR to LLVM IR through IRBuilder, per thread (SIMT).
//
// Every IR variable lives in an entry-block alloca (scalars), a set of them
// (views: offset, shape and stride per dim, i64) or an array (fragments: f32
// accumulators, 16-bit A/B elements); SROA/mem2reg in the O3 pipeline turn
// them into registers. Structured control flow maps to branches one to one.
//
// Emitter::One dispatches an op by its family (ir::Info(op.code).family) to
// the handler of the file named for it:
//   scalar.cc         kScalar        constants, arithmetic, casts, thread ids
//   views.cc          kView          allocations and views (no memory traffic)
//   memory.cc         kMemory        element loads/stores, cp.async groups
//   copy.cc                          block copies (vector, cp.async, buffer)
//   fragment.cc       kFragment      fragments: make, load (ldmatrix), store
//   mma.cc                           mma.sync / mfma
//   fragment_math.cc  kFragmentMath  elementwise and row-wise fragment math
//   mbarrier.cc       kMbarrier      Hopper transaction barriers
//   tma.cc            kTma           Hopper tensor memory accelerator
//   wgmma.cc          kWgmma         Hopper warp-group mma, setmaxnreg
//   barrier.cc        kBarrier       block, warp-group and named barriers
//   collectives.cc    kCollective    shuffles, warp and block reductions
//   hints.cc          kHint          AMD scheduling hints
//   control.cc        kControl/kCall structured control flow, calls, returns
// kTag ops are checked by the verifier and emit nothing. The machinery the
// handlers share lives in storage.cc (variable slots, views, fragment arrays),
// arith.cc (conversions, binary operators) and emitter.cc (parameters,
// blocks, the dispatch). The kernel driver (lower_kernel.cc) lays out shared
// memory and tensor maps and hands them over as KernelBindings.
//
// Thread safety: an Emitter builds into one llvm::Module; one thread per
// module.
#ifndef ARGUS_CODEGEN_EMIT_EMITTER_H_
#define ARGUS_CODEGEN_EMIT_EMITTER_H_

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "codegen/lower_internal.h"
#include "codegen/target.h"
#include "dsl/ir.h"
#include "llvm/IR/IRBuilder.h"

// The emitter's files share one internal namespace, and with it the short
// names below.
namespace argus::codegen::emit {

namespace ir = dsl::ir;
namespace I = llvm::Intrinsic;
using dsl::DType;
using ir::OpCode;
using llvm::BasicBlock;
using llvm::Type;
using llvm::Value;

// Kernel-wide state shared by the kernel's and its device functions' emitters.
struct ModuleState {
  const ir::Module* m;
  const GpuTarget* target;
  llvm::Module* mod;
  TargetOps* ops;
  std::vector<llvm::Function*> fns;  // by module function index
  int shared_bytes = 0;
};

// What the kernel driver binds before the kernel's emission (device
// functions get none of it).
struct KernelBindings {
  std::map<const ir::Op*, llvm::Value*> shared;  // kAllocShared -> its buffer
  std::map<const ir::Op*, llvm::Value*> locals;  // kAllocLocal -> its private array
  std::map<const ir::Op*, llvm::Value*> mbars;   // kMbarrier -> its u64 array
  // Tensor maps (kernel params): key (tensor, box rows, box cols, swizzled).
  std::map<std::array<int64_t, 4>, llvm::Value*> tmaps;
  int reg_cap = 0;                      // registers per thread at entry (setmaxnreg picks inc/dec)
  bool b_swap = false, b_trans = true;  // descriptor variants (ARGUS_WGMMA_VARIANT)
};

// A module-internal shared-memory (addrspace 3) global of `array` type,
// uninitialized.
llvm::GlobalVariable* NewSharedGlobal(llvm::Module& m, llvm::ArrayType* array,
                                      const std::string& name, int64_t align);

class Emitter {
 public:
  Emitter(ModuleState* ms, const ir::Function& f, llvm::Function* fn, KernelBindings bindings = {});

  // Emits the whole function body into fn.
  absl::Status Emit();

 private:
  using AllocaInst = llvm::AllocaInst;
  using Op = ir::Op;

  // ---- types and constants (storage.cc)
  Type* Ty(DType t);
  Type* MemTy(DType t) { return t == DType::kBool ? b_.getInt8Ty() : Ty(t); }
  int Bytes(DType t) { return t == DType::kBool ? 1 : dsl::DTypeBytes(t); }
  const ir::Type& VT(int v) const { return f_.vars[v].type; }
  Value* C32(int64_t v) { return b_.getInt32(static_cast<uint32_t>(v)); }
  Value* C64(int64_t v) { return b_.getInt64(static_cast<uint64_t>(v)); }
  Value* Call(llvm::Intrinsic::ID id, llvm::ArrayRef<Value*> args,
              llvm::ArrayRef<Type*> types = {});

  // ---- scalar slots (storage.cc)
  AllocaInst* Alloca(Type* t, const std::string& name);
  AllocaInst* Slot(int v);
  Value* Get(int v) { return b_.CreateLoad(Ty(VT(v).dtype), Slot(v)); }
  void Set(int v, Value* x) { b_.CreateStore(x, Slot(v)); }

  // ---- view slots (storage.cc)
  struct ViewSlots {
    AllocaInst* off = nullptr;
    std::vector<AllocaInst*> shape, stride;
  };
  struct ViewVals {
    Value* off;
    std::vector<Value*> shape, stride;
  };
  ViewSlots& View(int v);
  ViewVals LoadView(int v);
  void StoreView(int v, const ViewVals& x);

  // ---- fragment arrays (storage.cc)
  // Accumulators and row vectors (and the i32/bool fragments of fragment math)
  // hold f32 elements; A/B operands hold 16-bit operand bits.
  Type* FragElemTy(int v);
  AllocaInst* Frag(int v);
  Value* FragPtr(int v, int e);
  Value* FragGet(int v, int e) { return b_.CreateLoad(FragElemTy(v), FragPtr(v, e)); }
  void FragSet(int v, int e, Value* x) { b_.CreateStore(x, FragPtr(v, e)); }
  // Operand elements 2j and 2j+1 (16-bit) as one 32-bit register, 2j in the low
  // half: to_operand writes and register-A wgmma reads them so, which keeps
  // them packed through loop-carried values (no 16-bit splits for ptxas).
  bool FragPairs(int v) const;
  Value* FragGetPair(int v, int e);
  void FragSetPair(int v, int e, Value* x);
  // Elements e (low half) and e+1 of an operand fragment as one i32.
  Value* PackPair(int v, int e);

  // ---- conversions and arithmetic (arith.cc)
  Value* ToF32(Value* x);
  Value* FromF32(Value* x, DType t);
  Value* Convert(Value* x, DType from, DType to);
  // Variable v's value converted to `to`.
  Value* GetAs(int v, DType to) { return Convert(Get(v), VT(v).dtype, to); }
  Value* ToMem(Value* x, DType t);
  Value* FromMem(Value* x, DType t);
  Value* FloatBin(ir::BinOp op, Value* x, Value* y, DType t);
  Value* IntBin(ir::BinOp op, Value* x, Value* y, DType t);
  Value* IntFloorDivMod(bool mod, Value* x, Value* y, bool u);
  Value* Combine(ir::ReduceKind k, Value* x, Value* y, DType t);

  // ---- special registers (storage.cc)
  Value* Tid() { return ops_->ThreadId(b_); }
  Value* Lane() { return b_.CreateURem(Tid(), C32(f_.warp_size)); }
  Value* Warp() { return b_.CreateUDiv(Tid(), C32(f_.warp_size)); }
  Value* WarpGroupUnit(const dsl::FragGeom& g) {
    return b_.CreateSub(b_.CreateUDiv(Tid(), C32(g.mma->warp_size)), C32(g.first));
  }

  // ---- memory addressing (memory.cc)
  struct Root {
    ViewFact::Root kind;
    Value* base;
    DType dt;
    dsl::Swizzle swz;
    int tensor = -1;
  };
  absl::StatusOr<Root> RootOf(const Op& op, int v);
  Value* Swizzle(Value* o, const dsl::Swizzle& s);
  // Element offset (before swizzling) of idx in a view.
  Value* Linear(const ViewVals& vv, const std::vector<Value*>& idx);
  Value* ElemPtr(const Root& r, Value* lin);
  std::vector<Value*> Indices(const Op& op, int first);
  // An element load through r (plain memory, converted from its memory type).
  Value* LoadElem(const Root& r, Value* lin);
  // AMD buffer load of tensor t (hardware bounds = the tensor's bytes).
  Value* BufferLoad(int t, Type* ty, Value* byte_off);
  // The i32 shared-window address of a shared pointer.
  Value* SharedAddr(Value* ptr) { return b_.CreatePtrToInt(ptr, b_.getInt32Ty()); }
  // The shared address of the first element of view v (root r).
  Value* SharedViewAddr(const Root& r, int v, int elem_bytes);

  // ---- blocks and dispatch (emitter.cc)
  absl::Status BindParams();
  void BindTensorView(size_t i);
  void EnsureOpen();
  absl::Status Block(const ir::Block& blk);
  absl::Status One(const Op& op);
  absl::Status NotLowered(const Op& op);

  // ---- family handlers, one file each
  absl::Status ScalarOp(const Op& op);
  absl::Status ViewOp(const Op& op);
  absl::Status MemoryOp(const Op& op);
  absl::Status FragmentOp(const Op& op);
  absl::Status FragmentMathOp(const Op& op);
  absl::Status MbarrierOp(const Op& op);
  absl::Status TmaOp(const Op& op);
  absl::Status WgmmaOp(const Op& op);
  absl::Status BarrierOp(const Op& op);
  absl::Status CollectiveOp(const Op& op);
  absl::Status HintOp(const Op& op);
  absl::Status CallOp(const Op& op);
  absl::Status ControlOp(const Op& op);

  // scalar.cc
  absl::Status Const(const Op& op);
  absl::Status Mov(const Op& op);
  absl::Status Unary(const Op& op);
  absl::Status Compare(const Op& op);
  absl::Status Math(const Op& op);
  absl::Status Special(const Op& op);

  // views.cc
  absl::Status Alloc(const Op& op);
  absl::Status Tile(const Op& op);
  absl::Status Index(const Op& op);
  absl::Status Slice(const Op& op);
  absl::Status Reshape(const Op& op);

  // memory.cc, copy.cc
  absl::Status ElementAccess(const Op& op);
  absl::Status BufferLoadOp(const Op& op, const Root& r, const ViewVals& vv,
                            const std::vector<Value*>& idx, Value* lin);
  absl::Status Copy(const Op& op);
  struct CopyPlan;
  std::vector<Value*> CopyIndex(const CopyPlan& p, int64_t a, int64_t bj, int64_t v);
  void CopyVector(const CopyPlan& p);
  void CopyScalar(const CopyPlan& p);

  // fragment.cc, mma.cc
  absl::Status LoadFragment(const Op& op);
  absl::Status LoadFragmentScalar(const Op& op, const Root& r, const ViewVals& vv);
  // The lane bits ldmatrix x4 addresses rows with: lane & 7, bit 3, bit 4.
  struct MatrixLanes {
    Value* warp;
    Value* l8;
    Value* lb3;
    Value* lb4;
  };
  void LoadMatrixA(const Op& op, const Root& r, const ViewVals& vv, const MatrixLanes& l);
  void LoadMatrixB(const Op& op, const Root& r, const ViewVals& vv, const MatrixLanes& l,
                   bool trans_view);
  // Sets operand elements e and e+1 of v from the halves of the .b32 `word`.
  void FragSetHalves(int v, int e, Value* word);
  absl::Status StoreFragment(const Op& op);
  // Stores fragment elements `elems` of op's accumulator to op's destination
  // at (row - r0, col - c0); paired 2-element stores where the layout allows.
  absl::Status StoreFragElems(const Op& op, const std::vector<int>& elems, Value* r0, Value* c0);
  absl::Status StoreFragScalar(const Op& op, const Root& r, const ViewVals& vv,
                               const std::vector<int>& elems, Value* r0, Value* c0);
  bool StorePairs(const Op& op, const Root& r, const std::vector<int>& elems);
  absl::Status Mma(const Op& op);
  // Fragment coordinates: (row, col) of lane-element e of fragment var v for
  // this thread, as i64 values.
  absl::Status FragCoord(const Op& op, int v, int e, Value** row, Value** col);
  // The same relative to (r0, c0).
  absl::Status FragCoordFrom(const Op& op, int v, int e, Value* r0, Value* c0, Value** row,
                             Value** col);
  // Sum over lane bits of weight[bit] * bit, as i64.
  Value* EmitLanePart(const std::vector<int>& weight, Value* lane);

  // fragment_math.cc
  absl::Status FragElementwise(const Op& op);
  Value* FragEwValue(ir::FragEwOp fop, Value* x, Value* y, const std::function<Value*()>& third);
  absl::Status FragRowReduce(const Op& op);
  absl::Status FragCoordOp(const Op& op);
  absl::Status ToOperand(const Op& op);

  // mbarrier.cc, tma.cc, wgmma.cc (lower_hopper.h spells the instructions)
  absl::Status MbarrierInit(const Op& op);
  Value* BarrierAddr(const Op& op, int first);
  // The shared address of view `v` and its tensor map for a TMA of op's
  // tensor and box.
  absl::Status TmaOperands(const Op& op, int v, Value** smem, Value** tmap);
  absl::Status Wgmma(const Op& op);
  struct WgmmaPlan;
  absl::Status PlanWgmma(const Op& op, WgmmaPlan* p);
  // The A fragment's registers per instruction (register-A wgmma).
  std::vector<std::vector<Value*>> WgmmaRegisterA(const Op& op, int count);
  void IssueWgmma(const Op& op, const WgmmaPlan& p);
  absl::Status WgmmaWait(const Op& op);
  void FindWaitAccumulators();

  // collectives.cc
  absl::Status Shuffle(const Op& op);
  Value* WarpReduce(ir::ReduceKind k, Value* x, DType t);
  Value* BlockReduce(const Op& op, Value* x, DType t);
  // Shuffles 32-bit pieces of x (any scalar type) through `shfl`.
  Value* ShflValue(Value* x, DType t, const std::function<Value*(Value*)>& shfl);

  // control.cc
  absl::Status For(const Op& op);
  absl::Status If(const Op& op);
  absl::Status While(const Op& op);
  // The default return: void, or the return type's zero.
  void ReturnDefault();

  ModuleState* ms_;
  const ir::Module& m_;
  const ir::Function& f_;
  llvm::Function* fn_;
  llvm::LLVMContext& ctx_;
  llvm::IRBuilder<> b_;
  std::unique_ptr<llvm::IRBuilder<>> alloca_b_;
  TargetOps* ops_;
  bool amd_ = false;
  KernelBindings kb_;
  std::vector<ViewFact> facts_;
  std::map<int, AllocaInst*> slots_;
  std::map<int, ViewSlots> views_;
  std::map<int, AllocaInst*> frags_;
  std::vector<Value*> tensor_args_;
  std::vector<Value*> rsrc_;
  std::map<int, int> desc_src_;     // wgmma operand var -> the view var it describes
  std::map<int, Value*> bar_base_;  // mbarrier array var -> its shared u64 array
  std::map<const Op*, std::vector<int>> wait_accs_;  // kWgmmaWait -> accumulators
};

}  // namespace argus::codegen::emit

#endif  // ARGUS_CODEGEN_EMIT_EMITTER_H_
