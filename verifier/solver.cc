#include "verifier/solver.h"

#include <chrono>

#include "absl/strings/str_cat.h"

namespace argus::verifier {

const char* VerdictName(Verdict v) {
  switch (v) {
    case Verdict::kProved:
      return "proved";
    case Verdict::kRefuted:
      return "refuted";
    case Verdict::kUnknown:
      return "unknown";
  }
  return "?";
}

Solver::Solver(unsigned timeout_ms) : timeout_ms_(timeout_ms) {}

z3::expr Solver::IntVar(const std::string& name, int64_t lo, int64_t hi) {
  z3::expr v = ctx_.int_const(name.c_str());
  assumptions_.push_back(v >= ctx_.int_val(lo) && v <= ctx_.int_val(hi));
  vars_.emplace_back(name, v);
  return v;
}

z3::expr Solver::BvVar(const std::string& name, unsigned bits, uint64_t lo, uint64_t hi) {
  z3::expr v = ctx_.bv_const(name.c_str(), bits);
  assumptions_.push_back(z3::uge(v, ctx_.bv_val(lo, bits)) && z3::ule(v, ctx_.bv_val(hi, bits)));
  vars_.emplace_back(name, v);
  return v;
}

void Solver::Assume(const z3::expr& fact) { assumptions_.push_back(fact); }

absl::StatusOr<ProofResult> Solver::Prove(
    const z3::expr& obligation, const std::vector<z3::expr>& facts,
    const std::vector<std::pair<std::string, z3::expr>>& watch) {
  auto start = std::chrono::steady_clock::now();
  ProofResult result;
  try {
    z3::solver s(ctx_);
    z3::params p(ctx_);
    p.set("timeout", timeout_ms_);
    s.set(p);
    for (const auto& a : assumptions_) s.add(a);
    for (const auto& f : facts) s.add(f);
    s.add(!obligation);
    switch (s.check()) {
      case z3::unsat:
        result.verdict = Verdict::kProved;
        break;
      case z3::sat: {
        result.verdict = Verdict::kRefuted;
        z3::model m = s.get_model();
        std::vector<std::pair<std::string, z3::expr>> all = vars_;
        all.insert(all.end(), watch.begin(), watch.end());
        for (const auto& [name, var] : all) {
          z3::expr value = m.eval(var, /*model_completion=*/true);
          if (value.is_true() || value.is_false()) {
            result.model[name] = value.is_true() ? 1 : 0;
            continue;
          }
          int64_t v = 0;
          if (value.is_numeral_i64(v)) {
            result.model[name] = v;
          } else {
            uint64_t u = 0;
            if (value.is_numeral_u64(u)) result.model[name] = static_cast<int64_t>(u);
          }
        }
        break;
      }
      case z3::unknown:
        result.verdict = Verdict::kUnknown;
        result.reason = s.reason_unknown();
        break;
    }
  } catch (const z3::exception& e) {
    return absl::InternalError(absl::StrCat("z3: ", e.msg()));
  }
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

}  // namespace argus::verifier
