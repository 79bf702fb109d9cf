// `argus compile`: DSL kernel -> PTX/cubin or gfx942 code object + metadata JSON.
#include <iostream>

#include "clients/cli/commands.h"
#include "clients/cli/exit_codes.h"
#include "clients/cli/verb_flags.h"
#include "codegen/compile_cli.h"

namespace argus::cli {
namespace {

const bool kRegistered = [] {
  RegisterVerb({"compile",
                "compile a DSL kernel for gfx942 or sm_90a (argus compile FILE --target T -o DIR)",
                [](const std::string& verb, const std::vector<std::string>& args) {
                  absl::Status st = codegen::CompileVerb(args, std::cout);
                  if (st.ok()) return kExitOk;
                  PrintVerbError(verb, st);
                  return st.code() == absl::StatusCode::kInvalidArgument ||
                                 st.code() == absl::StatusCode::kNotFound
                             ? kExitUsage
                             : kExitJobFailed;
                }});
  return true;
}();

}  // namespace
}  // namespace argus::cli
