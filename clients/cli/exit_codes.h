// clients/cli/exit_codes.h: the argus CLI's exit codes, a stable contract
// for scripts (documented in docs/cli.md).
#ifndef ARGUS_CLIENTS_CLI_EXIT_CODES_H_
#define ARGUS_CLIENTS_CLI_EXIT_CODES_H_

#include "absl/status/status.h"

namespace argus::cli {

enum ExitCode : int {
  kExitOk = 0,           // success
  kExitJobFailed = 1,    // the job (or verification) ended unsuccessfully
  kExitUsage = 2,        // bad flags, arguments or input files
  kExitUnreachable = 3,  // the server could not be reached
  kExitNotFound = 4,     // the job (or other named thing) does not exist
  kExitServerError = 5,  // the server refused or failed the request
};

inline int ExitCodeFor(const absl::Status& s) {
  switch (s.code()) {
    case absl::StatusCode::kOk:
      return kExitOk;
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kOutOfRange:
      return kExitUsage;
    case absl::StatusCode::kUnavailable:
    case absl::StatusCode::kDeadlineExceeded:
      return kExitUnreachable;
    case absl::StatusCode::kNotFound:
      return kExitNotFound;
    default:
      return kExitServerError;
  }
}

}  // namespace argus::cli

#endif  // ARGUS_CLIENTS_CLI_EXIT_CODES_H_
