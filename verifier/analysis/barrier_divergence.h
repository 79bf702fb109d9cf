// verifier/analysis/barrier_divergence.h: `barrier_divergence` — every thread
// of the block reaches each block-wide barrier (barrier(), block_reduce_*,
// mbarrier() initialization) equally often: the path condition cannot differ
// between two threads at the same iteration count of each enclosing loop.
// `warp_divergence` — the same for the lanes of one warp at a warp
// collective (shfl_*, warp_reduce_*): a lane-dependent branch around one
// leaves lanes it names without a value.
//
// Thread safety: as the walker's (one thread, one kernel).
#ifndef ARGUS_VERIFIER_ANALYSIS_BARRIER_DIVERGENCE_H_
#define ARGUS_VERIFIER_ANALYSIS_BARRIER_DIVERGENCE_H_

#include "verifier/analysis/analysis_base.h"

namespace argus::verifier::engine {

class BarrierDivergence : public AnalysisBase {
 public:
  explicit BarrierDivergence(Walker& w) : AnalysisBase(w) {}
  FamilySet Families() const override {
    return {dsl::ir::OpFamily::kBarrier, dsl::ir::OpFamily::kCollective,
            dsl::ir::OpFamily::kMbarrier};
  }
  void Before(const Op& op) override;

 private:
  // `warp`: the other thread is a lane of the same warp (warp collectives).
  void Check(const Op& op, const char* what, bool warp = false);
};

}  // namespace argus::verifier::engine

#endif  // ARGUS_VERIFIER_ANALYSIS_BARRIER_DIVERGENCE_H_
