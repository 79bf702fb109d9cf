// dsl/cli.h: the `ir` and `run` verbs of argus-dsl, as library functions.
//
// The lead folds these verbs into the main `argus` CLI; the argus-dsl main is
// a thin dispatcher. Each verb takes its arguments (after the verb name),
// writes its normal output to `out` and returns a Status (diagnostics are in
// the status message).
//
//   ir FILE [--kernel NAME] [--const NAME=V]... [--arch A]
//   run FILE [--kernel NAME] [--const NAME=V]... [--arch A] --dims M=..,N=..
//       [--scalars NAME=V,...] [--inputs random|zeros] [--seed S]
//
// Thread safety: reentrant; no shared state.
#ifndef ARGUS_DSL_CLI_H_
#define ARGUS_DSL_CLI_H_

#include <ostream>
#include <string>
#include <vector>

#include "absl/status/status.h"

namespace argus::dsl {

// `program` names the command in usage lines and errors ("argus ir" when the
// argus CLI runs the verb).
absl::Status IrVerb(const std::vector<std::string>& args, std::ostream& out,
                    const std::string& program = "argus-dsl ir");
absl::Status RunVerb(const std::vector<std::string>& args, std::ostream& out,
                     const std::string& program = "argus-dsl run");
// Dispatches args[0] ("ir" | "run") to the verbs above.
absl::Status DslMain(const std::vector<std::string>& args, std::ostream& out);

}  // namespace argus::dsl

#endif  // ARGUS_DSL_CLI_H_
