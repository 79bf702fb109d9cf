// verifier/analysis/bounds.h: `oob` — every global and shared index of the
// accesses the walker executes (loads, stores, tile copies on both sides,
// fragment loads and stores, TMA tiles, wgmma operands) lies inside the
// tensor (symbolic shape) or buffer; buffer_load is exempt (hardware bounds).
//
// Thread safety: as the walker's (one thread, one kernel).
#ifndef ARGUS_VERIFIER_ANALYSIS_BOUNDS_H_
#define ARGUS_VERIFIER_ANALYSIS_BOUNDS_H_

#include "verifier/analysis/analysis_base.h"

namespace argus::verifier::engine {

class Bounds : public AnalysisBase {
 public:
  explicit Bounds(Walker& w) : AnalysisBase(w) {}
  void Accessed(const Access& a) override;

 private:
  expr InBounds(const View& v, const std::vector<expr>& coords);
};

}  // namespace argus::verifier::engine

#endif  // ARGUS_VERIFIER_ANALYSIS_BOUNDS_H_
