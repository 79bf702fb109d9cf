// verifier/walker.h: the verifier's abstract interpreter (internal to
// argus_verifier; verify.h is the interface).
//
// One symbolic thread walks the tile IR: scalars become Z3 terms, views maps
// from view indexes to base coordinates, shared-memory accesses events; loops
// are walked once at a symbolic iteration, branches under their path
// conditions, device calls as terms over their arguments. The walker owns
// that execution (values, path conditions, loops, barrier and commit counts,
// memory events and the writers a read may see) and the obligations' plumbing
// (the solver, the deadline, the report); what is checked belongs to the
// analyses (analysis.h, analysis/*), which it calls at each op by the op's
// family (ir::Info(op.code).family).
//
// Thread safety: a Walker is used by one thread, for one kernel, once.
#ifndef ARGUS_VERIFIER_WALKER_H_
#define ARGUS_VERIFIER_WALKER_H_

#include <z3++.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "dsl/ir.h"
#include "verifier/analysis.h"
#include "verifier/domain.h"
#include "verifier/report.h"
#include "verifier/solver.h"
#include "verifier/verify.h"

namespace argus::verifier::engine {

// Resolves reads of the buffers it fills to their writers itself (TMA loads:
// the writer a read sees is the fill whose barrier phase a wait observed).
class FillResolver {
 public:
  virtual ~FillResolver() = default;
  virtual bool Fills(int alloc) const = 0;
  virtual std::vector<Cand> Candidates(const Event& rd, const std::vector<expr>& L) = 0;
};

using Watch = std::vector<std::pair<std::string, expr>>;

class Walker {
 public:
  Walker(const dsl::ir::Module& m, const Function& f, const VerifyOptions& o, Report* r);

  // Analyses are called in the order they are added (not owned).
  void Add(Analysis* a);
  void set_fill_resolver(FillResolver* r) { resolver_ = r; }
  absl::Status Run();

  // A refutation relied on a value older than the exact window: rerun wider.
  bool needs_window() const { return needs_window_; }
  // The request's deadline as an absolute time (NowMs), when the walker is
  // one of several runs of one request (the window widening reruns).
  void set_deadline_at(int64_t at_ms) { deadline_ = at_ms; }
  static int64_t NowMs() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }

  const Function& fn() const { return f_; }
  const VerifyOptions& options() const { return opt_; }

  // ---- terms
  z3::context& ctx() { return c_; }
  expr Fresh(const std::string& name, bool is_bool = false);
  expr I(int64_t v) { return c_.int_val(static_cast<int64_t>(v)); }
  // An instance: every per-thread variable renamed, some pinned.
  Inst MakeInst(const std::map<unsigned, expr>& pins);
  // The per-thread variables `e` mentions (their ids).
  void FreeInstVars(const expr& e, std::set<unsigned>* out);

  // ---- obligations
  // Proves !bad; a refutation is a finding of `check` at `op` whose message
  // and counterexample `explain` writes from the model of `watch`. `rest`
  // adds the refutations that need a value older than the window.
  void Obligation(const std::string& check, const Op& op, const expr& bad, const Watch& watch,
                  const std::function<void(const ProofResult&, Finding*)>& explain,
                  std::optional<expr> rest = std::nullopt);
  // Solver::Prove with the per-obligation timeout cut to what is left of the
  // deadline (a query never runs past it).
  absl::StatusOr<ProofResult> ProveIn(const expr& ob, const Watch& watch = {});
  // A construct the verifier cannot follow: the kernel cannot be proved, so
  // the verification stops here (the rest of the walk and the checks after
  // it would only spend time on a verdict that stays unknown).
  void Unsupported(const Op& op, const std::string& what);
  // The request's deadline: once past it, one `unknown` finding names the
  // program point the walker had reached, and everything stops (the walk
  // checks it before every op, the checks after the walk before every
  // obligation). Returns whether the walker must stop.
  bool Expired(const Op& op);
  bool stopped() const { return stopped_; }
  // The thread, blocks and loop iterations of the current point, for a model.
  Watch BaseWatch();
  // Every enclosing loop is within its first `window` iterations.
  expr Within();
  static int64_t M(const ProofResult& r, const std::string& k) {
    auto it = r.model.find(k);
    return it == r.model.end() ? 0 : it->second;
  }
  std::string Src(Loc l) const;
  std::string Where(Loc l) const;
  void AddFinding(const Finding& f) { rep_->findings.push_back(f); }
  // An obligation decided without the solver.
  void Decided(bool proved) {
    rep_->obligations++;
    if (proved) rep_->proved++;
  }

