// gpu_worker/candidate.h: the worker's "candidate" task — check, compile,
// run, time.
//
// The payload and result are the one candidate schema (candidate_schema.h).
// Backends:
//   interp — the DSL reference interpreter runs the kernel on the CPU (target
//     interp always runs here). Inputs: the runner's seeded random values for
//     runner check ops, checked against runner_core.h's plain C++ f64
//     references (independent of codegen); for check op "problem" the
//     interpreter's random fill, the options' ProblemReference to prepare
//     and check them. A baseline kernel runs on the same inputs; "time" is
//     the interpreted instruction count (unit "interp_instructions").
//   gpu — codegen compiles it (PTX/cubin or code object), the run spec is
//     written beside it, and `argus-runner --spec` runs as a child under a
//     watchdog (base/subprocess.h). A runner that hangs past the limit is
//     killed (`timeout`); one that dies of a signal without a result is a
//     `crash`; its own outcomes (ok|wrong|fault|timeout|crash|unsupported)
//     pass through with their messages. The vendor baseline (cublas) is
//     timed by the same runner; a baseline kernel by a second runner child.
// Compile errors are `unsupported` with the located diagnostic. A worker
// that requires verification refuses (`rejected`) a candidate the payload
// does not mark verified, or that its own verifier (CandidateOptions::verify)
// does not pass.
//
// Thread safety: RunCandidate is reentrant (its own work directory per call).
#ifndef ARGUS_GPU_WORKER_CANDIDATE_H_
#define ARGUS_GPU_WORKER_CANDIDATE_H_

#include <atomic>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "dsl/interp.h"
#include "gpu_worker/candidate_schema.h"

namespace argus::worker {

// The reference semantics of check op "problem", given by a layer that knows
// the problem catalog (planner/problems.h); the worker itself has none.
struct ProblemReference {
  // Gives inputs the values the problem needs (e.g. expert ids) after the
  // random fill.
  std::function<absl::Status(const nlohmann::json& problem, std::vector<dsl::HostTensor>* tensors,
                             uint64_t seed)>
      prepare;
  // Checks `outputs` (the tensors after the run) against the reference
  // computed from `inputs`: {"passed", "message", "max_abs_error",
  // "counterexample"}.
  std::function<absl::StatusOr<nlohmann::json>(const nlohmann::json& problem,
                                               const std::vector<dsl::HostTensor>& inputs,
                                               const std::vector<dsl::HostTensor>& outputs)>
      check;
};

// Verifies a candidate (the worker's own verifier client); the report JSON
// has "verified" and "findings" (docs/verifier.md). Errors: the verifier could
// not answer.
using CandidateVerifier = std::function<absl::StatusOr<nlohmann::json>(const KernelSpec& kernel,
                                                                       const std::string& target)>;

struct CandidateOptions {
  std::string runner_path;  // argus-runner (or a test stand-in)
  std::string work_dir;     // "" = a fresh directory under $TMPDIR
  std::string default_backend = "interp";
  double watchdog_grace_s = 15;  // beyond the spec's timeout_s
  bool keep_files = false;
  ProblemReference reference;  // empty: check op "problem" is `unsupported`
  // Run only candidates that passed verification: the payload's
  // "verification" must say passed, and `verify` (when set) must agree.
  bool require_verification = false;
  CandidateVerifier verify;
  // Set when several workers share one GPU (DeviceClaim::run_lock_path): the
  // runner runs only while this worker holds the file's exclusive lock, so
  // no two candidates are timed on the GPU at once. The wait is not part of
  // the candidate's watchdog time.
  std::string gpu_run_lock;
  // Set when the server revokes the task (its job was cancelled, its lease
  // lost): a runner still running is killed and the outcome is `cancelled`.
  const std::atomic<bool>* cancel = nullptr;
};

using CandidateRequest = CandidatePayload;

// ParseCandidatePayload (candidate_schema.h).
absl::StatusOr<CandidateRequest> ParseCandidate(const std::string& payload_json);

// Compiles for the GPU and writes `<kernel>.{ptx,cubin}` and `spec.json` into
// `dir`; returns the spec. Errors are located compile diagnostics.
absl::StatusOr<nlohmann::json> PrepareGpuRun(const CandidateRequest& req, const std::string& dir);

// Runs the candidate on its backend; the result JSON (never fails: every
// problem is an outcome). A verifier error is a `verifier_unavailable`
// outcome; HandleCandidate turns it into an error status instead, so that
// the task is retried rather than recorded.
nlohmann::json RunCandidate(const CandidateRequest& req, const CandidateOptions& options);

// Parse + run, for the daemon's handler.
absl::StatusOr<std::string> HandleCandidate(const std::string& payload_json,
                                            const CandidateOptions& options);

}  // namespace argus::worker

#endif  // ARGUS_GPU_WORKER_CANDIDATE_H_
