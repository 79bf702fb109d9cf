// gpu_worker/candidate_schema.h: the one schema of a "candidate" task — the
// payload a client (the planner, argus-candidate, a test) sends and the result
// a worker returns. Both sides parse and build it here, so a payload the
// planner writes is one every worker backend (interp, gpu) accepts.
//
// Payload (JSON object; docs/planner.md shows a full one):
//   "source", "kernel"          the DSL text and the kernel to run
//   "constants" {"BM": 64}      DSL const overrides (numbers or strings)
//   "dims" {"M": 64, ...}       symbolic tensor dims; "scalars" {"eps": 1e-6}
//   "pipeline" ["route", ...]   optional: kernels of the source launched in this
//                               order on the GPU (one multi-launch runner spec over one
//                               set of tensors, "kernel" unused); tensors the check
//                               does not name are scratch between them; "shapes"
//                               {"Wg": [E, D, F]} gives a tensor the problem's shape
//                               where the kernels see it reshaped (e.g. [E*D, F])
//   "target"                    sm_90a | gfx942 | interp (interp: the interpreter
//                               on any worker; its tasks need arch "interp")
//   "backend"                   "" (the worker's default) | interp | gpu
//   "check"                     what the output is checked against:
//       {"op": gemm|add|softmax|rmsnorm|attention|none, "a", "b", "c", "d", "b_layout",
//        "causal", "eps", ...}  the runner's C++ f64 references (runner_core.h), or
//       {"op": "problem", "c": "C"}  the problem's own reference semantics — only a
//        worker given a CandidateOptions::reference (the planner's in-process
//        interpreter worker) has it; others answer `unsupported`
//   "problem"                   {"family", "shape", "dtype", "options"} (planner/problems.h)
//   "baseline"                  {"name": "cublas" | "hipblaslt" | "torch_sdpa" |
//                                "torch_moe_loop" | "torch" | "none"} —
//                               a vendor library timed by the runner in the same
//                               process (hipblaslt: not in the runner yet) — or
//                               {"name": "kernel", "source", "kernel", "constants", "dims"}
//                               a DSL kernel timed on the same worker and inputs
//   "flops", "bytes", "timing" {"warmup", "reps", "flush_l2"}, "seed" (0: fresh),
//   "timeout_s"
//   "verification"              the gate's verdict: {"passed", "gate", "obligations",
//                               "proved", "violations"}; absent = not verified. A worker
//                               that requires verification refuses a candidate without
//                               "passed": true (outcome `rejected`).
//
// Result (JSON object): "outcome" (ok | wrong | unsupported | fault | timeout | crash |
// baseline_error | rejected), "message", and once measured "time" and
// "baseline_time" (the raw medians: "unit" "ms" on a GPU, "interp_instructions"
// on the interpreter) and "speedup" = baseline_time / time (> 1: faster than
// the baseline) — the one ratio convention of planner, store, dashboard and
// CLI. Detail keys: "baseline_name", "backend", "target", "kernel", "seed",
// "check", "counterexample", "max_abs_error", "tflops", "gbps", "runner" (the
// runner's own JSON, untouched), "metadata", "interp", "verifier".
//
// Thread safety: plain values and pure functions.
#ifndef ARGUS_GPU_WORKER_CANDIDATE_SCHEMA_H_
#define ARGUS_GPU_WORKER_CANDIDATE_SCHEMA_H_

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace argus::worker {

struct KernelSpec {
  std::string source, kernel;
  std::map<std::string, std::string> constants;  // as the DSL front end takes them
  std::map<std::string, int64_t> dims;
  std::map<std::string, double> scalars;
  std::vector<std::string> pipeline;                   // empty: one kernel
  std::map<std::string, std::vector<int64_t>> shapes;  // pipeline tensors' own shapes
};

struct BaselineSpec {
  std::string name = "none";  // cublas | hipblaslt | torch_sdpa | torch_moe_loop | kernel | none
  KernelSpec kernel;          // when name == "kernel"
};

struct CandidatePayload {
  KernelSpec candidate;
  std::string target = "interp";
  std::string backend;  // "": the worker's default
  nlohmann::json check = {{"op", "none"}};
  nlohmann::json problem;  // null when the client sent none
  BaselineSpec baseline;
  double flops = 0, bytes = 0;
  nlohmann::json timing = nlohmann::json::object();
  uint64_t seed = 0;  // 0: fresh random
  double timeout_s = 20;
  nlohmann::json verification;  // null: not verified

  bool VerificationPassed() const;
  nlohmann::json ToJson() const;
};

// Parses and validates a payload; errors name the offending key.
absl::StatusOr<CandidatePayload> ParseCandidatePayload(const std::string& payload_json);

// A library the runner times as the baseline (cublas, hipblaslt, torch_sdpa,
// torch_moe_loop, torch: PyTorch eager and torch.compile for the memory-bound
// checks).
bool IsVendorBaseline(const std::string& name);

// The reference ops of runner_core.h ("problem" is not one of them).
bool IsRunnerCheckOp(const std::string& op);

// {"outcome": outcome, "message": message}.
nlohmann::json CandidateOutcome(const std::string& outcome, const std::string& message);
// Sets "time", "baseline_time", "unit" and "speedup" (= baseline_time / time).
void SetCandidateTimes(nlohmann::json* result, double time, double baseline_time,
                       const std::string& unit);
// A result's speed-up over its baseline; 0 when it was not measured (or the
// outcome is not ok).
double CandidateSpeedup(const nlohmann::json& result);

}  // namespace argus::worker

#endif  // ARGUS_GPU_WORKER_CANDIDATE_SCHEMA_H_
