// clients/cli/verb_flags.h: the flag handling the verbs in *_verb.cc share:
// the global flags (--server, --json, --log_level, --data_dir), --help, logging set-up,
// a count check of the positional arguments, and the one-line error.
//
// Thread safety: for the main thread, as the verbs.
#ifndef ARGUS_CLIENTS_CLI_VERB_FLAGS_H_
#define ARGUS_CLIENTS_CLI_VERB_FLAGS_H_

#include <iostream>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "base/data_dir.h"
#include "base/flags.h"
#include "base/logging.h"
#include "clients/cli/exit_codes.h"

namespace argus::cli {

struct VerbFlags {
  std::string server;
  std::string log_level = "warn";
  bool json = false;

  void Declare(FlagSet& f, bool with_json = true) {
    f.String("server", &server, "argus-server address (default: $ARGUS_SERVER)");
    if (with_json) f.Bool("json", &json, "print JSON for scripts");
    f.String("log_level", &log_level, "trace, debug, info, warn, error, off");
    DeclareDataDirFlag(f);
  }
};

// "argus VERB: message" on stderr, once: messages from a FlagSet named for the
// verb already begin with it.
inline void PrintVerbError(const std::string& verb, const absl::Status& st) {
  const std::string prefix = "argus " + verb + ": ";
  const std::string msg(st.message());
  std::cerr << (msg.rfind(prefix, 0) == 0 ? "" : prefix) << msg << "\n";
}

inline int VerbFail(const std::string& verb, const absl::Status& st) {
  PrintVerbError(verb, st);
  return ExitCodeFor(st);
}

// Parses the verb's flags, answers --help and sets up logging. Returns -1 to
// go on (with *positional set), else the exit code.
inline int ParseVerbFlags(const std::string& verb, FlagSet& flags,
                          const std::vector<std::string>& args, const VerbFlags& g,
                          std::vector<std::string>* positional) {
  auto pos = flags.Parse(args);
  if (!pos.ok()) {
    std::cerr << pos.status().message() << "\n";
    return kExitUsage;
  }
  if (flags.help_requested()) {
    std::cout << flags.Help();
    return kExitOk;
  }
  if (auto st = InitLogging("argus", g.log_level); !st.ok()) return VerbFail(verb, st);
  *positional = *std::move(pos);
  return -1;
}

// ParseVerbFlags, then exactly one positional argument (`what`, e.g. "job
// id"). Returns -1 to go on (with *arg set), else the exit code.
inline int ParseOneArg(const std::string& verb, FlagSet& flags,
                       const std::vector<std::string>& args, const VerbFlags& g,
                       const std::string& what, std::string* arg) {
  std::vector<std::string> pos;
  if (int rc = ParseVerbFlags(verb, flags, args, g, &pos); rc >= 0) return rc;
  if (pos.size() != 1) {
    std::cerr << "argus " << verb << ": expected one " << what << " (see argus " << verb
              << " --help)\n";
    return kExitUsage;
  }
  *arg = pos[0];
  return -1;
}

}  // namespace argus::cli

#endif  // ARGUS_CLIENTS_CLI_VERB_FLAGS_H_
