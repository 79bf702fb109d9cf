// codegen/dsl_compile.h: DSL source -> checked IR -> LLVM IR -> artifact + metadata.
//
// CompileDsl runs the whole compiler for one kernel and one target: the DSL
// front end (dsl/check.h, with the target as its arch), the lowering passes
// (lower.h), then the backend — PTX (and a cubin through ptxas when one is
// installed) for sm_90a, a linked code object (v5 by default, v4 on request)
// for gfx942 — and fills KernelMetadata: symbol, params, launch geometry (when
// dims are given), shared/LDS bytes, registers, spills and scratch.
// WriteArtifacts lays the results out in a directory, `<kernel>.json` beside
// `<kernel>.ptx|.cubin|.hsaco` (and `.ll`, `.s` on request).
//
// Thread safety: reentrant; each call uses its own LLVMContext.
#ifndef ARGUS_CODEGEN_DSL_COMPILE_H_
#define ARGUS_CODEGEN_DSL_COMPILE_H_

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "codegen/kernel_metadata.h"

namespace argus::codegen {

struct DslCompileOptions {
  std::string target = "sm_90a";              // sm_90a | gfx942
  std::string kernel;                         // "" = the last kernel in the file
  std::map<std::string, std::string> consts;  // NAME -> value text
  std::map<std::string, int64_t> dims;        // for the launch geometry; may be empty
  int code_object_version = 5;                // gfx942: 4 or 5
  bool assemble = true;                       // sm_90a: run ptxas when present
  bool want_llvm = false, want_asm = false;   // keep the optimized IR / assembly text
};

struct DslArtifacts {
  KernelMetadata metadata;  // artifact names are relative ("<kernel>.ptx", ...)
  std::string ptx, cubin;   // sm_90a
  std::string code_object;  // gfx942
  std::string llvm_ir, assembly;
  std::string ptxas_log;
  std::vector<std::string> notes;
};

absl::StatusOr<DslArtifacts> CompileDslSource(const std::string& name, const std::string& text,
                                              const DslCompileOptions& options);
absl::StatusOr<DslArtifacts> CompileDslFile(const std::string& path,
                                            const DslCompileOptions& options);

// Writes the artifact(s) and `<kernel>.json` into `dir` (created if needed).
absl::Status WriteArtifacts(const DslArtifacts& a, const std::string& dir);

}  // namespace argus::codegen

#endif  // ARGUS_CODEGEN_DSL_COMPILE_H_
