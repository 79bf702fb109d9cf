#include "base/daemon_flags.h"

#include <iostream>

#include "base/data_dir.h"
#include "base/logging.h"

namespace argus {

std::optional<int> ParseDaemonFlags(const std::string& program, FlagSet& flags, int argc,
                                    char** argv) {
  std::string log_level = "info";
  flags.String("log_level", &log_level, "trace, debug, info, warn, error, off");
  DeclareDataDirFlag(flags);
  auto args = flags.Parse(argc, argv);
  if (!args.ok()) {
    std::cerr << args.status().message() << "\n";
    return 2;
  }
  if (flags.help_requested()) {
    std::cout << flags.Help();
    return 0;
  }
  if (!args->empty()) {
    std::cerr << program << ": unexpected argument '" << (*args)[0] << "'\n";
    return 2;
  }
  if (auto st = InitLogging(program, log_level); !st.ok()) {
    std::cerr << program << ": " << st.message() << "\n";
    return 2;
  }
  return std::nullopt;
}

}  // namespace argus
