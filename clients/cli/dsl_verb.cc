// `argus ir` and `argus run`: the DSL front end and reference interpreter.
#include <iostream>

#include "clients/cli/commands.h"
#include "clients/cli/exit_codes.h"
#include "clients/cli/verb_flags.h"
#include "dsl/cli.h"

namespace argus::cli {
namespace {

int RunDsl(const std::string& verb, const std::vector<std::string>& args,
           absl::Status (*fn)(const std::vector<std::string>&, std::ostream&, const std::string&)) {
  absl::Status st = fn(args, std::cout, "argus " + verb);
  if (st.ok()) return kExitOk;
  PrintVerbError(verb, st);
  // Input errors (parse, type, flags) are usage errors; a kernel that fails
  // while running (out of bounds, divergent barrier) is a failed job.
  return st.code() == absl::StatusCode::kInvalidArgument || st.code() == absl::StatusCode::kNotFound
             ? kExitUsage
             : kExitJobFailed;
}

const bool kRegistered = [] {
  RegisterVerb({"ir", "print the tile IR of a DSL file (argus ir FILE --const NAME=V)",
                [](const std::string& v, const std::vector<std::string>& a) {
                  return RunDsl(v, a, dsl::IrVerb);
                }});
  RegisterVerb({"run", "run a DSL kernel in the reference interpreter",
                [](const std::string& v, const std::vector<std::string>& a) {
                  return RunDsl(v, a, dsl::RunVerb);
                }});
  return true;
}();

}  // namespace
}  // namespace argus::cli
