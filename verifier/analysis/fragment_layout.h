// verifier/analysis/fragment_layout.h: the layout facts fragment math's tags
// rest on, decided by enumerating the instruction's lane tables (dsl/mma.h)
// for the concrete geometry:
// - row_reduce_layout: the lanes a row reduction combines hold exactly that
//   row's columns;
// - to_operand_layout: to_operand's A elements sit in the lanes that hold
//   the accumulator elements of the same coordinates.
//
// Thread safety: as the walker's (one thread, one kernel).
#ifndef ARGUS_VERIFIER_ANALYSIS_FRAGMENT_LAYOUT_H_
#define ARGUS_VERIFIER_ANALYSIS_FRAGMENT_LAYOUT_H_

#include <string>

#include "verifier/analysis/analysis_base.h"

namespace argus::verifier::engine {

class FragmentLayout : public AnalysisBase {
 public:
  explicit FragmentLayout(Walker& w) : AnalysisBase(w) {}
  FamilySet Families() const override { return {dsl::ir::OpFamily::kFragmentMath}; }
  void Before(const Op& op) override;

 private:
  void CheckRowReduceLayout(const Op& op, const dsl::FragGeom& g);
  void CheckToOperandLayout(const Op& op, const dsl::FragGeom& a, const dsl::FragGeom& acc);
  void LayoutVerdict(const Op& op, const std::string& check, const std::string& why);
};

}  // namespace argus::verifier::engine

#endif  // ARGUS_VERIFIER_ANALYSIS_FRAGMENT_LAYOUT_H_
