// planner/gate.h: the verifier step every candidate passes before a worker
// sees it.
//
// A CandidateGate checks an instantiated candidate and returns a report:
// passed, and the violations (kind, message, location — counterexamples when
// the gate proves invariants) as JSON. CheckerGate, the default, runs the DSL
// front end (parse + semantic check for the target); the Z3 verifier
// (verifier/) plugs in behind the same interface.
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
  nlohmann::json violations;  // [{kind, message}]
  nlohmann::json ToJson() const;
};

class CandidateGate {
 public:
  virtual ~CandidateGate() = default;
  virtual GateReport Check(const Instance& candidate, const std::string& target) = 0;
};

class CheckerGate : public CandidateGate {
 public:
  GateReport Check(const Instance& candidate, const std::string& target) override;
};

}  // namespace argus::planner

#endif  // ARGUS_PLANNER_GATE_H_
