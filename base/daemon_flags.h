// base/daemon_flags.h: the common start of every Argus daemon's main().
//
// ParseDaemonFlags() declares --log_level and --data_dir (base/data_dir.h) on
// `flags`, parses argv, prints --help, rejects positional arguments and sets
// up logging. It returns an exit code when main should stop now (0 after
// --help, 2 on bad input) and std::nullopt when it should go on.
//
// Thread safety: call from main before starting threads.
#ifndef ARGUS_BASE_DAEMON_FLAGS_H_
#define ARGUS_BASE_DAEMON_FLAGS_H_

#include <optional>
#include <string>

#include "base/flags.h"

namespace argus {

std::optional<int> ParseDaemonFlags(const std::string& program, FlagSet& flags, int argc,
                                    char** argv);

}  // namespace argus

#endif  // ARGUS_BASE_DAEMON_FLAGS_H_