  // ---- values
  std::vector<Val>& vals() { return vals_; }
  expr IntOf(int var);
  expr BoolOf(int var);
  bool IsIntType(const dsl::ir::Type& t) const {
    return t.is_scalar() && (dsl::IsInt(t.dtype) || t.dtype == dsl::DType::kBool);
  }
  void SetScalar(int var, std::optional<expr> e);
  void Havoc(int var);
  // Executes one op (an assertion's lambda, a tag's region).
  absl::Status Step(const Op& op);

  // ---- views
  View BaseView(const dsl::ir::TensorParam& t, int idx);
  // The global tile a TMA load or store moves: tensor op.ints[0], box
  // op.ints[1] x op.ints[2], box coordinates in operands first_coord and the
  // next one.
  View TmaTileView(const Op& op, size_t first_coord);
  expr SymExt(const dsl::ir::SymInt& s);
  expr BaseExtent(const View& v, int d);
  // Base coordinates of view element `idx`.
  std::vector<expr> Coords(const View& v, const std::vector<expr>& idx);
  // Elements of a whole view: fresh index vars with ranges.
  std::vector<expr> ElemVars(const View& v, const std::string& stem, std::vector<int64_t>* ext,
                             expr* range);

  // ---- shared memory
  std::deque<Event>& events() { return events_; }
  Event& NewEvent(const Op& op, const View& v, bool write);
  void FillInverse(Event& e, const View& v);
  const std::vector<std::string>& alloc_names() const { return alloc_names_; }
  // Writers that may provide the value of alloc element `L` read by `rd`.
  std::vector<Cand> Candidates(const Event& rd, const std::vector<expr>& L,
                               const std::string& field);
  Cand BuildCand(const Event& w, const std::vector<expr>& L, const std::map<unsigned, expr>& pins,
                 expr extra, bool window, std::vector<expr> bind);
  // Whether a fill resolver resolves the reads of `alloc`.
  bool ResolvedByFills(int alloc) const { return resolver_ && resolver_->Fills(alloc); }

  // ---- the current point
  const expr& pc() const { return *pc_; }
  const expr& tid() const { return *tid_; }
  const expr& tid_base() const { return tid_base_; }
  const expr& bar() const { return *bar_; }
  int pos() const { return pos_; }
  std::vector<LoopInfo>& loops() { return loops_; }
  // The loops around the current point (the checks after the walk set it to
  // the loops of the op they check, for BaseWatch and Within).
  std::vector<int>& loop_stack() { return loop_stack_; }
  const std::vector<unsigned>& ctx_ids() const { return ctx_; }
  const std::vector<expr>& blocks() const { return blk_; }
  // The canonical fragment element (row, col) of FragTags.
  const expr& fi() const { return fi_; }
  const expr& fj() const { return fj_; }
  // The dims fixed by the options, as values.
  const Subst& fixed_dims() const { return fixed_dims_; }
  int in_while() const { return in_while_; }
  // Barrier and commit counts are linear in the iterations (none under a
  // conditional or in a loop of run-time trip count inside another).
  bool counts_ok() const { return counts_ok_; }

 private:
  // ---- the walk, by op family (walk_*.cc)
  absl::Status Walk(const Block& b);
  absl::Status Dispatch(const Op& op);
  // A Hopper op the phase and group models cannot count inside a while loop
  // (its message), or null.
  static std::optional<std::string> UnsupportedInWhile(const Op& op);
  void StepScalar(const Op& op);
  void StepSpecial(const Op& op);
  void StepView(const Op& op);
  void StepSubview(const Op& op);
  void StepExtent(const Op& op);
  void StepMemory(const Op& op);
  void StepLoadStore(const Op& op);
  void LoadGlobal(const Op& op, const View& v, const std::vector<expr>& cs);
  void StepCopy(const Op& op);
  void StepFragment(const Op& op);
  void StepLoadFragment(const Op& op);
  void StepStoreFragment(const Op& op);
  void StepFragmentMath(const Op& op);
  void StepMbarrier(const Op& op);
  void StepTma(const Op& op);
  void StepTmaLoad(const Op& op);
  void StepTmaStore(const Op& op);
  void StepWgmma(const Op& op);
  void StepWgmmaOperand(const Op& op);
  void StepBarrier(const Op& op);
  void StepCollective(const Op& op);
  absl::Status StepTag(const Op& op);
  void StepCall(const Op& op);
  absl::Status StepControl(const Op& op);
  absl::Status StepFor(const Op& op);
  absl::Status StepIf(const Op& op);
  absl::Status StepWhile(const Op& op);

