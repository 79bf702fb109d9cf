// codegen/target.h: the LLVM layer shared by the NVPTX and AMDGPU backends.
//
// Only the NVPTX and AMDGPU targets of LLVM 19 are initialized (once, on first
// use). A GpuTarget names a vendor and an architecture ("sm_90a", "gfx942");
// CreateTargetMachine builds the llvm::TargetMachine for it, and the Emit*
// helpers turn a module into LLVM IR text, assembly text or an object file.
// The DSL lowering builds an llvm::Module (any triple/datalayout; they are set
// here) and hands it to EmitPtx (nvptx_backend.h) or EmitAmdgpuCodeObject
// (amdgpu_backend.h). llvm::Error / Expected never cross this interface: they
// become absl::Status.
//
// Thread safety: InitializeGpuTargets is thread-safe (std::call_once). The
// other functions are thread-safe as long as each thread uses its own
// llvm::LLVMContext / Module / TargetMachine; a Module is mutated (triple,
// datalayout, optimization) by the functions that take it non-const.
#ifndef ARGUS_CODEGEN_TARGET_H_
#define ARGUS_CODEGEN_TARGET_H_

#include <memory>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace llvm {
class Module;
class TargetMachine;
class Error;
}  // namespace llvm

namespace argus::codegen {

enum class GpuVendor { kNvidia, kAmd };

struct GpuTarget {
  GpuVendor vendor = GpuVendor::kNvidia;
  std::string arch = "sm_90a";  // NVIDIA: sm_XX[a]; AMD: gfxNNN
  std::string features;         // LLVM feature string, e.g. "+ptx80"; "" = default
  int opt_level = 3;            // codegen optimization level 0..3

  static GpuTarget Nvptx(std::string arch = "sm_90a");
  static GpuTarget Amdgpu(std::string arch = "gfx942");
  std::string Triple() const;  // "nvptx64-nvidia-cuda" | "amdgcn-amd-amdhsa"
};

// Initializes the NVPTX and AMDGPU targets, their MC layers and asm printers.
void InitializeGpuTargets();

// Converts an llvm::Error to a Status (consumes it). `context` prefixes the message.
absl::Status ToStatus(llvm::Error error, std::string_view context);

absl::StatusOr<std::unique_ptr<llvm::TargetMachine>> CreateTargetMachine(const GpuTarget& target);

// Sets the module's triple and data layout from the target machine.
void PrepareModule(llvm::Module& module, const llvm::TargetMachine& tm);

// Runs llvm::verifyModule; InvalidArgument with the verifier's message on failure.
absl::Status VerifyModule(const llvm::Module& module);

// Runs the default middle-end pipeline (O0..O3) with the target's analyses,
// as clang would before codegen. The module must already be prepared.
absl::Status OptimizeModule(llvm::Module& module, llvm::TargetMachine& tm, int level);

// Textual LLVM IR (what `--emit=llvm` prints).
std::string EmitLlvmIr(const llvm::Module& module);

// Target assembly (PTX for NVPTX, AMDGPU asm for AMDGPU) or an ELF object.
// Both run the codegen pipeline on the module; call on a prepared module.
absl::StatusOr<std::string> EmitAssembly(llvm::Module& module, llvm::TargetMachine& tm);
absl::StatusOr<std::string> EmitObject(llvm::Module& module, llvm::TargetMachine& tm);

}  // namespace argus::codegen

#endif  // ARGUS_CODEGEN_TARGET_H_
