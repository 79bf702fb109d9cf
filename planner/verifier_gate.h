// planner/verifier_gate.h: the verifier as the planner's gate.
//
// VerifierGate runs the argus_verifier library in-process (the embedded
// default and a server without --verifier); RemoteVerifierGate asks the
// argus-verifier service (a server started with --verifier ADDR). Both first
// run the DSL checker for the target (CheckerGate: parse, types, what the
// target lacks), then verify the kernel with the candidate's constants and
// its concrete dims. A candidate passes only when every obligation is proved
// (docs/verifier.md: an unknown is never a pass). Violations carry the
// verifier's counterexamples, located, into the trajectory and the repair
// policy: {kind (the check), message ("line:col: [check] ... expected E,
// found A (thread T, iteration k=2)"), line, col, counterexample}.
//
// While the service is down RemoteVerifierGate waits for it (the job waits;
// no candidate fails for it); Stop() ends the wait with an `unavailable`
// report, which the planner does not record (the step is redone on resume).
//
// Thread safety: both gates are thread-safe (one per planner, many jobs).
#ifndef ARGUS_PLANNER_VERIFIER_GATE_H_
#define ARGUS_PLANNER_VERIFIER_GATE_H_

#include <memory>
#include <string>

#include "gpu_worker/verifier_client.h"
#include "nlohmann/json.hpp"
#include "planner/gate.h"

namespace argus::planner {

struct VerifierGateOptions {
  // Per obligation, a wall-clock last resort: the verifier's deterministic
  // resource limit decides "unknown", so a candidate's verdict does not
  // depend on how loaded the machine is.
  unsigned solver_timeout_ms = 60'000;
  int64_t deadline_ms = 120'000;  // per candidate
};

class VerifierGate : public CandidateGate {
 public:
  explicit VerifierGate(VerifierGateOptions options = {}) : options_(options) {}
  GateReport Check(const Instance& candidate, const std::string& target) override;

 private:
  VerifierGateOptions options_;
  CheckerGate checker_;
};

class RemoteVerifierGate : public CandidateGate {
 public:
  explicit RemoteVerifierGate(worker::VerifierClientOptions options);
  GateReport Check(const Instance& candidate, const std::string& target) override;
  void Stop() override { client_.Stop(); }
  const worker::VerifierClient& client() const { return client_; }

 private:
  worker::VerifierClient client_;
  CheckerGate checker_;
};

// The gate's report from a verifier report JSON (docs/verifier.md).
GateReport GateReportFromVerifier(const nlohmann::json& report, const std::string& gate);

}  // namespace argus::planner

#endif  // ARGUS_PLANNER_VERIFIER_GATE_H_
