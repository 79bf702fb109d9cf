// verifier/analysis/tag_flow.h: `tag_flow` — the global tile a tma_store
// writes, or a whole-fragment store(acc, G.tile(...)), holds at each element
// the accumulator element that belongs there: accumulator (R, C) goes to the
// output row that the proved assert_tag of the wgmma A operand gives operand
// row R and the column that B's gives operand column C. A fragment made of
// accumulators element by element (silu(g) * u) goes where each of them puts
// it.
//
// Thread safety: as the walker's (one thread, one kernel).
#ifndef ARGUS_VERIFIER_ANALYSIS_TAG_FLOW_H_
#define ARGUS_VERIFIER_ANALYSIS_TAG_FLOW_H_

#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "verifier/analysis/analysis_base.h"

namespace argus::verifier::engine {

class TagFlow : public AnalysisBase {
 public:
  explicit TagFlow(Walker& w) : AnalysisBase(w) {}
  FamilySet Families() const override {
    return {dsl::ir::OpFamily::kFragmentMath, dsl::ir::OpFamily::kWgmma};
  }
  void Before(const Op& op) override;
  void After(const Op& op) override;
  void Accessed(const Access& a) override;

  // A proved assert_tag on fragment `var` (element `idx`, tag `t`): when it is
  // a wgmma operand, the output row or column of its accumulator.
  void RecordOperandTag(int var, const std::vector<expr>& idx, const Tag& t);
  // Element (R, C) of fragment `stored`, written to global coordinates `gc`
  // of tensor `tname` where `guard` holds (inside `loops`), lands where its
  // accumulators' proved operand tags put it.
  void CheckPlacement(const Op& store, int stored, const expr& R, const expr& C,
                      const std::vector<expr>& gc, const std::string& tname, const expr& guard,
                      const std::vector<int>& loops, const Op* written_at);

 private:
  // A proved assert_tag on a wgmma operand gives the output row (A: first
  // coordinate of the tag, a function of operand row `param`) or column (B:
  // second coordinate, of operand column `param`) that the accumulator's row
  // / column belongs to.
  struct OperandTag {
    std::optional<expr> param, coord;
    std::vector<int> loops;
  };
  std::map<int, int> wg_operand_acc_;                   // wgmma operand var -> accumulator var
  std::map<std::pair<int, bool>, OperandTag> op_tags_;  // (accumulator, is A) -> its tag
  // An elementwise fragment value (silu(g) * u) -> the accumulators its
  // element (i, j) is made of, element (i, j) each.
  std::map<int, std::set<int>> ew_accs_;
};

}  // namespace argus::verifier::engine

#endif  // ARGUS_VERIFIER_ANALYSIS_TAG_FLOW_H_
