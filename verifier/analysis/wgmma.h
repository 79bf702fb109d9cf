// verifier/analysis/wgmma.h: wgmma groups — which group last wrote each
// accumulator (committed linearly in the iterations), which groups a
// wgmma_wait made complete, and the checks they bring:
// - wgmma_read_before_wait: an accumulator is read (stored, copied, used by
//   fragment math) only after a wgmma_wait covers its last wgmma's group;
// - wgmma_operand_overwrite: a register A operand (to_operand) is rewritten
//   only after a wgmma_wait covers the last wgmma that reads it;
// - warpgroup_divergence: wgmma, its commit and wait, setmaxnreg and the
//   warp-group and named barriers are reached by whole warp groups (wgmma
//   and accumulator stores only by the accumulator's warp groups).
//
// Thread safety: as the walker's (one thread, one kernel).
#ifndef ARGUS_VERIFIER_ANALYSIS_WGMMA_H_
#define ARGUS_VERIFIER_ANALYSIS_WGMMA_H_

#include <map>
#include <optional>
#include <set>
#include <vector>

#include "verifier/analysis/analysis_base.h"

namespace argus::verifier::engine {

class Wgmma : public AnalysisBase {
 public:
  // A wgmma_wait: where it is, the barrier count there, and the groups it
  // knows complete (those below `covered`).
  struct WaitPoint {
    int pos;
    std::vector<int> loops;
    expr bar, covered;
  };

  explicit Wgmma(Walker& w) : AnalysisBase(w) {}
  FamilySet Families() const override;
  void Start() override;
  void Before(const Op& op) override;
  void EnterLoop(const LoopFrame& l) override;
  void ExitLoop(const LoopFrame& l) override;
  void LeaveLoop(const LoopFrame& l) override;
  void EnterIf(const expr& cond) override;
  void EnterElse(const expr& cond) override;
  void ExitIf(const expr& cond, const std::vector<Val>& then_vals) override;
  void LeaveIf() override;

  // The groups known complete at the current point.
  const expr& covered() const { return *wg_covered_; }
  const std::vector<WaitPoint>& waits() const { return wg_waits_; }

 private:
  void CheckWarpgroupUniform(const Op& op, const char* what, const dsl::FragGeom* g,
                             bool uniform = true);
  // An accumulator read (or, `write`, a register A operand rewritten) while
  // the wgmma that writes (reads) it may be in flight.
  void CheckAccRead(const Op& op, int acc, bool write = false);
  void DoWgmma(const Op& op);
  void DoFragmentMath(const Op& op);

  std::optional<expr> wg_commit_, wg_covered_;  // wgmma groups committed / known complete
  std::map<int, expr> acc_group_;               // acc var -> group of its last wgmma (-1: none)
  std::set<int> reg_vars_;                      // vars assigned by to_operand (register A operands)
  std::vector<WaitPoint> wg_waits_;
  // The state before each enclosing loop and branch (then: after its then
  // branch), restored or merged when it ends.
  struct LoopState {
    expr wc0, cov_before;
    std::map<int, expr> acc_before;
    bool body_wg = false;
  };
  std::vector<LoopState> loop_states_;
  struct IfState {
    std::map<int, expr> acc0, acc1;
    expr cov0, cov1;
  };
  std::vector<IfState> if_states_;
};

}  // namespace argus::verifier::engine

#endif  // ARGUS_VERIFIER_ANALYSIS_WGMMA_H_
