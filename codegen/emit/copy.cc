// Block copies (kCopy) of rank-1 and rank-2 tiles through a thread layout
// and per-thread copies (kThreadCopy: each thread the whole tile):
// each thread moves `vec` contiguous elements per (row, column block) of the
// layout, in 16-, 8- or 4-byte chunks where the views allow (cp.async on
// sm_90a when async, buffer loads on gfx942), else element by element.
#include "absl/strings/str_cat.h"
#include "base/status.h"
#include "codegen/emit/emitter.h"
#include "llvm/IR/IntrinsicsAMDGPU.h"
#include "llvm/IR/IntrinsicsNVPTX.h"

namespace argus::codegen::emit {

// One copy's geometry and operands, as its emitting functions share them.
struct Emitter::CopyPlan {
  int rank;
  int64_t vec;           // contiguous elements per thread and column block
  int64_t trows, tcols;  // the thread layout
  int64_t nI, nJ;        // row and column blocks per thread
  Value* tr;             // this thread's row and column in the layout (i64)
  Value* tc;
  Root rs, rd;
  ViewVals s, d;
  int eb;          // element bytes
  int bytes;       // chunk bytes of the vector path (0: none)
  int64_t celems;  // elements per chunk
  bool async;
  BasicBlock* done;
  BasicBlock* scalar;
};

namespace {

absl::Status CheckCopyShape(const ir::Module& m, const ir::Op& op, const ir::Type& st) {
  for (int64_t e : st.shape) {
    if (e < 0)
      return LoweringError(m, op.loc, "codegen needs a copy with a compile-time tile shape",
                           "copy a .tile((R, C), ...) of the tensor");
  }
  const ir::Layout& tl = op.layout;
  int rank = st.rank();
  for (int d = 0; d < rank; ++d) {
    int64_t per = tl.shape[d] * (d == rank - 1 ? tl.vec : 1);
    if (st.shape[d] % per != 0)
      return LoweringError(m, op.loc,
                           absl::StrCat("copy extent ", st.shape[d], " of dim ", d,
                                        " is not a multiple of the thread layout's ", per));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status Emitter::Copy(const ir::Op& op) {
  int sv = op.operands[0], dv = op.operands[1];
  const ir::Type& st = VT(sv);
  RETURN_IF_ERROR(CheckCopyShape(m_, op, st));
  const ir::Layout& tl = op.layout;
  CopyPlan p;
  p.rank = st.rank();
  p.vec = tl.vec;
  ASSIGN_OR_RETURN(p.rs, RootOf(op, sv));
  ASSIGN_OR_RETURN(p.rd, RootOf(op, dv));
  p.s = LoadView(sv);
  p.d = LoadView(dv);
  // A thread copy is the whole tile by each thread: thread 0's share of a
  // one-thread layout.
  const bool own = op.code == OpCode::kThreadCopy;
  Value* tid = own ? C32(0) : Tid();
  p.done = BasicBlock::Create(ctx_, "copy.done", fn_);
  if (!own && tl.Size() < f_.threads) {
    BasicBlock* go = BasicBlock::Create(ctx_, "copy", fn_);
    b_.CreateCondBr(b_.CreateICmpULT(tid, C32(tl.Size())), go, p.done);
    b_.SetInsertPoint(go);
  }
  int rank = p.rank;
  p.tcols = rank == 2 ? tl.shape[1] : tl.shape[0];
  p.trows = rank == 2 ? tl.shape[0] : 1;
  p.tr = rank == 2 ? b_.CreateZExt(b_.CreateUDiv(tid, C32(p.tcols)), b_.getInt64Ty()) : C64(0);
  p.tc = b_.CreateZExt(b_.CreateURem(tid, C32(p.tcols)), b_.getInt64Ty());
  int64_t rows = rank == 2 ? st.shape[0] : 1;
  int64_t cols = st.shape[rank - 1];
  p.nI = rows / p.trows;
  p.nJ = cols / (p.tcols * p.vec);
  p.eb = Bytes(p.rs.dt);
  const int total = p.eb * static_cast<int>(p.vec);
  p.bytes = total % 16 == 0 ? 16 : total % 8 == 0 ? 8 : total % 4 == 0 ? 4 : 0;
  p.celems = p.bytes > 0 ? p.bytes / p.eb : 0;
  auto swz_ok = [&](const dsl::Swizzle& z) {
    return !z.active() || (int64_t{1} << z.m) >= p.celems;
  };
  bool vectorize = p.celems > 1 && p.rs.dt == p.rd.dt && facts_[sv].stride.back() == 1 &&
                   facts_[dv].stride.back() == 1 && swz_ok(p.rs.swz) && swz_ok(p.rd.swz) &&
                   p.rs.dt != DType::kBool;
  p.async = op.ints[0] != 0 && !amd_ && p.rs.kind == ViewFact::Root::kTensor &&
            p.rd.kind == ViewFact::Root::kShared;
  p.scalar = BasicBlock::Create(ctx_, "copy.scalar", fn_);
  if (vectorize)
    CopyVector(p);
  else
    b_.CreateBr(p.scalar);
  b_.SetInsertPoint(p.scalar);
  CopyScalar(p);
  b_.CreateBr(p.done);
  b_.SetInsertPoint(p.done);
  return absl::OkStatus();
}

std::vector<Value*> Emitter::CopyIndex(const CopyPlan& p, int64_t a, int64_t bj, int64_t v) {
  std::vector<Value*> ix;
  if (p.rank == 2) ix.push_back(b_.CreateAdd(p.tr, C64(a * p.trows)));
  ix.push_back(b_.CreateAdd(b_.CreateMul(p.tc, C64(p.vec)), C64(bj * p.tcols * p.vec + v)));
  return ix;
}

// The chunked path, taken when both views' offsets (and row strides) are
// chunk-aligned at run time; otherwise the scalar path runs.
void Emitter::CopyVector(const CopyPlan& p) {
  Value* bits = b_.CreateOr(p.s.off, p.d.off);
  if (p.rank == 2) bits = b_.CreateOr(bits, b_.CreateOr(p.s.stride[0], p.d.stride[0]));
  Value* aligned = b_.CreateICmpEQ(b_.CreateAnd(bits, C64(p.celems - 1)), C64(0));
  BasicBlock* vb = BasicBlock::Create(ctx_, "copy.vec", fn_);
  b_.CreateCondBr(aligned, vb, p.scalar);
  b_.SetInsertPoint(vb);
  Type* vt = p.bytes == 4 ? static_cast<Type*>(b_.getInt32Ty())
                          : llvm::FixedVectorType::get(b_.getInt32Ty(), p.bytes / 4);
  for (int64_t a = 0; a < p.nI; ++a) {
    for (int64_t bj = 0; bj < p.nJ; ++bj) {
      for (int64_t v0 = 0; v0 < p.vec; v0 += p.celems) {
        std::vector<Value*> ix = CopyIndex(p, a, bj, v0);
        Value* ls = Linear(p.s, ix);
        Value* dp = ElemPtr(p.rd, Linear(p.d, ix));
        if (p.async) {
          I::ID id = p.bytes == 16  ? I::nvvm_cp_async_cg_shared_global_16
                     : p.bytes == 8 ? I::nvvm_cp_async_ca_shared_global_8
                                    : I::nvvm_cp_async_ca_shared_global_4;
          Call(id, {dp, ElemPtr(p.rs, ls)});
          continue;
        }
        Value* x;
        if (amd_ && p.rs.kind == ViewFact::Root::kTensor)
          x = BufferLoad(p.rs.tensor, vt, b_.CreateMul(ls, C64(p.eb)));
        else
          x = b_.CreateAlignedLoad(vt, ElemPtr(p.rs, ls), llvm::Align(p.bytes));
        b_.CreateAlignedStore(x, dp, llvm::Align(p.bytes));
      }
    }
  }
  b_.CreateBr(p.done);
}

void Emitter::CopyScalar(const CopyPlan& p) {
  const Root& rs = p.rs;
  const Root& rd = p.rd;
  for (int64_t a = 0; a < p.nI; ++a) {
    for (int64_t bj = 0; bj < p.nJ; ++bj) {
      for (int64_t v = 0; v < p.vec; ++v) {
        std::vector<Value*> ix = CopyIndex(p, a, bj, v);
        Value* x;
        if (amd_ && rs.kind == ViewFact::Root::kTensor && rs.dt != DType::kBool) {
          Value* raw = BufferLoad(rs.tensor, b_.getIntNTy(8 * Bytes(rs.dt)),
                                  b_.CreateMul(Linear(p.s, ix), C64(Bytes(rs.dt))));
          x = b_.CreateBitCast(raw, MemTy(rs.dt));
        } else {
          x = LoadElem(rs, Linear(p.s, ix));
        }
        b_.CreateStore(ToMem(Convert(x, rs.dt, rd.dt), rd.dt), ElemPtr(rd, Linear(p.d, ix)));
      }
    }
  }
}

}  // namespace argus::codegen::emit
