// planner/gate.h: the verifier step every candidate passes before a worker
// sees it.
//
// A CandidateGate checks an instantiated candidate and returns a report:
// passed, and the violations (kind, message, location — counterexamples when
// the gate proves invariants) as JSON. CheckerGate, the default, runs the DSL
// front end (parse + semantic check for the target); the Z3 verifier
// (verifier_gate.h) runs behind the same interface and is what the server
// and the embedded default use.
//
// Thread safety: implementations must be thread-safe (one per planner, many jobs).
#ifndef ARGUS_PLANNER_GATE_H_
#define ARGUS_PLANNER_GATE_H_

#include <string>

#include "nlohmann/json.hpp"
#include "planner/candidate.h"

namespace argus::planner {

struct GateReport {
  bool passed = false;
  std::string gate;           // which gate produced it
  nlohmann::json violations;  // [{kind, message, line, col, counterexample}]
  nlohmann::json report;      // the verifier's whole report (null for the checker)
  bool unavailable = false;   // the gate could not answer (a verifier service stopped)
  int64_t waited_ms = 0;      // time spent waiting for an unreachable verifier
  // {passed, gate, violations, obligations, proved, seconds, waited_ms}: what
  // a trajectory step and a candidate payload's "verification" hold.
  nlohmann::json ToJson() const;
};

class CandidateGate {
 public:
  virtual ~CandidateGate() = default;
  virtual GateReport Check(const Instance& candidate, const std::string& target) = 0;
  // Ends any wait inside Check (planner shutdown).
  virtual void Stop() {}
};

class CheckerGate : public CandidateGate {
 public:
  GateReport Check(const Instance& candidate, const std::string& target) override;
};

}  // namespace argus::planner

#endif  // ARGUS_PLANNER_GATE_H_
