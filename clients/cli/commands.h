// clients/cli/commands.h: the verbs of the `argus` command.
//
// Each verb parses its own flags (plus the global ones), talks to the
// server through a Connection (or the embedded default where the verb
// allows it), prints text or --json, and returns an ExitCode.
//
// Thread safety: verbs run on the main thread.
#ifndef ARGUS_CLIENTS_CLI_COMMANDS_H_
#define ARGUS_CLIENTS_CLI_COMMANDS_H_

#include <functional>
#include <string>
#include <vector>

namespace argus::cli {

struct Verb {
  std::string name;
  std::string summary;
  std::function<int(const std::string& name, const std::vector<std::string>& args)> run;
};

// Every verb, in the order `argus --help` lists them.
const std::vector<Verb>& Verbs();
// Adds verbs from other parts of the CLI (tune, compile, verify, ...).
void RegisterVerb(Verb verb);

int Main(int argc, char** argv);

}  // namespace argus::cli

#endif  // ARGUS_CLIENTS_CLI_COMMANDS_H_
