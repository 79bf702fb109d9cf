// verifier/analysis/tma_reads.h: reads of the shared buffers TMA loads fill,
// against the mbarrier phase model (mbarrier_phases.h):
// - read_before_wait: every TMA load that writes an element read has landed
//   (a wait before the read observed its barrier phase);
// - stage_overwrite: every later TMA load into that element is ordered after
//   the read (the producer waited for a phase that an arrive after the read
//   completes);
// - uninitialized_read: some landed load fills every element read.
// It also resolves those reads to their writers for the other analyses (the
// fill whose phase the reader's last wait observed, and older rounds).
//
// Thread safety: as the walker's (one thread, one kernel).
#ifndef ARGUS_VERIFIER_ANALYSIS_TMA_READS_H_
#define ARGUS_VERIFIER_ANALYSIS_TMA_READS_H_

#include <string>
#include <vector>

#include "verifier/analysis/analysis_base.h"
#include "verifier/analysis/mbarrier_phases.h"

namespace argus::verifier::engine {

class TmaReads : public AnalysisBase, public FillResolver {
 public:
  TmaReads(Walker& w, MbarrierPhases& phases) : AnalysisBase(w), phases_(phases) {}
  void Read(const Event& rd) override;
  bool Fills(int alloc) const override { return phases_.tma_allocs().count(alloc) > 0; }
  std::vector<Cand> Candidates(const Event& rd, const std::vector<expr>& L) override;

 private:
  void CheckFill(const Event& rd, MbOp& w);

  MbarrierPhases& phases_;
};

}  // namespace argus::verifier::engine

#endif  // ARGUS_VERIFIER_ANALYSIS_TMA_READS_H_
