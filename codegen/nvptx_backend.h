// codegen/nvptx_backend.h: llvm::Module -> PTX (LLVM 19 NVPTX) -> cubin (ptxas).
//
// EmitPtx optimizes (O3 by default) and lowers a module to PTX for an NVIDIA
// architecture; the default "sm_90a" target writes `.version 8.0` / `.target
// sm_90a`, which ptxas 12.x and 13.x accept. Kernels are marked with
// MarkNvptxKernel (the `nvvm.annotations` "kernel" entry, plus maxntid).
// AssemblePtx runs `ptxas -arch=<arch> -v` (from $ARGUS_PTXAS, $PATH or
// /usr/local/cuda/bin) and parses its resource report into KernelResources.
//
// Thread safety: all functions are thread-safe for distinct modules/contexts;
// AssemblePtx uses its own temporary directory per call.
#ifndef ARGUS_CODEGEN_NVPTX_BACKEND_H_
#define ARGUS_CODEGEN_NVPTX_BACKEND_H_

#include <optional>
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

struct PtxOptions {
  std::string arch = "sm_90a";
  int ptx_version = 80;  // PTX ISA 8.0: the first with sm_90a; LLVM 19 knows up to 8.5
  int opt_level = 3;     // middle-end pipeline and codegen level; 0 = none
  bool verify = true;    // run the IR verifier first
};

// Marks `fn` as a kernel entry (and, when > 0, `.maxntid max_threads` and
// `.minnctapersm min_blocks`).
void MarkNvptxKernel(llvm::Function& fn, int max_threads = 0, int min_blocks = 0);

// Lowers `module` to PTX text. The module is prepared (triple, datalayout) and
// optimized in place.
absl::StatusOr<std::string> EmitPtx(llvm::Module& module, std::string_view arch = "sm_90a");
absl::StatusOr<std::string> EmitPtx(llvm::Module& module, const PtxOptions& options);

// Prepares and optimizes the module as EmitPtx would, then returns its LLVM IR
// text (for `--emit=llvm`).
absl::StatusOr<std::string> EmitNvptxLlvmIr(llvm::Module& module, const PtxOptions& options = {});

// The ptxas to use: $ARGUS_PTXAS, else `ptxas` on $PATH, else
// /usr/local/cuda/bin/ptxas; nullopt when none is executable.
std::optional<std::string> FindPtxas();

struct PtxasResult {
  std::string cubin;  // the ELF cubin ptxas wrote
  std::vector<KernelResources> kernels;
  std::string log;  // ptxas -v output (stderr + stdout)
  std::string ptxas_path;
};

// Assembles PTX with `ptxas -arch=<arch> -v`. NotFound when no ptxas exists;
// InvalidArgument with ptxas's messages when it rejects the PTX.
absl::StatusOr<PtxasResult> AssemblePtx(const std::string& ptx, std::string_view arch = "sm_90a",
                                        const std::vector<std::string>& extra_flags = {});

// Parses a `ptxas -v` report (one entry per entry function, in order).
std::vector<KernelResources> ParsePtxasLog(std::string_view log);

}  // namespace argus::codegen

#endif  // ARGUS_CODEGEN_NVPTX_BACKEND_H_
