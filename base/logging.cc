#include "base/logging.h"

#include "absl/strings/str_cat.h"
#include "spdlog/sinks/stdout_color_sinks.h"

namespace argus {

absl::Status InitLogging(const std::string& program, const std::string& level) {
  auto parsed = spdlog::level::from_str(level);
  // from_str maps unknown names to `off`; only accept "off" when spelt so.
  if (parsed == spdlog::level::off && level != "off") {
    return absl::InvalidArgumentError(absl::StrCat("--log_level: unknown level '", level,
                                                   "' (trace, debug, info, warn, error, off)"));
  }
  auto logger = spdlog::stderr_color_mt(program);
  logger->set_pattern("%Y-%m-%dT%H:%M:%S.%e %^%l%$ %n[%P]: %v");
  logger->set_level(parsed);
  spdlog::set_default_logger(logger);
  return absl::OkStatus();
}

}  // namespace argus
