// verifier/cli.h: the `verify` verb as a library function (the argus CLI's
// clients/cli/verify_verb.cc is a thin wrapper).
//
//   verify FILE [--const NAME=V]... [--dims M=4096,N=...] [--arch A] [--json]
//          [--timeout-ms T]
//
// Writes the report (text, or JSON with --json) to `out`. Returns the
// report's verdict (true: verified) or a Status for input errors (bad flags,
// unreadable file, parse/type errors: kInvalidArgument / kNotFound).
//
// Thread safety: reentrant.
#ifndef ARGUS_VERIFIER_CLI_H_
#define ARGUS_VERIFIER_CLI_H_

#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace argus::verifier {

absl::StatusOr<bool> VerifyVerb(const std::vector<std::string>& args, std::ostream& out);

}  // namespace argus::verifier

#endif  // ARGUS_VERIFIER_CLI_H_
