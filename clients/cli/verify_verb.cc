// `argus verify`: prove a DSL kernel's data-flow invariants (verifier/).
#include <iostream>

#include "clients/cli/commands.h"
#include "clients/cli/exit_codes.h"
#include "clients/cli/verb_flags.h"
#include "verifier/cli.h"

namespace argus::cli {
namespace {

const bool kRegistered = [] {
  RegisterVerb({"verify",
                "prove a DSL kernel's data-flow invariants (argus verify FILE --const NAME=V)",
                [](const std::string& v, const std::vector<std::string>& a) {
                  absl::StatusOr<bool> ok = verifier::VerifyVerb(a, std::cout);
                  if (ok.ok()) return *ok ? kExitOk : kExitJobFailed;
                  PrintVerbError(v, ok.status());
                  return kExitUsage;
                }});
  return true;
}();

}  // namespace
}  // namespace argus::cli
