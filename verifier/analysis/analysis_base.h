// verifier/analysis/analysis_base.h: what the analyses share — the walker
// they read (its terms, values, events and obligations), under the short
// names their checks use.
//
// Thread safety: as the walker's (one thread, one kernel).
#ifndef ARGUS_VERIFIER_ANALYSIS_ANALYSIS_BASE_H_
#define ARGUS_VERIFIER_ANALYSIS_ANALYSIS_BASE_H_

#include <functional>
#include <map>
#include <optional>
#include <string>

#include "verifier/analysis.h"
#include "verifier/walker.h"

namespace argus::verifier::engine {

class AnalysisBase : public Analysis {
 protected:
  explicit AnalysisBase(Walker& w) : w_(w), c_(w.ctx()), f_(w.fn()), opt_(w.options()) {}

  expr I(int64_t v) { return w_.I(v); }
  expr Fresh(const std::string& name, bool is_bool = false) { return w_.Fresh(name, is_bool); }
  Inst MakeInst(const std::map<unsigned, expr>& pins) { return w_.MakeInst(pins); }
  expr IntOf(int var) { return w_.IntOf(var); }
  void Obligation(const std::string& check, const Op& op, const expr& bad, const Watch& watch,
                  const std::function<void(const ProofResult&, Finding*)>& explain,
                  std::optional<expr> rest = std::nullopt) {
    w_.Obligation(check, op, bad, watch, explain, std::move(rest));
  }
  absl::StatusOr<ProofResult> ProveIn(const expr& ob, const Watch& watch = {}) {
    return w_.ProveIn(ob, watch);
  }
  void Unsupported(const Op& op, const std::string& what) { w_.Unsupported(op, what); }
  Watch BaseWatch() { return w_.BaseWatch(); }
  expr Within() { return w_.Within(); }
  std::string Src(Loc l) const { return w_.Src(l); }
  static int64_t M(const ProofResult& r, const std::string& k) { return Walker::M(r, k); }

  Walker& w_;
  z3::context& c_;
  const Function& f_;
  const VerifyOptions& opt_;
};

}  // namespace argus::verifier::engine

#endif  // ARGUS_VERIFIER_ANALYSIS_ANALYSIS_BASE_H_
