// verifier/analysis/named_barriers.h: named barriers (bar.sync / bar.arrive
// id, n) — ordering only: the data-flow checks ignore the order they give
// (every hand-off must go through barrier() or an mbarrier, so ignoring it
// can only add false alarms). Checked: ids clear of warpgroup_barrier()'s
// (`oob`), and `named_barrier_count`: the threads that use an id are its
// count, all with the same count (whole warp groups reach them: wgmma.h).
//
// Thread safety: as the walker's (one thread, one kernel).
#ifndef ARGUS_VERIFIER_ANALYSIS_NAMED_BARRIERS_H_
#define ARGUS_VERIFIER_ANALYSIS_NAMED_BARRIERS_H_

#include <vector>

#include "verifier/analysis/analysis_base.h"

namespace argus::verifier::engine {

class NamedBarriers : public AnalysisBase {
 public:
  explicit NamedBarriers(Walker& w) : AnalysisBase(w) {}
  FamilySet Families() const override { return {dsl::ir::OpFamily::kBarrier}; }
  void Before(const Op& op) override;
  void AfterWalk() override;

 private:
  struct NamedBar {
    const Op* op;
    expr pc, id;
    int64_t n;
  };
  std::vector<NamedBar> named_;
};

}  // namespace argus::verifier::engine

#endif  // ARGUS_VERIFIER_ANALYSIS_NAMED_BARRIERS_H_
