// gpu_worker/candidate.h: the worker's "candidate" task — compile, check, time.
//
// A candidate payload (JSON) names a DSL kernel and how to run it:
//   {"source": "<DSL text>", "kernel": "gemm_mma", "consts": {"BM": "128"},
//    "dims": {"M": 512, "N": 512, "K": 512}, "scalars": {"eps": 1e-6},
//    "target": "sm_90a" | "gfx942", "backend": "interp" | "gpu" (default: the
//    worker's), "check": {"op": "gemm", "a": "A", "b": "B", "c": "C",
//    "b_layout": "kn", ...}   (runner_core.h; m/n/k are derived from the
//    output's shape when absent), "baseline": "cublas" | "none",
//    "timing": {"warmup": 10, "reps": 50}, "seed": S (default: fresh random),
//    "timeout_s": 20}
// Backends:
//   interp — the DSL reference interpreter runs the kernel on the CPU with the
//     runner's seeded random inputs; the output is checked against the plain
//     C++ f64 reference of runner_core.h (independent of codegen).
//   gpu — codegen compiles it (PTX/cubin or code object), the run spec is
//     written beside it, and `argus-runner --spec` runs as a child under a
//     watchdog (base/subprocess.h). A runner that hangs past the limit is
//     killed (`timeout`); one that dies of a signal without a result is a
//     `crash`; its own outcomes (ok|wrong|fault|timeout|crash|unsupported)
//     pass through with their messages.
// The result JSON always has "outcome" and "message"; compile errors are
// `unsupported` with the located diagnostic.
//
// Thread safety: RunCandidate is reentrant (its own work directory per call).
#ifndef ARGUS_GPU_WORKER_CANDIDATE_H_
#define ARGUS_GPU_WORKER_CANDIDATE_H_

#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "absl/status/statusor.h"

namespace argus::worker {

struct CandidateOptions {
  std::string runner_path;  // argus-runner (or a test stand-in)
  std::string work_dir;     // "" = a fresh directory under $TMPDIR
  std::string default_backend = "interp";
  double watchdog_grace_s = 15;  // beyond the spec's timeout_s
  bool keep_files = false;
};

struct CandidateRequest {
  std::string source, kernel, target = "sm_90a", backend;
  std::map<std::string, std::string> consts;
  std::map<std::string, int64_t> dims;
  std::map<std::string, double> scalars;
  nlohmann::json check = nlohmann::json::object();
  std::string baseline = "none";
  nlohmann::json timing = nlohmann::json::object();
  uint64_t seed = 0;  // 0 = fresh random
  double timeout_s = 20;
};

absl::StatusOr<CandidateRequest> ParseCandidate(const std::string& payload_json);

// Compiles for the GPU and writes `<kernel>.{ptx,cubin}` and `spec.json` into
// `dir`; returns the spec. Errors are located compile diagnostics.
absl::StatusOr<nlohmann::json> PrepareGpuRun(const CandidateRequest& req, const std::string& dir);

// Runs the candidate on its backend; the result JSON (never fails: every
// problem is an outcome).
nlohmann::json RunCandidate(const CandidateRequest& req, const CandidateOptions& options);

// Parse + run, for the daemon's handler.
absl::StatusOr<std::string> HandleCandidate(const std::string& payload_json,
                                            const CandidateOptions& options);

}  // namespace argus::worker

#endif  // ARGUS_GPU_WORKER_CANDIDATE_H_
