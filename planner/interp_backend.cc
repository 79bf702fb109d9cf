#include "planner/interp_backend.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "base/status.h"
#include "nlohmann/json.hpp"
#include "planner/problems.h"

namespace argus::planner {
namespace {

using nlohmann::json;

// The outputs of `p` in `outputs` against its reference from `inputs`.
absl::StatusOr<json> CheckAgainstReference(const json& problem,
                                           const std::vector<dsl::HostTensor>& inputs,
                                           const std::vector<dsl::HostTensor>& outputs) {
  ASSIGN_OR_RETURN(Problem p, FromJson(problem));
  ASSIGN_OR_RETURN(std::vector<dsl::HostTensor> want, Reference(p, inputs));
  Tolerance tol = ToleranceFor(p);
  double max_err = 0;
  for (const auto& w : want) {
    const dsl::HostTensor* got = nullptr;
    for (const auto& t : outputs) {
      if (t.name == w.name) got = &t;
    }
    if (!got || got->shape != w.shape) {
      return json{{"passed", false},
                  {"message", absl::StrCat("output ", w.name, " missing or of the wrong shape")}};
    }
    // Walk logical coordinates (the kernel's tensor may be strided).
    std::vector<int64_t> idx(w.shape.size(), 0);
    int64_t count = 1;
    for (int64_t d : w.shape) count *= d;
    for (int64_t n = 0; n < count; ++n) {
      int64_t rem = n, wo = 0, go = 0;
      for (int d = static_cast<int>(w.shape.size()) - 1; d >= 0; --d) {
        idx[d] = rem % w.shape[d];
        rem /= w.shape[d];
        wo += idx[d] * w.stride[d];
        go += idx[d] * got->stride[d];
      }
      double g = got->data[go], e = w.data[wo];
      double err = std::fabs(g - e);
      if (!(err <= tol.atol + tol.rtol * std::fabs(e))) {  // NaN fails too
        return json{
            {"passed", false},
            {"message", absl::StrCat(w.name, " mismatch: got ", g, " want ", e)},
            {"counterexample", {{"tensor", w.name}, {"index", idx}, {"got", g}, {"want", e}}}};
      }
      max_err = std::max(max_err, err);
    }
  }
  return json{
      {"passed", true}, {"message", "output matches the reference"}, {"max_abs_error", max_err}};
}

}  // namespace

worker::ProblemReference CatalogReference() {
  worker::ProblemReference r;
  r.prepare = [](const json& problem, std::vector<dsl::HostTensor>* tensors,
                 uint64_t seed) -> absl::Status {
    ASSIGN_OR_RETURN(Problem p, FromJson(problem));
    return PrepareInputs(p, tensors, seed);
  };
  r.check = CheckAgainstReference;
  return r;
}

worker::CandidateOptions InterpCandidateOptions() {
  worker::CandidateOptions o;
  o.default_backend = "interp";
  o.reference = CatalogReference();
  return o;
}

absl::StatusOr<std::string> RunCandidateInInterpreter(const std::string& payload_json) {
  return worker::HandleCandidate(payload_json, InterpCandidateOptions());
}

worker::TaskHandler InterpCandidateHandler() {
  return [](const v1::LeasedTask& task, const std::atomic<bool>&) {
    return RunCandidateInInterpreter(task.payload_json());
  };
}

}  // namespace argus::planner
