// codegen/amdgpu_backend.h: llvm::Module -> AMDGPU (LLVM 19) object -> code object (ld.lld).
//
// EmitAmdgpuCodeObject optimizes (O3) and lowers a module for an AMD
// architecture ("gfx942" for MI300X), then links the relocatable object into
// a shared HSA code object with `ld.lld-19 -shared` (from $ARGUS_LLD, $PATH,
// or /usr/lib/llvm-19/bin/ld.lld). The code object version (5 by default, 4 on
// request) is set through the `amdhsa_code_object_version` module flag.
// Kernels are marked with MarkAmdgpuKernel (amdgpu_kernel calling convention,
// flat work-group size). ReadAmdgpuMetadata parses the code object's
// NT_AMDGPU_METADATA note (msgpack) into KernelResources: VGPR/SGPR/AGPR
// counts, LDS (group segment), scratch (private segment), spills.
//
// Thread safety: thread-safe for distinct modules/contexts; each link uses
// its own temporary directory.
#ifndef ARGUS_CODEGEN_AMDGPU_BACKEND_H_
#define ARGUS_CODEGEN_AMDGPU_BACKEND_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "codegen/kernel_metadata.h"

namespace llvm {
class Function;
class Module;
}  // namespace llvm

namespace argus::codegen {

struct AmdgpuOptions {
  std::string arch = "gfx942";
  int code_object_version = 5;  // 4 or 5
  std::string features;         // e.g. "+wavefrontsize64"; "" = the arch's default
  int opt_level = 3;
  bool verify = true;
};

// Gives `fn` the amdgpu_kernel calling convention and, when > 0, the
// "amdgpu-flat-work-group-size"="1,max_threads" attribute.
void MarkAmdgpuKernel(llvm::Function& fn, int max_threads = 0);

// The linked code object (ELF shared object, loadable by hipModuleLoadData).
absl::StatusOr<std::string> EmitAmdgpuCodeObject(llvm::Module& module,
                                                 std::string_view arch = "gfx942",
                                                 int code_object_version = 5);
absl::StatusOr<std::string> EmitAmdgpuCodeObject(llvm::Module& module,
                                                 const AmdgpuOptions& options);

// The relocatable object before linking, the assembly text (with its
// `.amdhsa_*` directives), and the optimized LLVM IR text.
absl::StatusOr<std::string> EmitAmdgpuObject(llvm::Module& module, const AmdgpuOptions& options);
absl::StatusOr<std::string> EmitAmdgpuAssembly(llvm::Module& module,
                                               const AmdgpuOptions& options = {});
absl::StatusOr<std::string> EmitAmdgpuLlvmIr(llvm::Module& module,
                                             const AmdgpuOptions& options = {});

// Everything at once from one optimized module (what `--emit=all` writes).
struct AmdgpuArtifacts {
  std::string llvm_ir;                   // optimized LLVM IR text
  std::string assembly;                  // AMDGPU asm with .amdhsa_* directives
  std::string object;                    // relocatable ELF
  std::string code_object;               // linked shared code object (.hsaco)
  std::vector<KernelResources> kernels;  // from the code object's metadata note
};
absl::StatusOr<AmdgpuArtifacts> CompileAmdgpu(llvm::Module& module,
                                              const AmdgpuOptions& options = {});

// Links relocatable AMDGPU object bytes into a shared code object.
absl::StatusOr<std::string> LinkAmdgpuCodeObject(const std::string& object);

// `llvm-objdump-19 -d --mcpu=<arch>` of a code object (from $ARGUS_OBJDUMP,
// $PATH or /usr/lib/llvm-19/bin): what the compile checks grep for v_mfma_*,
// buffer_load_*, ds_read_*.
absl::StatusOr<std::string> DisassembleAmdgpu(const std::string& code_object,
                                              std::string_view arch = "gfx942");

// Kernel resources from a code object's (or object's) AMDGPU metadata note.
absl::StatusOr<std::vector<KernelResources>> ReadAmdgpuMetadata(std::string_view code_object);

// The code object version recorded in the ELF header's ABI version
// (ELFABIVERSION_AMDGPU_HSA_V4 = 2 -> 4, V5 = 3 -> 5).
absl::StatusOr<int> ReadCodeObjectVersion(std::string_view code_object);

}  // namespace argus::codegen

#endif  // ARGUS_CODEGEN_AMDGPU_BACKEND_H_
