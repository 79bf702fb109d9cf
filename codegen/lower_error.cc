// The lowering passes' located error (lower_internal.h).
#include "absl/strings/str_cat.h"
#include "codegen/lower_internal.h"
#include "dsl/source.h"

namespace argus::codegen {

absl::Status LoweringError(const dsl::ir::Module& m, dsl::Loc loc, std::string message,
                           std::string hint) {
  if (m.source) {
    dsl::Diagnostic d{loc, std::move(message), std::move(hint)};
    return absl::FailedPreconditionError(dsl::FormatDiagnostic(*m.source, d));
  }
  return absl::FailedPreconditionError(absl::StrCat(loc.line, ":", loc.col, ": ", message,
                                                    hint.empty() ? "" : " (hint: " + hint + ")"));
}

}  // namespace argus::codegen
