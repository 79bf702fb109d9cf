// planner/planner.h: the job drivers of tune jobs — the ICRL loop.
//
// For each tune job: state = the problem plus its trajectory so far; the
// policy proposes an action (policy.h); the candidate is instantiated, goes
// through the gate (gate.h; the verifier, verifier_gate.h) and, if it passes, to a worker as a
// "candidate" task of the job (payload in docs/planner.md); the driver waits for the result.
// Outcome reward = the speed-up over the baseline measured in the same run; process reward = gate
// violations removed relative to the parent. Every step (parent, action, source diff, gate report,
// runtime outcome, reward) is committed to SQLite — a candidates row and a trajectory_steps row —
// before the next step starts; the job's progress summary follows each step. The driver finishes
// the job (the store does not): succeeded with the best kernel, or failed with the reason. After a
// restart, ResumeUnfinished() continues unfinished tune jobs from their stored trajectory; a step
// whose candidate task was added but not recorded continues from that task (its payload carries
// the step, "planner_step"), so a result committed before the restart is used, not run again.
// A store error (full disk, I/O error) ends no job: the driver retries the job with backoff
// (100 ms doubling to 2 s) and it resumes the same way once the store takes writes again.
//
// Memory: before the first step the driver retrieves configs from finished
// tune jobs of the same family, dtype, options and target whose shapes are
// near (sum over dims of |log2 ratio| <= 3), best first, and hands them to
// the policy as a warm start.
//
// Thread safety: Start/ResumeUnfinished/Shutdown are thread-safe; each job
// runs on its own thread.
#ifndef ARGUS_PLANNER_PLANNER_H_
#define ARGUS_PLANNER_PLANNER_H_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "argus/v1/jobs.pb.h"
#include "gpu_worker/dial.h"
#include "kb/kb.h"
#include "planner/candidate.h"
#include "planner/gate.h"
#include "planner/llm_endpoints.h"
#include "planner/llm_policy.h"
#include "planner/policy.h"
#include "store/store.h"

namespace argus::planner {

struct PlannerOptions {
  std::string kb_dir;  // empty: kb::DefaultKbDir()
  int default_max_candidates = 16;
  int max_candidates_limit = 1000;
  int64_t task_timeout_ms = 10 * 60'000;
  bool use_memory = true;
  // Jobs with policy "llm": timeouts and retries (llm), and the operator's
  // endpoints (planner/llm_endpoints.h), one of which a job may name.
  LlmOptions llm;
  std::vector<LlmEndpoint> llm_endpoints;
  // The gate: "" = the argus_verifier library in-process (VerifierGate);
  // host:port = the argus-verifier service (RemoteVerifierGate; jobs wait
  // while it is down). SetGate replaces either.
  std::string verifier_address;
  worker::DialOptions verifier_dial;  // its token and TLS (argus-server --verifier_*)
};

class Planner {
 public:
  Planner(store::JobStore* store, PlannerOptions options);
  ~Planner();

  absl::Status Init();  // loads the KB
  // Checks a tune job's spec at submit time (problem, target, policy).
  absl::Status Validate(const v1::JobSpec& spec) const;
  // Runs the job on a new thread.
  void Start(const std::string& job_id);
  absl::Status ResumeUnfinished();
  void Shutdown();
  // Runs the job to its end on the calling thread.
  absl::Status RunJob(const std::string& job_id);
  void SetGate(std::unique_ptr<CandidateGate> gate) { gate_ = std::move(gate); }

  // Configs of similar finished jobs, best first (memory across jobs).
  std::vector<Config> Retrieve(const Problem& p, const std::string& target,
                               const std::string& exclude_job, size_t max) const;

 private:
  // A step from its proposal to its record: gated, and sent to a worker as
  // task_id (empty when the gate rejected it).
  struct InFlight {
    Step step;
    Proposal proposal;
    Instance instance;
    nlohmann::json verification;  // GateReport::ToJson
    std::string task_id;
  };
  static constexpr std::chrono::milliseconds kMaxRetryBackoff{2000};

  absl::StatusOr<std::string> ResolveTarget(const std::string& target) const;
  // RunJob, run again with backoff while it fails for a store error.
  void Drive(const std::string& job_id);
  // The step an earlier run of the job sent to a worker and did not record.
  absl::StatusOr<std::optional<InFlight>> FindInFlight(const std::string& job_id,
                                                       const std::vector<Step>& trajectory,
                                                       const Problem& p) const;
  // The step as its candidate task's payload carries it ("planner_step").
  static nlohmann::json InFlightJson(const InFlight& f);
  // The task's outcome; nullopt when the planner is shutting down.
  absl::StatusOr<std::optional<nlohmann::json>> AwaitTask(const std::string& task_id);

  store::JobStore* store_;
  PlannerOptions options_;
  kb::Kb kb_;
  bool ready_ = false;
  std::unique_ptr<CandidateGate> gate_;
  std::atomic<bool> stopping_{false};
  std::mutex mu_;
  std::condition_variable stop_cv_;  // signalled (under mu_) when stopping_ is set
  std::map<std::string, std::thread> threads_;
};

}  // namespace argus::planner

#endif  // ARGUS_PLANNER_PLANNER_H_
