// planner/policy.h: what the next candidate should be.
//
// A policy sees the job's trajectory (every step so far: config, action,
// outcome, ratio, violations) and proposes the next action: a retrieved
// config from memory, a new kernel (a template at its defaults), a knob
// change under a technique, or a repair after a failure. BuiltinPolicy is the
// model-free default:
//   - warm start: configs retrieved from similar past jobs, best first;
//   - new kernels: every template that fits the problem, at its defaults;
//   - a UCB1 bandit over the KB techniques whose knobs the templates have;
//     the reward of a pull is the child's ratio over its parent's;
//   - successive halving over knob configs: a pull moves one knob of the
//     technique one step, starting from the top half (by ratio) of the
//     configs measured so far, so each round narrows the parents;
//   - counterexample-driven repair: a failed knob change's message is
//     matched against its technique's counterexample signals (kb/), and the
//     repair it names (shrink, grow, revert) picks the next config.
// It stops (nullopt) when no untried move is left.
//
// Thread safety: a policy belongs to one job driver.
#ifndef ARGUS_PLANNER_POLICY_H_
#define ARGUS_PLANNER_POLICY_H_

#include <optional>
#include <string>
#include <vector>

#include "kb/kb.h"
#include "planner/candidate.h"
#include "planner/problems.h"

namespace argus::planner {

struct Step {
  int step = 0;
  std::string candidate_id, parent_id;
  Config config;
  std::string action, technique, why;
  std::string outcome;  // ok, rejected, wrong, compile_error, runtime_error, worker_lost, ...
  std::string message;
  double ratio = 0;
  int violations = 0;
};

struct Proposal {
  Config config;
  std::string action;  // retrieved, new_kernel, knob, repair
  std::string technique;
  std::string parent_id;
  std::string why;
  // A kernel written from scratch (LLM policy): its source and kernel name
  // replace the template's; launch dims and shape constants still come from
  // config.template_id.
  std::string source, kernel;
};

class Policy {
 public:
  virtual ~Policy() = default;
  virtual std::optional<Proposal> Next(const std::vector<Step>& trajectory) = 0;
};

class BuiltinPolicy : public Policy {
 public:
  // `templates`: those that fit the problem and target; `warm`: retrieved configs, best first.
  BuiltinPolicy(const kb::Kb* kb, Problem problem, std::vector<const kb::Template*> templates,
                std::vector<Config> warm);
  std::optional<Proposal> Next(const std::vector<Step>& trajectory) override;

 private:
  bool Valid(const Config& c) const;
  std::optional<Proposal> Repair(const std::vector<Step>& t, const std::set<std::string>& tried);
  std::optional<Proposal> Pull(const std::string& technique, const std::vector<Step>& t,
                               const std::set<std::string>& tried);

  const kb::Kb* kb_;
  Problem problem_;
  std::vector<const kb::Template*> templates_;
  std::vector<Config> warm_;
};

}  // namespace argus::planner

#endif  // ARGUS_PLANNER_POLICY_H_
