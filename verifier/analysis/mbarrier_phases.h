// verifier/analysis/mbarrier_phases.h: the abstract domain of an mbarrier
// phase and the checks it brings (docs/verifier.md, "Hopper").
//
// Every mbarrier op (and TMA load) sits in a loop nest whose iterations,
// linearized to N, execute it for N >= v, on barrier index (N + c) mod S, so
// it acts in round (N - v) / S of that barrier. A phase completes when its
// round's arrivals (and bytes) are in; a wait in its own round r with parity
// r + delta (delta 0, or -1 for the "fresh barrier counts as a completed
// parity-1 phase" idiom) observes phase r + delta. Happens-before between
// roles is derived from these functions: "phase q of X[b] completed before
// point P" holds when a wait before P (same iteration) observed it (Know0),
// or observed a phase of another barrier whose arrivals came after a wait
// that observed it (one hop through another thread, Know). Checked after the
// walk: mbarrier_parity, mbarrier_overrun, mbarrier_count, mbarrier_tx,
// mbarrier_hang, and shared_race between TMA loads in flight. Everything else
// about these ops is `unsupported`, and findings that rest on the model are
// then unknowns (Review).
//
// Thread safety: as the walker's (one thread, one kernel).
#ifndef ARGUS_VERIFIER_ANALYSIS_MBARRIER_PHASES_H_
#define ARGUS_VERIFIER_ANALYSIS_MBARRIER_PHASES_H_

#include <deque>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "verifier/analysis/analysis_base.h"
#include "verifier/analysis/wgmma.h"

namespace argus::verifier::engine {

// One mbarrier operation (arrive, arrive + expect_tx, wait) or TMA load, and
// what Analyze() derives from it: the iterations that execute it are the
// linearized iteration numbers N >= v of its "round nest" (its enclosing loops,
// less inner repetition loops that only repeat TMA issues), its barrier index
// is (N + c) mod S (S = the array's size), so it acts in round (N - v) / S.
struct MbOp {
  enum Kind { kArrive, kArriveTx, kWait, kTma } kind = kArrive;
  const Op* op = nullptr;
  int pos = 0, bar = -1, event = -1;
  std::vector<int> loops;
  std::optional<expr> index, parity, bytes, pc, wg_covered;
  std::vector<unsigned> ctx;
  // derived
  int state = 0;  // 0 not analyzed, 1 ok, -1 unsupported
  std::string why;
  std::vector<int> nest, reps;
  int64_t rep_count = 1, v = 0, c = 0, delta = 0;
  // Arrivals and TMA loads: their place in the barrier's arrival sequence,
  // G = ga * N + gc (the index is G % S), executed where `resid` holds.
  int64_t ga = 1, gc = 0, g_first = 0;
  // A one-shot op (outside the loops of its role, e.g. a pipeline's peeled
  // first or last iteration) written over a run-time index, `bars[(n - 1) %
  // S]`: its sequence number is that term (block-uniform), not a constant.
  std::optional<expr> gc_sym;
  // Waits: the sequence number of the first execution (the index written as
  // `E % S`: E at N = v; otherwise the index), and the first sequence number
  // of its family (the waits of the same threads on the same array: a
  // peeled wait and the loop's); its round is (G - wbase) / S.
  std::optional<expr> seq0;
  int64_t wbase = 0;
  std::vector<int64_t> executors;    // threads that execute it
  std::optional<expr> n_own, total;  // N in its own loop vars; iterations of the nest
  std::optional<expr> resid;         // the iterations that execute it (own loop vars)
};

class MbarrierPhases : public AnalysisBase {
 public:
  MbarrierPhases(Walker& w, const Wgmma& wgmma) : AnalysisBase(w), wgmma_(wgmma) {}
  FamilySet Families() const override {
    return {dsl::ir::OpFamily::kMbarrier, dsl::ir::OpFamily::kTma};
  }
  void Before(const Op& op) override;
  void After(const Op& op) override;
  void AfterWalk() override;
  void Review(Report* report) override;