  // Calls the analyses.
  void Accessed(const Op& op, const View& v, const std::vector<expr>& coords, const expr& guard,
                const std::vector<expr>& elem);
  void Read(const Event& rd);

  // ---- calls (walk_call.cc)
  expr IntBinary(dsl::ir::BinOp op, const expr& a, const expr& b);
  expr BoolBinary(dsl::ir::BinOp op, const expr& a, const expr& b);
  // The result of call `call` in function `caller`, whose integer and bool
  // arguments `scalar_of` gives (unset: unknown); through DeviceCallValue.
  std::optional<expr> CallValue(const Op& call, const dsl::ir::Function& caller,
                                const std::function<expr(int)>& scalar_of, int depth);
  // The result of a call of @device function `fn` (unset: unknown).
  std::optional<expr> DeviceCallValue(const dsl::ir::Function& fn,
                                      const std::vector<std::optional<expr>>& args, int depth);

  // ---- loops (walk_control.cc)
  void Assigned(const Block& b, std::set<int>* out);
  int CountOps(const Block& b, OpCode code, bool* in_if, bool* dynamic, bool under_if = false);
  // ConstOf, or the literal of a kConst defining `var` in block `b` (bounds
  // of an inner loop, counted before the enclosing body is walked).
  std::optional<int64_t> ConstIn(const Block& b, int var);
  std::optional<int64_t> ConstOf(int var);
  void MergeScalars(const expr& cond, std::vector<Val>& then_vals);

  // ---- memory (memory.cc)
  // The tensors some op of the kernel writes: loads from the others are
  // functions of their coordinates.
  void FindWrittenTensors();
  // After the body of loop `loop` is walked: a read in it whose element a
  // write later in the body may have written in an earlier iteration (its
  // value and checks were made before the walk reached that write).
  void CheckLoopCarriedWrites(int loop);
  // The thread that holds fragment element `el` (logical tile coordinates).
  expr FragThread(const dsl::FragGeom& g, const std::vector<expr>& el, expr* range);

  void FillThread(const ProofResult& r, Counterexample* cx);
  void Start();
  void Finish();

  const dsl::ir::Module& mod_;
  const Function& f_;
  const VerifyOptions& opt_;
  Report* rep_;
  Solver solver_;
  z3::context& c_;
  std::vector<Analysis*> analyses_;
  std::array<std::vector<Analysis*>, 32> by_family_;
  FillResolver* resolver_ = nullptr;

  int fresh_ = 0, inst_count_ = 0, pos_ = 0;
  std::vector<expr> inst_;  // per-thread / per-iteration variables
  std::set<unsigned> inst_ids_;
  std::vector<expr> facts_;
  std::vector<Val> vals_;
  std::vector<expr> dim_;
  std::vector<expr> blk_, grid_;
  std::optional<expr> tid_, pc_, bar_, commit_;
  expr tid_base_{c_};
  expr fi_{c_}, fj_{c_};
  std::vector<dsl::ir::Layout> allocs_;
  std::vector<std::string> alloc_names_;
  int mbarrier_arrays_ = 0;
  std::deque<Event> events_;
  std::vector<LoopInfo> loops_;
  std::vector<int> loop_stack_;
  struct Wait {
    expr commit, bar;
    int64_t n;
  };
  std::optional<Wait> wait_;
  bool counts_ok_ = true;
  std::set<int> written_tensors_;  // tensor indices some op writes (FindWrittenTensors)
  // The kernel issues TMA loads: its reads are checked after the walk, when
  // every writer, wait and arrive is known.
  bool defer_reads_ = false;
  bool post_ = false;                // in the checks after the walk
  std::vector<int> deferred_reads_;  // events
  std::vector<unsigned> ctx_;        // ids of the enclosing path conditions
  std::vector<expr> ctx_keep_;       // keeps those terms (and their ids) alive
  int in_while_ = 0;
  Subst fixed_dims_{c_};

  bool needs_window_ = false;
  bool stopped_ = false;       // deadline reached or unsupported construct: stop
  bool deadline_hit_ = false;  // a solver query ran out of the deadline's time
  int64_t deadline_ = NowMs() + opt_.deadline_ms;
  bool trace_ = std::getenv("ARGUS_VERIFIER_TRACE") != nullptr;
};

}  // namespace argus::verifier::engine

#endif  // ARGUS_VERIFIER_WALKER_H_
