#include "planner/gate.h"

#include <memory>

#include "absl/strings/str_cat.h"
#include "dsl/check.h"

namespace argus::planner {

nlohmann::json GateReport::ToJson() const {
  nlohmann::json j = {{"passed", passed}, {"gate", gate}, {"violations", violations}};
  if (report.is_object()) {
    for (const char* k : {"obligations", "proved", "seconds", "cached"})
      if (report.contains(k)) j[k] = report[k];
  }
  if (waited_ms > 0) j["waited_ms"] = waited_ms;
  return j;
}

GateReport CheckerGate::Check(const Instance& c, const std::string& target) {
  GateReport r;
  r.gate = "dsl-check";
  r.violations = nlohmann::json::array();
  dsl::CheckOptions opts;
  for (const auto& [k, v] : c.constants) opts.consts[k] = std::to_string(v);
  if (target == "sm_90a" || target == "gfx942") opts.arch = target;
  auto src = std::make_shared<const dsl::SourceFile>(absl::StrCat(c.kernel, ".py"), c.source);
  auto mod = dsl::Compile(src, opts);
  if (!mod.ok()) {
    r.violations.push_back({{"kind", "check"}, {"message", std::string(mod.status().message())}});
  } else if (const auto* fn = mod->Find(c.kernel); !fn || !fn->is_kernel) {
    r.violations.push_back({{"kind", "check"}, {"message", "no kernel named " + c.kernel}});
  }
  r.passed = r.violations.empty();
  return r;
}

}  // namespace argus::planner
