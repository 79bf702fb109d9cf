// verifier/analysis/fragment_tags.h: fragment math — the tags of
// accumulators, row vectors and to_operand results, and `mma_k_mismatch`,
// the MMA K-slice check on any operand (docs/verifier.md, "Fragment math").
//
// Fragment math is register-only: it touches no memory, so it adds no race,
// bounds or wait obligation. What it must keep is the data-flow identity of
// each element. An accumulator element (i, j) is a sum of products A(i, kk) *
// B(kk, j): its *row tags* are the tags of the A elements of row i, its
// *column tags* those of the B elements of column j (the contraction
// coordinate stays free, so a tag stands for every kk). Elementwise math keeps
// the tags of its operands element by element (the union: a value built from
// two accumulators carries both), a row reduction keeps the row tags and has no
// column identity, and to_operand(p, o) makes element (i, kk) of the new A
// operand element (i, kk) of p — its K coordinate is p's column, i.e. the tag
// that p's column carries (in attention, the key position). The K-slice check
// then compares the K coordinate of A's tag with that of B's for every (i, kk,
// j): the coordinate of each tag that moves with kk.
//
// Layout facts the tags rest on are checked by enumerating the instruction's
// lane tables (dsl/mma.h), so they hold for any layout FragGeom describes: the
// lanes a row reduction combines hold exactly that row's columns, and
// to_operand's A elements sit in the lanes that hold the accumulator elements.
//
// Thread safety: as the walker's (one thread, one kernel).
#ifndef ARGUS_VERIFIER_ANALYSIS_FRAGMENT_TAGS_H_
#define ARGUS_VERIFIER_ANALYSIS_FRAGMENT_TAGS_H_

#include <functional>
#include <map>
#include <set>
#include <vector>

#include "verifier/analysis/analysis_base.h"

namespace argus::verifier::engine {

class FragmentTags : public AnalysisBase {
 public:
  explicit FragmentTags(Walker& w) : AnalysisBase(w) {}
  FamilySet Families() const override {
    return {dsl::ir::OpFamily::kFragment, dsl::ir::OpFamily::kFragmentMath,
            dsl::ir::OpFamily::kWgmma};
  }
  void Before(const Op& op) override;
  void After(const Op& op) override;
  void EnterLoop(const LoopFrame& l) override;
  void ExitLoopBody(const LoopFrame& l) override;
  void LeaveLoop(const LoopFrame& l) override;
  void ExitIf(const expr& cond, const std::vector<Val>& then_vals) override;

 private:
  struct KSide;
  // mma and wgmma: the accumulator's new contributions, after the K check.
  void DoMma(const Op& op);
  bool OperandSide(int var, bool is_a, const expr& r, const expr& c, KSide* s);
  TagSet Contributions(const Op& op, const KSide& s);
  TagSet Union(const TagSet& a, const TagSet& b);
  void CheckMmaK(const Op& op);
  void CheckMmaSides(const Op& op, const KSide& a, const KSide& b, const expr& i, const expr& kk,
                     const expr& j);
  void ExplainK(const ProofResult& r, Finding* f, const KSide& a, const KSide& b,
                const std::vector<int>& da, const std::vector<int>& db);
  TagSet IterationValue(int loop, const TagSet& before, const TagSet& body, bool last);
  FragTags MathTags(const Op& op);
  void CarryBegin(int loop, const Block& body, std::map<int, FragTags>* saved);
  void CarryEnd(int loop, const std::map<int, FragTags>& saved);
  void MergeFragTags(const expr& cond, const std::vector<Val>& then_vals);

  // MMA K checks waiting for the end of a loop (operands carried from the
  // previous iteration), by loop.
  std::multimap<int, std::function<void(const std::map<int, FragTags>&)>> pending_k_;
  // The tags of each enclosing loop's carried fragments before it, by loop.
  std::map<int, std::map<int, FragTags>> carried_;
  FragTags result_tags_;  // fragment math: the result's, until it is bound
};

}  // namespace argus::verifier::engine

#endif  // ARGUS_VERIFIER_ANALYSIS_FRAGMENT_TAGS_H_
