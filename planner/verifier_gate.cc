#include "planner/verifier_gate.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "verifier/report.h"
#include "verifier/verify.h"

namespace argus::planner {

using nlohmann::json;

namespace {

// "expected A(0,64), found A(0,32) (thread 0, element 0, iteration k=2,
// written at line 32 in iteration k=1)" — the words the KB's counterexample
// signals match.
std::string CexText(const json& c) {
  std::vector<std::string> where;
  if (c.value("thread", -1) >= 0) where.push_back(absl::StrCat("thread ", c.value("thread", -1)));
  if (c.value("element", -1) >= 0)
    where.push_back(absl::StrCat("element ", c.value("element", -1)));
  if (c.contains("iterations") && c["iterations"].is_object()) {
    for (auto& [k, v] : c["iterations"].items())
      where.push_back(absl::StrCat("iteration ", k, "=", v.dump()));
  }
  if (c.contains("written_at") && c["written_at"].value("line", 0) > 0) {
    where.push_back(absl::StrCat("written at line ", c["written_at"].value("line", 0),
                                 c.value("written_iteration", "").empty()
                                     ? ""
                                     : " in iteration " + c.value("written_iteration", "")));
  }
  if (!c.value("other", "").empty()) where.push_back(c.value("other", ""));
  std::string s;
  if (!c.value("expected", "").empty() || !c.value("actual", "").empty())
    s = absl::StrCat("expected ", c.value("expected", ""), ", found ", c.value("actual", ""), " ");
  return absl::StrCat(s, "(", absl::StrJoin(where, ", "), ")");
}

}  // namespace

GateReport GateReportFromVerifier(const json& report, const std::string& gate) {
  GateReport r;
  r.gate = gate;
  r.violations = json::array();
  r.report = report;
  for (const json& f : report.value("findings", json::array())) {
    std::string sev = f.value("severity", "");
    if (sev == "note") continue;
    json v = {{"kind", f.value("check", sev)},
              {"severity", sev},
              {"line", f.value("line", 0)},
              {"col", f.value("col", 0)}};
    std::string msg = absl::StrCat(f.value("line", 0), ":", f.value("col", 0), ": ", sev, " [",
                                   f.value("check", ""), "] ", f.value("message", ""));
    if (f.contains("counterexample") && f["counterexample"].is_object()) {
      v["counterexample"] = f["counterexample"];
      absl::StrAppend(&msg, "; ", CexText(f["counterexample"]));
    }
    if (!f.value("source", "").empty()) v["source"] = f.value("source", "");
    v["message"] = msg;
    r.violations.push_back(v);
  }
  r.passed = report.value("verified", false) && r.violations.empty();
  if (!r.passed && r.violations.empty())
    r.violations.push_back(
        {{"kind", "unverified"}, {"message", "not every obligation was proved"}});
  return r;
}

GateReport VerifierGate::Check(const Instance& c, const std::string& target) {
  GateReport checked = checker_.Check(c, target);
  if (!checked.passed) return checked;
  dsl::CheckOptions co;
  for (const auto& [k, v] : c.constants) co.consts[k] = std::to_string(v);
  if (target == "sm_90a" || target == "gfx942") co.arch = target;
  verifier::VerifyOptions vo;
  vo.dims = c.dims;
  vo.solver_timeout_ms = options_.solver_timeout_ms;
  vo.deadline_ms = options_.deadline_ms;
  // As the remote gate (VerifierClient::Verify): just the candidate's kernel,
  // unless it is a pipeline of several.
  if (c.pipeline.empty()) vo.kernel = c.kernel;
  auto report = verifier::VerifySource(absl::StrCat(c.kernel, ".py"), c.source, co, vo);
  if (!report.ok()) {
    GateReport r;
    r.gate = "verifier";
    r.violations =
        json::array({{{"kind", "input"}, {"message", std::string(report.status().message())}}});
    return r;
  }
  json j = json::parse(verifier::ToJson(*report), nullptr, false);
  if (j.is_discarded()) j = {{"verified", false}};
  return GateReportFromVerifier(j, "verifier");
}

RemoteVerifierGate::RemoteVerifierGate(worker::VerifierClientOptions options)
    : client_(std::move(options)) {}

GateReport RemoteVerifierGate::Check(const Instance& c, const std::string& target) {
  GateReport checked = checker_.Check(c, target);
  if (!checked.passed) return checked;
  int64_t waited = 0;
  auto report = client_.Verify(KernelOf(c), &waited);
  GateReport r;
  if (!report.ok()) {
    r.gate = "verifier@" + client_.address();
    r.unavailable = report.status().code() == absl::StatusCode::kUnavailable;
    r.violations = json::array({{{"kind", r.unavailable ? "unavailable" : "verifier_error"},
                                 {"message", std::string(report.status().message())}}});
  } else {
    r = GateReportFromVerifier(*report, "verifier@" + client_.address());
  }
  r.waited_ms = waited;
  return r;
}

}  // namespace argus::planner
