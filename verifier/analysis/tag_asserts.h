// verifier/analysis/tag_asserts.h: `tag_assert` and `tag_assert_eq` — the
// tag assertions: element (i, j) of a fragment or view holds the tensor
// element (or custom tag value) the lambda names, or the same tag as the
// other operand, for every candidate writer no more recent window instance
// excludes. A proved operand tag of a wgmma feeds tag_flow.
//
// Thread safety: as the walker's (one thread, one kernel).
#ifndef ARGUS_VERIFIER_ANALYSIS_TAG_ASSERTS_H_
#define ARGUS_VERIFIER_ANALYSIS_TAG_ASSERTS_H_

#include <string>
#include <vector>

#include "verifier/analysis/analysis_base.h"
#include "verifier/analysis/tag_flow.h"

namespace argus::verifier::engine {

class TagAsserts : public AnalysisBase {
 public:
  TagAsserts(Walker& w, TagFlow& tag_flow) : AnalysisBase(w), tag_flow_(tag_flow) {}
  FamilySet Families() const override { return {dsl::ir::OpFamily::kTag}; }
  void Before(const Op& op) override;

 private:
  struct Side;
  void ReadSide(const Op& op, const std::string& field, int var, const std::vector<expr>* pin,
                Side* s);
  std::string TagText(const ProofResult& r, const std::string& p, const Tag& t,
                      const std::string& field);

  TagFlow& tag_flow_;
};

}  // namespace argus::verifier::engine

#endif  // ARGUS_VERIFIER_ANALYSIS_TAG_ASSERTS_H_
