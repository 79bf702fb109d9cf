// `argus problems` and `argus templates`: what a user can ask Argus to tune
// (the problem catalog: families, the order of --shape, dtypes, options) and
// which kernel templates of the knowledge base serve each family.
#include <iostream>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "clients/cli/commands.h"
#include "clients/cli/exit_codes.h"
#include "clients/cli/verb_flags.h"
#include "kb/kb.h"
#include "nlohmann/json.hpp"
#include "planner/problems.h"

namespace argus::cli {
namespace {

using nlohmann::json;

std::string ShapeForm(const planner::Family& f) {
  std::string out = absl::StrJoin(f.dims, "x");
  if (!f.optional.empty()) absl::StrAppend(&out, " (+", absl::StrJoin(f.optional, ","), "=)");
  return out;
}

int Problems(const std::string& verb, const std::vector<std::string>& args) {
  VerbFlags g;
  FlagSet flags("argus " + verb,
                "[--json]\n\nLists the problem catalog: each family, the order of its --shape "
                "dims,\nits dtypes and options (the first value is the default).\n\n"
                "example: argus tune attention --shape 1x32x2048x128 --option causal=1");
  g.Declare(flags);
  std::vector<std::string> pos;
  if (int rc = ParseVerbFlags(verb, flags, args, g, &pos); rc >= 0) return rc;
  if (!pos.empty()) return VerbFail(verb, absl::InvalidArgumentError("takes no argument"));
  json out = json::array();
  for (const auto& f : planner::Families()) {
    out.push_back({{"family", f.name},
                   {"summary", f.summary},
                   {"dims", f.dims},
                   {"optional_dims", f.optional},
                   {"dtypes", f.dtypes},
                   {"options", f.options},
                   {"outputs", f.outputs},
                   {"interp_shape", f.interp_shape}});
    if (g.json) continue;
    std::cout << absl::StrFormat("%-13s --shape %-22s dtypes %s\n", f.name, ShapeForm(f),
                                 absl::StrJoin(f.dtypes, ","));
    std::cout << "              " << f.summary << "\n";
    for (const auto& [name, values] : f.options) {
      std::cout << absl::StrFormat("              --option %s=%s\n", name,
                                   absl::StrJoin(values, "|"));
    }
  }
  if (g.json) std::cout << out.dump(2) << "\n";
  return kExitOk;
}

int Templates(const std::string& verb, const std::vector<std::string>& args) {
  VerbFlags g;
  FlagSet flags("argus " + verb,
                "[FAMILY] [--json]\n\nLists the kernel templates of the knowledge base "
                "(all, or one family's):\nthe dtypes and targets each serves, what it "
                "requires of a problem, its knobs.\n\nexample: argus templates gemm");
  g.Declare(flags);
  std::vector<std::string> pos;
  if (int rc = ParseVerbFlags(verb, flags, args, g, &pos); rc >= 0) return rc;
  if (pos.size() > 1) return VerbFail(verb, absl::InvalidArgumentError("name at most one family"));
  if (!pos.empty() && !planner::FindFamily(pos[0])) {
    return VerbFail(verb, planner::ParseShape(pos[0], "").status());
  }
  auto kb = kb::Kb::Load(kb::DefaultKbDir());
  if (!kb.ok()) return VerbFail(verb, kb.status());
  json out = json::array();
  for (const auto& t : kb->templates()) {
    if (!pos.empty() && t.family != pos[0]) continue;
    json knobs = json::object();
    for (const auto& k : t.knobs)
      knobs[k.name] = {{"values", k.values}, {"default", k.default_value}};
    out.push_back({{"id", t.id},
                   {"family", t.family},
                   {"summary", t.summary},
                   {"dtypes", t.dtypes},
                   {"targets", t.targets},
                   {"requires", t.requirements},
                   {"knobs", knobs},
                   {"baseline", t.baseline}});
    if (g.json) continue;
    std::cout << absl::StrFormat("%-34s %-12s dtypes %-14s targets %s\n", t.id, t.family,
                                 absl::StrJoin(t.dtypes, ","), absl::StrJoin(t.targets, ","));
    std::cout << "    " << t.summary << "\n";
    if (!t.requirements.empty())
      std::cout << "    requires " << absl::StrJoin(t.requirements, "; ") << "\n";
    std::vector<std::string> ks;
    for (const auto& k : t.knobs) {
      ks.push_back(
          absl::StrCat(k.name, "=", absl::StrJoin(k.values, "|"), " (", k.default_value, ")"));
    }
    if (!ks.empty()) std::cout << "    knobs " << absl::StrJoin(ks, ", ") << "\n";
  }
  if (g.json) std::cout << out.dump(2) << "\n";
  return kExitOk;
}

const bool kRegistered = [] {
  RegisterVerb(
      {"problems", "list the problem catalog: families, --shape order, dtypes, options", Problems});
  RegisterVerb(
      {"templates", "list the KB's kernel templates and the problems they serve", Templates});
  return true;
}();

}  // namespace
}  // namespace argus::cli
