// `argus kb`: the knowledge base this program reads ($ARGUS_KB_DIR, else kb/
// of the data directory, base/data_dir.h): where it is, its techniques and
// its kernel templates.
#include <iostream>

#include "absl/strings/str_format.h"
#include "clients/cli/commands.h"
#include "clients/cli/exit_codes.h"
#include "clients/cli/verb_flags.h"
#include "kb/kb.h"
#include "nlohmann/json.hpp"

namespace argus::cli {
namespace {

int KbVerb(const std::string& verb, const std::vector<std::string>& args) {
  VerbFlags g;
  FlagSet flags("argus kb",
                "[--json] [--data_dir DIR]\n\n"
                "Lists the techniques and kernel templates of the knowledge base.");
  g.Declare(flags);
  std::vector<std::string> pos;
  if (int rc = ParseVerbFlags(verb, flags, args, g, &pos); rc >= 0) return rc;
  if (!pos.empty()) {
    std::cerr << "argus " << verb << ": unexpected argument '" << pos[0] << "'\n";
    return kExitUsage;
  }
  const std::string dir = kb::DefaultKbDir();
  auto kb = kb::Kb::Load(dir);
  if (!kb.ok()) return VerbFail(verb, kb.status());
  if (g.json) {
    nlohmann::json out = {{"dir", dir},
                          {"techniques", nlohmann::json::array()},
                          {"templates", nlohmann::json::array()}};
    for (const auto& t : kb->techniques()) out["techniques"].push_back(t.id);
    for (const auto& t : kb->templates()) {
      out["templates"].push_back(
          {{"id", t.id}, {"family", t.family}, {"kernel", t.kernel}, {"source", t.source_file}});
    }
    std::cout << out.dump(2) << "\n";
    return kExitOk;
  }
  std::cout << "kb: " << dir << "\n\ntechniques (" << kb->techniques().size() << "):\n";
  for (const auto& t : kb->techniques()) {
    std::cout << absl::StrFormat("  %-24s %s\n", t.id, t.title);
  }
  std::cout << "\ntemplates (" << kb->templates().size() << "):\n";
  for (const auto& t : kb->templates()) {
    std::cout << absl::StrFormat("  %-34s %-10s %s\n", t.id, t.family, t.source_file);
  }
  return kExitOk;
}

const bool kRegistered = [] {
  RegisterVerb({"kb", "list the knowledge base's techniques and kernel templates", KbVerb});
  return true;
}();

}  // namespace
}  // namespace argus::cli