  // The shared buffers TMA loads fill.
  const std::set<int>& tma_allocs() const { return tma_allocs_; }
  std::deque<MbOp>& mbops() { return mbops_; }
  const std::string& bar_name(int bar) const { return bars_[bar].name; }
  // Derives the op's phase function (once); false: unsupported (m.why).
  bool Analyze(MbOp& m);
  std::vector<expr> NestValues(const MbOp& m, const expr& n);
  Subst At(const MbOp& m, const expr& n, std::optional<expr> tid);
  // A wait's own round (its executions on that index so far) and the phase it
  // observes; an arrival's round (its place in the arrival sequence).
  expr Target(const MbOp& w, const expr& n) {
    return (n - I(w.v) + *w.seq0 - I(w.wbase)) / I(bars_[w.bar].count) + I(w.delta);
  }
  expr Gc(const MbOp& a) { return a.gc_sym ? *a.gc_sym : I(a.gc); }
  // The array's first arrival sequence number: fixed after the walk; during
  // it, the smallest constant one of the arrivals analyzed so far.
  int64_t G0(const MbOp& a) {
    if (bars_[a.bar].g0) return *bars_[a.bar].g0;
    std::optional<int64_t> g0;
    for (const MbOp& m : mbops_) {
      if (m.bar != a.bar || m.kind == MbOp::kWait || m.state <= 0 || m.gc_sym) continue;
      g0 = g0 ? std::min(*g0, m.g_first) : m.g_first;
    }
    return g0 ? *g0 : a.g_first;
  }
  expr Round(const MbOp& a, const expr& n) {
    return (I(a.ga) * n + Gc(a) - I(G0(a))) / I(bars_[a.bar].count);
  }
  // Arrival op `a`'s iteration in round t of index b, and whether it has one.
  expr SeqOf(const MbOp& a, const expr& b, const expr& t) {
    int64_t S = bars_[a.bar].count, g0 = G0(a);
    return I(g0) + t * I(S) + z3::mod(b - I(g0), I(S));
  }
  expr Inv(const MbOp& a, const expr& b, const expr& t) {
    return (SeqOf(a, b, t) - Gc(a)) / I(a.ga);
  }
  expr Covers(const MbOp& a, const expr& b, const expr& t) {
    return t >= 0 && CoversSeq(a, SeqOf(a, b, t));
  }
  // The fill that wait `cw` observes is always in `cw`'s own iteration, in a
  // loop nest of the same shape as TMA load `w`'s.
  bool Parallel(const MbOp& w, const MbOp& cw);
  bool Precedes(const MbOp& w, const std::vector<int>& loops, int pos) const {
    if (w.pos >= pos || w.loops.size() > loops.size()) return false;
    for (size_t i = 0; i < w.loops.size(); ++i)
      if (w.loops[i] != loops[i]) return false;
    return true;
  }

 private:
  struct BarArray {
    std::string name;
    int64_t count = 1, arrivals = 1;
    const Op* op = nullptr;
    std::optional<int64_t> g0;  // first arrival sequence number (set after the walk)
  };
  struct Executors {  // of a guard (path condition): Analyze
    std::optional<expr> resid;
    std::vector<int64_t> threads;
    std::string why;  // not a uniform set of iterations
  };
  MbOp& NewMbOp(const Op& op, MbOp::Kind kind, int bar, int index_var);
  bool Fail(MbOp& m, const std::string& why) {
    m.state = -1;
    m.why = why;
    return false;
  }
  // Whether `e` mentions only the per-thread variables in `ok`.
  bool OnlyVars(const expr& e, const std::set<unsigned>& ok);
  bool Valid(const expr& e);
  // Loop `loop` contains mbarrier waits or arrives.
  bool HasMbarSync(int loop);
  bool AnalyzeOneShot(MbOp& m, const std::optional<expr>& mod_arg);
  bool AnalyzeArrival(MbOp& m, const expr& ranges);
  bool AnalyzeWait(MbOp& m, const expr& resid, const expr& ranges,
                   const std::optional<expr>& mod_arg);
  bool WaitFamily(MbOp& m, bool numeral);
  void CheckWaitFamilies();
  void CheckTmaRaces(const std::set<int>& skip);
  void CheckArray(int x);
  void CheckArrivals(int x, const std::vector<MbOp*>& al,
                     const std::vector<std::vector<MbOp*>>& fams);
  void CheckWait(int x, MbOp* w, const std::vector<MbOp*>& al,
                 const std::vector<std::vector<MbOp*>>& fams, const MbOp* filler);
  expr CoversSeq(const MbOp& a, const expr& g);
  Subst LastInner(const MbOp& w, size_t depth);
  expr Know0(const std::vector<int>& loops, int pos, const Subst& sub, int bar, const expr& b,
             const expr& q);
  expr Know(const std::vector<int>& loops, int pos, const Subst& sub, int bar, const expr& b,
            const expr& q);
  void FillerWatch(const MbOp& f, const expr& b, const expr& t, const std::string& key,
                   Watch* watch);
  std::string FillerText(const MbOp& f, const ProofResult& r, const std::string& key);

  const Wgmma& wgmma_;
  std::vector<BarArray> bars_;
  std::deque<MbOp> mbops_;
  std::set<int> tma_allocs_;
  std::map<unsigned, Executors> executors_;  // by the guard's term id (kept alive by its MbOps)
  std::map<std::pair<const MbOp*, const MbOp*>, bool> parallel_;
  std::map<int, bool> mbar_sync_;  // HasMbarSync, by loop
};

}  // namespace argus::verifier::engine

#endif  // ARGUS_VERIFIER_ANALYSIS_MBARRIER_PHASES_H_
