#include "verifier/solver.h"

#include <algorithm>
#include <chrono>
#include <climits>
#include <condition_variable>
#include <mutex>
#include <thread>

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

Solver::Solver(unsigned timeout_ms, uint64_t rlimit) : timeout_ms_(timeout_ms), rlimit_(rlimit) {}

namespace {

// The context's cumulative resource count (the "rlimit count" statistic).
uint64_t StepsSoFar(z3::solver& s) {
  z3::stats st = s.statistics();
  for (unsigned i = 0; i < st.size(); ++i) {
    if (st.key(i) == "rlimit count")
      return st.is_uint(i) ? st.uint_value(i) : static_cast<uint64_t>(st.double_value(i));
  }
  return 0;
}

// Interrupts the context's running check after `ms`, unless it finished.
// Z3's own "timeout" parameter runs on its scoped_timer thread pool, which can
// deadlock (Z3 4.8.10 on, Z3Prover/z3#5990): with 1 ms per obligation the
// service test hung in solver::check for ten minutes. Z3_interrupt acts only
// while a check runs (the API sets the interrupt handler for the check's
// duration), so a late interrupt cannot cancel a later query, and an early
// one is repeated.
class Watchdog {
 public:
  Watchdog(z3::context& ctx, unsigned ms)
      : thread_([this, &ctx, ms] {
          std::unique_lock<std::mutex> lock(mu_);
          auto done = [this] { return done_; };
          if (cv_.wait_for(lock, std::chrono::milliseconds(ms), done)) return;
          fired_ = true;
          // Again until the check returns: an interrupt that lands before the
          // check has set its handler is lost.
          do {
            ctx.interrupt();
          } while (!cv_.wait_for(lock, std::chrono::milliseconds(5), done));
        }) {}
  ~Watchdog() { Stop(); }
  // Whether it interrupted the check (read after Stop()).
  bool Stop() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      done_ = true;
    }
    cv_.notify_one();
    if (thread_.joinable()) thread_.join();
    return fired_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  bool fired_ = false;
  std::thread thread_;  // last: starts after the members it uses
};

}  // namespace

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
    if (rlimit_ > 0) {
      z3::params p(ctx_);
      // Z3 takes the limit as an unsigned int; larger asks mean "no limit".
      p.set("rlimit", static_cast<unsigned>(std::min<uint64_t>(rlimit_, UINT32_MAX)));
      s.set(p);
    }
    const uint64_t steps_before = StepsSoFar(s);
    for (const auto& a : assumptions_) s.add(a);
    for (const auto& f : facts) s.add(f);
    s.add(!obligation);
    z3::check_result checked;
    bool timed_out = false;
    {
      Watchdog watchdog(ctx_, timeout_ms_);
      checked = s.check();
      timed_out = watchdog.Stop();
    }
    const uint64_t steps_after = StepsSoFar(s);
    result.steps = steps_after > steps_before ? steps_after - steps_before : 0;
    switch (checked) {
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
        if (timed_out) {
          result.reason = absl::StrCat("wall-clock timeout of ", timeout_ms_, " ms");
        } else if (rlimit_ > 0 && result.steps >= rlimit_) {
          result.reason = absl::StrCat("resource limit of ", rlimit_, " solver steps");
        } else {
          result.reason = s.reason_unknown();
        }
        break;
    }
  } catch (const z3::exception& e) {
    return absl::InternalError(absl::StrCat("z3: ", e.msg()));
  }
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

}  // namespace argus::verifier
