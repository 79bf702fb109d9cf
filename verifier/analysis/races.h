// verifier/analysis/races.h: `shared_race` — no two threads access the same
// shared element, one writing, within one barrier interval (async copies
// count as writes while in the interval that issues them; a wgmma reads its
// operands until the wgmma_wait that covers it, so a later write needs that
// wait and then a barrier). Checked after the walk, over every pair of
// events (TMA loads against each other: mbarrier_phases).
//
// Thread safety: as the walker's (one thread, one kernel).
#ifndef ARGUS_VERIFIER_ANALYSIS_RACES_H_
#define ARGUS_VERIFIER_ANALYSIS_RACES_H_

#include "verifier/analysis/analysis_base.h"
#include "verifier/analysis/wgmma.h"

namespace argus::verifier::engine {

class Races : public AnalysisBase {
 public:
  Races(Walker& w, const Wgmma& wgmma) : AnalysisBase(w), wgmma_(wgmma) {}
  void AfterReads() override;

 private:
  const Wgmma& wgmma_;
};

}  // namespace argus::verifier::engine

#endif  // ARGUS_VERIFIER_ANALYSIS_RACES_H_
