// dsl/check.h: semantic analysis — AST to tile IR.
//
// Check() resolves names, evaluates compile-time constants (with per-job
// overrides), checks types, shapes, memory-space rules and call signatures,
// and lowers every function to structured tile IR (ir.h) with constants
// folded. All errors are located diagnostics (source.h) carrying a hint.
// Compile() is Parse() + Check() on a file's text. Implemented in dsl/sema/.
//
// Thread safety: pure functions; the returned Module is independent data.
#ifndef ARGUS_DSL_CHECK_H_
#define ARGUS_DSL_CHECK_H_

#include <map>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "dsl/ast.h"
#include "dsl/ir.h"
#include "dsl/source.h"

namespace argus::dsl {

struct CheckOptions {
  // NAME -> value text ("128", "0.5", "True"); each must name a const param of
  // some kernel in the file.
  std::map<std::string, std::string> consts;
  // "sm_90a" or "gfx942"; empty: the kernel's own arch= or sm_90a.
  std::string arch;
};

absl::StatusOr<ir::Module> Check(std::shared_ptr<const SourceFile> src, const Module& ast,
                                 const CheckOptions& options);

absl::StatusOr<ir::Module> Compile(std::shared_ptr<const SourceFile> src,
                                   const CheckOptions& options);

// Reads `path` and compiles it.
absl::StatusOr<ir::Module> CompileFile(const std::string& path, const CheckOptions& options);

}  // namespace argus::dsl

#endif  // ARGUS_DSL_CHECK_H_
