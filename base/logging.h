// base/logging.h: process-wide logging setup over spdlog.
//
// Programs call InitLogging() once from main with the value of their
// --log_level flag (trace, debug, info, warn, error, off). Log lines go to
// stderr so that stdout stays machine-readable (--json output).
//
// Thread safety: InitLogging is not thread-safe; spdlog's logging calls are.
#ifndef ARGUS_BASE_LOGGING_H_
#define ARGUS_BASE_LOGGING_H_

#include <string>

#include "absl/status/status.h"
#include "spdlog/spdlog.h"

namespace argus {

// Sets up the default logger named `program` at `level`.
absl::Status InitLogging(const std::string& program, const std::string& level);

}  // namespace argus

#endif  // ARGUS_BASE_LOGGING_H_
