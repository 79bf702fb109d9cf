// codegen/lower.h: the DSL lowering — tile IR (dsl/ir.h) -> LLVM IR.
//
// LowerKernel (lower_kernel.cc) turns one checked kernel (and the device
// functions it calls) into an llvm::Module for a GpuTarget, as a pipeline of
// small passes, one file each:
//   1. CheckTargetSupport (lower_support.cc): every op the kernel uses is
//      available on the target, or a located error names the target lacking it.
//   2. AnalyzeViews (lower_views.cc): the buffer each view variable windows and
//      the strides known at compile time (for vector and ldmatrix decisions).
//   3. Emit (emit/emitter.h, one file per op family): IRBuilder code per
//      thread (SIMT), with views as (offset, shape, stride) registers,
//      fragments as per-lane arrays, and the target's intrinsics from
//      lower_target.cc.
// The module is then handed to EmitPtx / CompileAmdgpu (dsl_compile.h).
// EvalGrid (lower_grid.cc) evaluates the kernel's host-side `launch` block
// for given dims.
//
// Kernel parameters, in order: every tensor (a global pointer), every dim
// (i32), every scalar (its type). KernelMetadata::params records them.
//
// Thread safety: pure functions of their arguments; each call needs its own
// llvm::LLVMContext (or external serialisation of the one it is given).
#ifndef ARGUS_CODEGEN_LOWER_H_
#define ARGUS_CODEGEN_LOWER_H_

#include <array>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "codegen/kernel_metadata.h"
#include "codegen/target.h"
#include "dsl/ir.h"

namespace llvm {
class LLVMContext;
class Module;
}  // namespace llvm

namespace argus::codegen {

struct LoweredKernel {
  std::unique_ptr<llvm::Module> module;
  KernelMetadata metadata;         // symbol, target, params, block, static shared bytes
  std::vector<std::string> notes;  // e.g. hints a target ignores
  LoweredKernel();
  LoweredKernel(LoweredKernel&&);
  LoweredKernel& operator=(LoweredKernel&&);
  ~LoweredKernel();
};

// Pass 1. OK, or a located error (FailedPrecondition) naming the construct and
// the target that lacks it.
absl::Status CheckTargetSupport(const dsl::ir::Module& module, const dsl::ir::Function& kernel,
                                const GpuTarget& target, std::vector<std::string>* notes);

absl::StatusOr<LoweredKernel> LowerKernel(const dsl::ir::Module& module,
                                          const dsl::ir::Function& kernel, const GpuTarget& target,
                                          llvm::LLVMContext& ctx);

// Grid of the kernel for the given dims (x, y, z).
absl::StatusOr<std::array<int, 3>> EvalGrid(const dsl::ir::Function& kernel,
                                            const std::map<std::string, int64_t>& dims);

}  // namespace argus::codegen

#endif  // ARGUS_CODEGEN_LOWER_H_
