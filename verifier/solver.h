// verifier/solver.h: proof obligations discharged by Z3.
//
// An obligation is a boolean Z3 term that must hold for every assignment of
// its free variables (thread ids, element indexes, loop iterations) that
// satisfies the assumptions. Prove() asserts the assumptions and the
// obligation's negation: unsat means proved, sat yields a model (the
// counterexample), and exhausting the resource limit yields "unknown" with
// Z3's reason — never "proved". Z3 exceptions are turned into Status here,
// at the module boundary.
//
// Deterministic verdicts: what decides "unknown" is Z3's resource limit
// (rlimit: a count of solver steps), so the same obligation gets the same
// verdict on a fast or a loaded machine. The wall-clock limit is a last
// resort (a watchdog thread that interrupts the check) for the rare query
// whose steps are slow; it is set well above what the rlimit allows.
//
// Thread safety: a Solver (and its z3::context) is used from one thread at
// a time; use one Solver per verification.
#ifndef ARGUS_VERIFIER_SOLVER_H_
#define ARGUS_VERIFIER_SOLVER_H_

#include <z3++.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace argus::verifier {

enum class Verdict { kProved, kRefuted, kUnknown };

struct ProofResult {
  Verdict verdict = Verdict::kUnknown;
  // For kRefuted: the value of every variable registered with the solver.
  std::map<std::string, int64_t> model;
  // For kUnknown: why (e.g. "resource limit of N steps", "timeout",
  // "incomplete quantifiers").
  std::string reason;
  double seconds = 0;
  // Z3 resource units (rlimit steps) the check spent.
  uint64_t steps = 0;
};

class Solver {
 public:
  // `rlimit`: Z3 steps per obligation (0: none); `timeout_ms`: the
  // wall-clock last resort.
  explicit Solver(unsigned timeout_ms = 60'000, uint64_t rlimit = kDefaultRlimit);

  // Steps per obligation by default: well above what the corpus's hardest
  // proved obligation needs (docs/verifier.md, "Deterministic verdicts").
  static constexpr uint64_t kDefaultRlimit = 20'000'000;

  z3::context& ctx() { return ctx_; }
  // The time limit of later Prove() calls (e.g. cut to a request's deadline).
  void set_timeout_ms(unsigned t) { timeout_ms_ = t; }
  void set_rlimit(uint64_t steps) { rlimit_ = steps; }
  // An integer variable in [lo, hi] (both inclusive); it is reported in models.
  z3::expr IntVar(const std::string& name, int64_t lo, int64_t hi);
  // A bit-vector variable of `bits` bits in [lo, hi] (unsigned); reported in models.
  z3::expr BvVar(const std::string& name, unsigned bits, uint64_t lo, uint64_t hi);
  z3::expr Int(int64_t v) { return ctx_.int_val(static_cast<int64_t>(v)); }

  // Assumptions that hold for every obligation from now on (e.g. ranges).
  void Assume(const z3::expr& fact);

  // Proves `obligation` under the assumptions (and the extra `facts`).
  // `watch`: extra named terms whose values a refutation's model reports.
  absl::StatusOr<ProofResult> Prove(
      const z3::expr& obligation, const std::vector<z3::expr>& facts = {},
      const std::vector<std::pair<std::string, z3::expr>>& watch = {});

 private:
  z3::context ctx_;
  unsigned timeout_ms_;
  uint64_t rlimit_;
  std::vector<z3::expr> assumptions_;
  std::vector<std::pair<std::string, z3::expr>> vars_;
};

const char* VerdictName(Verdict v);

}  // namespace argus::verifier

#endif  // ARGUS_VERIFIER_SOLVER_H_
