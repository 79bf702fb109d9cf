// planner/candidate.h: a candidate kernel — a KB template, its knob values,
// and what they become for one problem.
//
// A Config names a template and its knobs; Instantiate() checks the
// template's requirements against the problem and fills its placeholders,
// giving the source, kernel, constants and launch dims a worker runs.
// Payload() is the JSON of a "candidate" task in the one candidate schema
// (gpu_worker/candidate_schema.h, docs/planner.md) that every worker backend
// accepts.
//
// Thread safety: pure functions.
#ifndef ARGUS_PLANNER_CANDIDATE_H_
#define ARGUS_PLANNER_CANDIDATE_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "gpu_worker/candidate_schema.h"
#include "kb/kb.h"
#include "nlohmann/json.hpp"
#include "planner/problems.h"

namespace argus::planner {

struct Config {
  std::string template_id;
  std::map<std::string, int64_t> knobs;
  std::string Key() const;  // "gemm_smem BM=32 BN=64 BK=32"
  nlohmann::json ToJson() const;
  static absl::StatusOr<Config> FromJson(const nlohmann::json& j);
  bool operator==(const Config& o) const = default;
};

// The template's knob defaults.
Config DefaultConfig(const kb::Template& t);
// The defaults for problem `p`: those of the first of the template's presets
// whose `when` holds for `p` and whose values fit it, else the plain ones.
Config DefaultConfig(const kb::Template& t, const Problem& p);

struct Instance {
  std::string source, kernel;
  std::map<std::string, int64_t> constants;
  std::map<std::string, int64_t> dims;
  std::vector<std::string> pipeline;                   // a template's launches, if several
  std::map<std::string, std::vector<int64_t>> shapes;  // their tensors' problem shapes
};

// FailedPrecondition naming the requirement when the config does not fit the problem.
absl::StatusOr<Instance> Instantiate(const kb::Template& t, const Config& c, const Problem& p);

// The kernel of an instance as the verifier and a worker take it.
worker::KernelSpec KernelOf(const Instance& instance);

// `baseline` is the family's KB baseline template, sent where the target
// has no vendor library for the problem (BaselineName); `verification` is
// the gate's report (GateReport::ToJson), null when none ran.
worker::CandidatePayload MakePayload(const Instance& candidate, const Instance& baseline,
                                     const Problem& p, const std::string& target,
                                     const nlohmann::json& verification = nullptr);
nlohmann::json Payload(const Instance& candidate, const Instance& baseline, const Problem& p,
                       const std::string& target, const nlohmann::json& verification = nullptr);

// The kernel of a job result's "best" (docs/api.md, "Job results"): source,
// constants, dims and, for a pipeline of launches, "pipeline", "shapes" and
// the runner "check" (the tensors it names are the problem's, the others
// scratch) — what `argus export` needs to compile every launch again.
nlohmann::json BestKernelJson(const Instance& instance, const Problem& p);

// A line diff of two sources ("-old" / "+new" lines with line numbers) plus
// the constants that changed.
std::string Diff(const Instance* parent, const Instance& child);

}  // namespace argus::planner

#endif  // ARGUS_PLANNER_CANDIDATE_H_
