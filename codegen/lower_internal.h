// codegen/lower_internal.h: what the lowering passes hand each other.
//
// ViewFacts (from AnalyzeViews) says, for each view variable of a function,
// which buffer it windows (a tensor parameter, a shared allocation or a local
// array) and which of its strides are compile-time constants. TargetOps wraps
// the target-specific intrinsics the emitter needs (lower_target.cc), so the
// emitter itself is target-neutral.
//
// Thread safety: plain data and per-module builders; one thread per module.
#ifndef ARGUS_CODEGEN_LOWER_INTERNAL_H_
#define ARGUS_CODEGEN_LOWER_INTERNAL_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "codegen/target.h"
#include "dsl/ir.h"
#include "llvm/IR/IRBuilder.h"

namespace argus::codegen {

struct ViewFact {
  enum class Root : uint8_t { kNone, kTensor, kShared, kLocal } root = Root::kNone;
  const dsl::ir::Op* alloc = nullptr;  // kShared / kLocal: the allocating op
  int tensor = -1;                     // kTensor: index into Function::tensors
  std::vector<int64_t> stride;         // per dim; -1 = known only at run time
};

// Pass 2. Fails (located) when one view variable may window two buffers.
absl::StatusOr<std::vector<ViewFact>> AnalyzeViews(const dsl::ir::Module& m,
                                                   const dsl::ir::Function& f);

// A located FailedPrecondition error (lower_error.cc): "file:line:col:
// message" with the source line and hint when the module has its source.
absl::Status LoweringError(const dsl::ir::Module& m, dsl::Loc loc, std::string message,
                           std::string hint = "");

// Target intrinsics. All values are i32 unless said otherwise.
class TargetOps {
 public:
  virtual ~TargetOps() = default;
  static std::unique_ptr<TargetOps> Create(const GpuTarget& target, llvm::Module* m);

  virtual bool is_amd() const = 0;
  virtual int hw_warp() const = 0;
  virtual llvm::Value* ThreadId(llvm::IRBuilder<>& b) = 0;
  virtual llvm::Value* BlockId(llvm::IRBuilder<>& b, int dim) = 0;
  virtual llvm::Value* GridDim(llvm::IRBuilder<>& b, int dim) = 0;
  virtual void Barrier(llvm::IRBuilder<>& b) = 0;
  // Value of i32 `x` in lane `src` (within the hardware warp; src in range).
  virtual llvm::Value* ShflIdx(llvm::IRBuilder<>& b, llvm::Value* x, llvm::Value* src) = 0;
  virtual llvm::Value* ShflXor(llvm::IRBuilder<>& b, llvm::Value* x, int mask) = 0;
  // exp2 / log2 / rsqrt on f32.
  virtual llvm::Value* Exp2(llvm::IRBuilder<>& b, llvm::Value* x) = 0;
  // exp2 whose subnormal results may flush to zero (fragment math: the softmax's
  // exponentials, where ptxas would otherwise wrap each ex2 in a rescale).
  virtual llvm::Value* Exp2Ftz(llvm::IRBuilder<>& b, llvm::Value* x) { return Exp2(b, x); }
  virtual llvm::Value* Log2(llvm::IRBuilder<>& b, llvm::Value* x) = 0;
  virtual llvm::Value* Rsqrt(llvm::IRBuilder<>& b, llvm::Value* x) = 0;

 protected:
  llvm::Value* Call(llvm::IRBuilder<>& b, llvm::Intrinsic::ID id, llvm::ArrayRef<llvm::Value*> args,
                    llvm::ArrayRef<llvm::Type*> types = {});
  llvm::Module* m_ = nullptr;
};

}  // namespace argus::codegen

#endif  // ARGUS_CODEGEN_LOWER_INTERNAL_H_
