// verifier/engine.h: the verifier's abstract interpreter (internal to
// argus_verifier; verify.h is the interface).
//
// One symbolic thread walks the tile IR: scalars become Z3 terms, views maps
// from view indexes to base coordinates, shared-memory accesses events; loops
// are interpreted once at a symbolic iteration. verify.cc holds the engine's
// core (values, events, reads against their writers, races, tag assertions);
// verify_hopper.cc the Hopper part (mbarrier phases, TMA loads, wgmma groups).
//
// Thread safety: an Engine is used by one thread, for one kernel, once.
#ifndef ARGUS_VERIFIER_ENGINE_H_
#define ARGUS_VERIFIER_ENGINE_H_

#include <z3++.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "dsl/ir.h"
#include "verifier/arith_norm.h"
#include "verifier/report.h"
#include "verifier/solver.h"
#include "verifier/verify.h"

namespace argus::verifier::engine {

using dsl::Loc;
using dsl::ir::Block;
using dsl::ir::Function;
using dsl::ir::Op;
using dsl::ir::OpCode;
using z3::expr;

constexpr int kMaxRank = 4;

struct Tag {  // kind: 0 opaque, 1 data (tensor + coords), 2 custom value (c[0])
  int kind = 0;
  int tensor = -1;
  std::vector<expr> c;
};

// Fragment math (verify_frag.cc): what an accumulator element's value is
// made of. A contribution's tag (a row tag from an A operand, a column tag
// from a B operand), valid where `cond` holds; every alternative whose
// condition holds is a contribution (checks must hold for each).
struct TagAlt {
  expr cond;
  Tag tag;
  const Op* src = nullptr;                          // the write it comes from
  const Op* via = nullptr;                          // accumulators: the mma that brought it in
  bool exact = true;                                // from a window candidate (see Candidates)
  std::vector<std::pair<std::string, expr>> iters;  // the writer's loop variables
};
struct TagSet {
  std::vector<TagAlt> alts;
  std::optional<expr> known;  // every contribution has a known tag (unset: true)
  // Contributions of earlier iterations of loop `first` that flowed in
  // through loop-carried variable `second` (unknown until the loop ends).
  std::set<std::pair<int, int>> carried;
};
// Tags of a fragment value over the engine's canonical element variables
// (fi_, fj_): rows from the A operands of the MMAs that produced it, columns
// from their B operands. Row vectors have rows only.
struct FragTags {
  TagSet rows, cols;
};

struct DimMap {
  bool fixed = true;
  int vdim = -1;  // view dim when !fixed
  std::optional<expr> off;
};

struct View {
  dsl::Space space = dsl::Space::kGlobal;
  int base = -1;  // tensor index / alloc index / -1 local
  std::vector<DimMap> map;
  std::vector<int64_t> ext;  // static extents (-1 dynamic)
  bool ok = false;
};

struct Val {
  enum K { kNone, kInt, kBool, kView, kFrag, kBar } k = kNone;
  int bar = -1;  // kBar: index into Engine::bars_
  std::optional<expr> e;
  // data tag of a scalar loaded from global
  int tensor = -1;
  std::vector<expr> coords;
  View view;
  int read_event = -1;  // fragments: the read of their source
  std::optional<dsl::FragGeom> geom;
  bool frag_global = false;
  std::optional<FragTags> ft;  // accumulators, row vectors, to_operand results
};

struct Event {
  int id = 0, alloc = -1;
  bool write = false, async = false, is_virtual = false;
  std::string field;  // "" data, "*" reset
  const Op* op = nullptr;
  int pos = 0;
  std::vector<int> loops;
  std::optional<expr> guard, thread, bar, commit;
  std::vector<expr> coords;
  std::vector<expr> elem;
  std::vector<int64_t> elem_ext;
  std::vector<int> elem_dim;  // alloc dim that elem j maps to (-1: none)
  std::vector<expr> elem_off;
  Tag value;
  bool has_wait = false;
  std::optional<expr> wait_commit, wait_bar;
  int64_t wait_n = 0;
  std::optional<dsl::FragGeom> geom;  // fragment reads
  // Hopper: a TMA write (its MbOp), a wgmma operand read (the wgmma group that
  // reads it asynchronously), the control context (ids of the path conditions
  // enclosing it) and, for ordinary shared writes, the barrier count at the
  // first fence_proxy_async after it in the same context.
  bool tma = false, wgmma_read = false;
  int mb = -1;
  std::optional<expr> wg_group, fence_bar;
  std::vector<unsigned> ctx;
};

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

struct LoopInfo {
  const Op* op;
  std::string name;
  std::optional<expr> var, lo, trip, range;
  int64_t step = 1;
  bool has_mbar_sync = false;  // contains mbarrier waits or arrives
  int pos_begin = 0, pos_end = 0;
};

struct Cand {
  const Event* w;
  expr body, excl;  // body: free writer vars; excl: closed (exists) form
  bool qf;
  Tag tag;
  std::optional<expr> commit, thread;
  std::vector<std::pair<std::string, expr>> iters;  // writer loop vars for the report
  bool window;
  std::optional<expr> fence_bar;  // the writer's fence_proxy_async (barrier count)
};

class Engine {
 public:
  Engine(const dsl::ir::Module& m, const Function& f, const VerifyOptions& o, Report* r)
      : mod_(m), f_(f), opt_(o), rep_(r), solver_(o.solver_timeout_ms), c_(solver_.ctx()) {}

  absl::Status Run();

 private:
  // ---- variables
  expr Fresh(const std::string& name, bool is_bool = false) {
    std::string n = absl::StrCat(name, "#", fresh_++);
    expr v = is_bool ? c_.bool_const(n.c_str()) : c_.int_const(n.c_str());
    inst_.push_back(v);
    inst_ids_.insert(v.id());
    return v;
  }
  expr I(int64_t v) { return c_.int_val(static_cast<int64_t>(v)); }

  // An instance: every per-thread variable renamed, some pinned.
  struct Inst {
    z3::expr_vector from, to;
    explicit Inst(z3::context& c) : from(c), to(c) {}
  };
  Inst MakeInst(const std::map<unsigned, expr>& pins) {
    Inst in(c_);
    int id = inst_count_++;
    for (const expr& v : inst_) {
      in.from.push_back(v);
      auto it = pins.find(v.id());
      if (it != pins.end()) {
        in.to.push_back(it->second);
      } else {
        std::string n = absl::StrCat(v.decl().name().str(), "!", id);
        in.to.push_back(v.is_bool() ? c_.bool_const(n.c_str()) : c_.int_const(n.c_str()));
      }
    }
    return in;
  }
  expr Sub(const Inst& in, const expr& e) {
    return const_cast<expr&>(e).substitute(in.from, in.to);
  }

  // ---- helpers
  std::string Src(Loc l) const { return std::string(mod_.source ? mod_.source->Line(l.line) : ""); }
  std::string Where(Loc l) const {
    return absl::StrCat(mod_.source ? mod_.source->name() : "", ":", l.line);
  }
  // A construct the verifier cannot follow: the kernel cannot be proved, so
  // the verification stops here (the rest of the walk and the checks after
  // it would only spend time on a verdict that stays unknown).
  void Unsupported(const Op& op, const std::string& what) {
    if (stopped_) return;
    if (deadline_hit_) {  // a query cut short by the deadline, not the construct
      Expired(op);
      return;
    }
    Finding f;
    f.severity = Severity::kUnknown;
    f.check = "unsupported";
    f.message =
        absl::StrCat("unsupported: ", dsl::ir::OpCodeName(op.code), " at ", Where(op.loc), ": ",
                     what, " (the verifier cannot prove this kernel; it stopped here)");
    f.loc = op.loc;
    f.source_line = Src(op.loc);
    rep_->findings.push_back(f);
    stopped_ = true;
  }
  // The request's deadline: once past it, one `unknown` finding names the
  // program point the engine had reached, and everything stops (the walk
  // checks it before every op, the checks after the walk before every
  // obligation). Returns whether the engine must stop.
  bool Expired(const Op& op) {
    if (stopped_) return true;
    if (!deadline_hit_ && (opt_.deadline_ms <= 0 || NowMs() <= deadline_)) return false;
    Finding f;
    f.severity = Severity::kUnknown;
    f.check = "deadline";
    f.message = absl::StrCat("unknown: deadline of ", opt_.deadline_ms, " ms reached at ",
                             Where(op.loc), " (", dsl::ir::OpCodeName(op.code),
                             "); the rest of the kernel was not checked");
    f.loc = op.loc;
    f.source_line = Src(op.loc);
    rep_->findings.push_back(f);
    stopped_ = true;
    return true;
  }
  // Solver::Prove with the per-obligation timeout cut to what is left of the
  // deadline (a query never runs past it).
  absl::StatusOr<ProofResult> ProveIn(const expr& ob,
                                      const std::vector<std::pair<std::string, expr>>& watch = {}) {
    unsigned t = opt_.solver_timeout_ms;
    if (opt_.deadline_ms > 0) {
      int64_t left = std::max<int64_t>(1, deadline_ - NowMs());
      if (left < static_cast<int64_t>(t)) t = static_cast<unsigned>(left);
    }
    solver_.set_timeout_ms(t);
    // Flat div/mod terms (arith_norm.h): the Hopper checks compose loop
    // nests and barrier rounds into nested ones that Z3 is slow on.
    auto r = solver_.Prove(NormalizeDivMod(ob.simplify()), facts_, watch);
    // An unknown under a timeout cut by the deadline is the deadline's.
    if (t < opt_.solver_timeout_ms && r.ok() && r->verdict == Verdict::kUnknown)
      deadline_hit_ = true;
    return r;
  }
  expr IntOf(int var) {
    Val& v = vals_[var];
    if (v.k == Val::kInt && v.e) return *v.e;
    if (v.k == Val::kBool && v.e) return z3::ite(*v.e, I(1), I(0));
    expr x = Fresh("opaque");
    return x;
  }
  expr BoolOf(int var) {
    Val& v = vals_[var];
    if (v.k == Val::kBool && v.e) return *v.e;
    if (v.k == Val::kInt && v.e) return *v.e != 0;
    return Fresh("cond", true);
  }
  bool IsIntType(const dsl::ir::Type& t) const {
    return t.is_scalar() && (dsl::IsInt(t.dtype) || t.dtype == dsl::DType::kBool);
  }
  void SetScalar(int var, std::optional<expr> e) {
    Val v;
    const dsl::ir::Type& t = f_.vars[var].type;
    if (e && t.is_scalar() && t.dtype == dsl::DType::kBool) {
      v.k = Val::kBool;
      v.e = e->is_bool() ? *e : (*e != 0);
    } else if (e && IsIntType(t)) {
      v.k = Val::kInt;
      v.e = e->is_bool() ? z3::ite(*e, I(1), I(0)) : *e;
    }
    vals_[var] = v;
  }
  void Havoc(int var) {
    const dsl::ir::Type& t = f_.vars[var].type;
    if (t.is_scalar() && t.dtype == dsl::DType::kBool) {
      SetScalar(var, Fresh(f_.vars[var].name.empty() ? "h" : f_.vars[var].name, true));
    } else if (IsIntType(t)) {
      SetScalar(var, Fresh(f_.vars[var].name.empty() ? "h" : f_.vars[var].name));
    } else if (t.is_scalar()) {
      vals_[var] = Val{};
    }  // views/fragments keep their value (re-bound before use in loops)
  }
  void Assigned(const Block& b, std::set<int>* out) {
    for (const Op& op : b) {
      if (op.result >= 0) out->insert(op.result);
      for (const Block& r : op.regions) Assigned(r, out);
    }
  }
  int CountOps(const Block& b, OpCode code, bool* in_if, bool* dynamic, bool under_if = false) {
    int n = 0;
    for (const Op& op : b) {
      if (op.code == code || (code == OpCode::kBarrier && op.code == OpCode::kBlockReduce)) {
        ++n;
        if (under_if) *in_if = true;
      }
      if (op.code == OpCode::kFor) {
        int inner = CountOps(op.regions[0], code, in_if, dynamic, under_if);
        if (inner) {
          auto lo = ConstIn(b, op.operands[0]), hi = ConstIn(b, op.operands[1]);
          if (!lo || !hi) {
            *dynamic = true;
          } else {
            int64_t st = op.ints.empty() ? 1 : op.ints[0];
            n += inner * std::max<int64_t>(0, (*hi - *lo + st - 1) / st);
          }
        }
      } else if (op.code == OpCode::kIf) {
        for (const Block& r : op.regions) n += CountOps(r, code, in_if, dynamic, true);
      } else if (op.code == OpCode::kWhile) {
        for (const Block& r : op.regions) {
          if (CountOps(r, code, in_if, dynamic, true)) *dynamic = true;
        }
      }
    }
    return n;
  }
  // ConstOf, or the literal of a kConst defining `var` in block `b` (bounds
  // of an inner loop, counted before the enclosing body is walked).
  std::optional<int64_t> ConstIn(const Block& b, int var) {
    for (const Op& o : b) {
      if (o.result == var && o.code == OpCode::kConst && !o.ints.empty()) return o.ints[0];
    }
    return ConstOf(var);
  }
  std::optional<int64_t> ConstOf(int var) {
    Val& v = vals_[var];
    if (v.k != Val::kInt || !v.e) return std::nullopt;
    expr s = v.e->simplify();
    int64_t x;
    if (s.is_numeral_i64(x)) return x;
    return std::nullopt;
  }

  // ---- views
  View BaseView(const dsl::ir::TensorParam& t, int idx) {
    View v;
    v.space = dsl::Space::kGlobal;
    v.base = idx;
    v.ok = true;
    for (size_t d = 0; d < t.shape.size(); ++d) {
      DimMap m;
      m.fixed = false;
      m.vdim = static_cast<int>(d);
      m.off = I(0);
      v.map.push_back(m);
      v.ext.push_back(-1);
    }
    return v;
  }
  // The global tile a TMA load or store moves: tensor op.ints[0], box
  // op.ints[1] x op.ints[2], box coordinates in operands first_coord and the
  // next one.
  View TmaTileView(const Op& op, size_t first_coord) {
    const int tensor = static_cast<int>(op.ints[0]);
    const int64_t box0 = op.ints[1], box1 = op.ints[2];
    View v = BaseView(f_.tensors[tensor], tensor);
    v.map[0].off = IntOf(op.operands[first_coord]) * I(box0);
    v.map[1].off = IntOf(op.operands[first_coord + 1]) * I(box1);
    v.ext = {box0, box1};
    return v;
  }
  expr SymExt(const dsl::ir::SymInt& s) {
    expr e = I(s.coeff);
    for (int d : s.syms) e = e * dim_[d];
    return e;
  }
  expr BaseExtent(const View& v, int d) {
    if (v.space == dsl::Space::kGlobal) return SymExt(f_.tensors[v.base].shape[d]);
    return I(allocs_[v.base].shape[d]);
  }
  // Base coordinates of view element `idx`.
  std::vector<expr> Coords(const View& v, const std::vector<expr>& idx) {
    std::vector<expr> out;
    for (const DimMap& m : v.map) out.push_back(m.fixed ? *m.off : *m.off + idx[m.vdim]);
    return out;
  }
  expr InBounds(const View& v, const std::vector<expr>& coords) {
    expr ok = c_.bool_val(true);
    for (size_t d = 0; d < coords.size(); ++d)
      ok = ok && coords[d] >= 0 && coords[d] < BaseExtent(v, d);
    return ok;
  }

  // ---- events
  Event& NewEvent(const Op& op, const View& v, bool write) {
    events_.emplace_back();
    Event& e = events_.back();
    e.id = static_cast<int>(events_.size()) - 1;
    e.alloc = v.base;
    e.write = write;
    e.op = &op;
    e.pos = pos_;
    e.loops = loop_stack_;
    e.bar = bar_;
    e.commit = commit_;
    e.thread = tid_;
    e.ctx = ctx_;
    e.has_wait = wait_.has_value();
    if (wait_) {
      e.wait_commit = wait_->commit;
      e.wait_bar = wait_->bar;
      e.wait_n = wait_->n;
    }
    return e;
  }
  // Elements of a whole view: fresh index vars with ranges.
  std::vector<expr> ElemVars(const View& v, const std::string& stem, std::vector<int64_t>* ext,
                             expr* range) {
    std::vector<expr> el;
    *range = c_.bool_val(true);
    for (size_t j = 0; j < v.ext.size(); ++j) {
      expr x = Fresh(absl::StrCat(stem, j));
      el.push_back(x);
      ext->push_back(v.ext[j]);
      *range = *range && x >= 0 && x < I(v.ext[j]);
    }
    return el;
  }
  void FillInverse(Event& e, const View& v) {
    e.elem_dim.assign(e.elem.size(), -1);
    e.elem_off.clear();
    for (size_t j = 0; j < e.elem.size(); ++j) e.elem_off.push_back(I(0));
    for (size_t d = 0; d < v.map.size(); ++d) {
      if (!v.map[d].fixed) {
        e.elem_dim[v.map[d].vdim] = static_cast<int>(d);
        e.elem_off[v.map[d].vdim] = *v.map[d].off;
      }
    }
  }

  // ---- checks
  void Obligation(const std::string& check, const Op& op, const expr& bad,
                  const std::vector<std::pair<std::string, expr>>& watch,
                  const std::function<void(const ProofResult&, Finding*)>& explain,
                  std::optional<expr> rest = std::nullopt) {
    if (Expired(op)) return;
    rep_->obligations++;
    auto r = ProveIn(!bad, watch);
    if (deadline_hit_ && Expired(op)) return;
    if (trace_ && r.ok()) {
      std::fprintf(stderr, "[verifier] %s %d:%d %s %.3fs\n", check.c_str(), op.loc.line, op.loc.col,
                   VerdictName(r->verdict), r->seconds);
    }
    auto unknown = [&](const std::string& why) {
      Finding f;
      f.severity = Severity::kUnknown;
      f.check = check;
      f.message = absl::StrCat("unknown: ", why);
      f.loc = op.loc;
      f.source_line = Src(op.loc);
      rep_->findings.push_back(f);
    };
    if (!r.ok()) return unknown(std::string(r.status().message()));
    if (r->verdict == Verdict::kProved && rest) {
      // `bad` covered the refutations that need no value older than the
      // window; `rest` adds those that do: widen the window before reporting.
      auto r2 = ProveIn(!*rest, watch);
      if (deadline_hit_ && Expired(op)) return;
      if (r2.ok() && r2->verdict == Verdict::kRefuted && opt_.window < 16) {
        needs_window = true;
        rep_->proved++;
        return;
      }
      r = std::move(r2);
      if (!r.ok()) return unknown(std::string(r.status().message()));
    }
    if (r->verdict == Verdict::kProved) {
      rep_->proved++;
      return;
    }
    Finding f;
    f.check = check;
    f.loc = op.loc;
    f.source_line = Src(op.loc);
    if (r->verdict == Verdict::kUnknown) {
      f.severity = Severity::kUnknown;
      f.message = absl::StrCat("unknown: the solver gave up (", r->reason, ")");
    } else {
      f.has_cex = true;
      FillThread(*r, &f.cex);
      explain(*r, &f);
    }
    rep_->findings.push_back(f);
  }
  std::vector<std::pair<std::string, expr>> BaseWatch() {
    std::vector<std::pair<std::string, expr>> w;
    w.emplace_back("@tid", tid_base_);
    for (size_t d = 0; d < blk_.size(); ++d) w.emplace_back(absl::StrCat("@b", d), blk_[d]);
    for (int l : loop_stack_) {
      w.emplace_back("@loop:" + loops_[l].name, *loops_[l].var);
      w.emplace_back(absl::StrCat("@n", l), (*loops_[l].var - *loops_[l].lo) / I(loops_[l].step));
    }
    return w;
  }
  // Every enclosing loop is within its first `window` iterations.
  expr Within() {
    expr w = c_.bool_val(true);
    for (int l : loop_stack_)
      w = w && (*loops_[l].var - *loops_[l].lo) / I(loops_[l].step) < I(opt_.window);
    return w;
  }
  void FillThread(const ProofResult& r, Counterexample* cx) {
    auto g = [&](const std::string& k) {
      auto it = r.model.find(k);
      return it == r.model.end() ? int64_t{0} : it->second;
    };
    cx->thread = g("@tid");
    cx->warp = cx->thread / f_.warp_size;
    cx->lane = cx->thread % f_.warp_size;
    for (size_t d = 0; d < blk_.size(); ++d) cx->block.push_back(g(absl::StrCat("@b", d)));
    for (const auto& [k, v] : r.model) {
      if (k.rfind("@loop:", 0) == 0) cx->iterations[k.substr(6)] = v;
    }
  }
  static int64_t M(const ProofResult& r, const std::string& k) {
    auto it = r.model.find(k);
    return it == r.model.end() ? 0 : it->second;
  }
  std::string TagText(const ProofResult& r, const std::string& p, const Tag& t,
                      const std::string& field) {
    if (t.kind == 2) return absl::StrCat(field, "=", M(r, absl::StrCat(p, 0)));
    if (t.kind == 0 && !field.empty())
      return absl::StrCat("no '", field, "' tag (never bound, or reset)");
    int tensor = t.tensor;
    if (t.kind != 1 || tensor < 0)
      return "no tensor tag (reset by reset_tags, or a computed value)";
    std::vector<int64_t> cs;
    for (size_t d = 0; d < f_.tensors[tensor].shape.size(); ++d)
      cs.push_back(M(r, absl::StrCat(p, d)));
    return absl::StrCat(f_.tensors[tensor].name, "(", absl::StrJoin(cs, ","), ")");
  }

  // Writers that may provide the value of alloc element `L` read by `rd`.
  std::vector<Cand> Candidates(const Event& rd, const std::vector<expr>& L,
                               const std::string& field);
  void CheckRead(const Event& rd);
  // After the body of loop `loop` is walked: a read in it whose element a
  // write later in the body may have written in an earlier iteration (its
  // value and checks were made before the walk reached that write).
  void CheckLoopCarriedWrites(int loop);
  expr IntBinary(dsl::ir::BinOp op, const expr& a, const expr& b);
  expr BoolBinary(dsl::ir::BinOp op, const expr& a, const expr& b);
  // The result of call `call` in function `caller`, whose integer and bool
  // arguments `scalar_of` gives (unset: unknown); through DeviceCallValue.
  std::optional<expr> CallValue(const Op& call, const dsl::ir::Function& caller,
                                const std::function<expr(int)>& scalar_of, int depth);
  // The result of a call of @device function `fn` (unset: unknown).
  std::optional<expr> DeviceCallValue(const dsl::ir::Function& fn,
                                      const std::vector<std::optional<expr>>& args, int depth);
  void CheckAssert(const Op& op);
  void CheckMmaK(const Op& op);
  struct KSide;
  void CheckMmaSides(const Op& op, const KSide& a, const KSide& b, const expr& i, const expr& kk,
                     const expr& j);
  TagSet IterationValue(int loop, const TagSet& before, const TagSet& body, bool last);
  // MMA K checks waiting for the end of a loop (operands carried from the
  // previous iteration), by loop.
  std::multimap<int, std::function<void(const std::map<int, FragTags>&)>> pending_k_;
  // ---- fragment math (verify_frag.cc)
  absl::Status DoFragMath(const Op& op);
  void DoMma(const Op& op);
  bool OperandSide(int var, bool is_a, const expr& r, const expr& c, KSide* s);
  TagSet Contributions(const Op& op, const KSide& s);
  TagSet Union(const TagSet& a, const TagSet& b);
  void FindWrittenTensors();
  void CarryBegin(int loop, const Block& body, std::map<int, FragTags>* saved);
  void CarryEnd(int loop, const std::map<int, FragTags>& saved);
  void MergeFragTags(const expr& cond, const std::vector<Val>& then_vals);
  void CheckRowReduceLayout(const Op& op, const dsl::FragGeom& g);
  void CheckToOperandLayout(const Op& op, const dsl::FragGeom& a, const dsl::FragGeom& acc);
  void LayoutVerdict(const Op& op, const std::string& check, const std::string& why);
  void CheckRaces();
  void CheckDivergence(const Op& op, const char* what);
  void CheckOob(const Op& op, const View& v, const std::vector<expr>& coords, expr guard,
                const std::vector<expr>& elem);

  absl::Status Walk(const Block& b);
  absl::Status Step(const Op& op);
  absl::Status DoCopy(const Op& op);
  absl::Status DoLoadFragment(const Op& op);
  expr FragThread(const dsl::FragGeom& g, const std::vector<expr>& el, expr* range);

  // ---- Hopper: mbarriers, TMA, wgmma (verify_hopper.cc-style section below)
  struct BarArray {
    std::string name;
    int64_t count = 1, arrivals = 1;
    const Op* op = nullptr;
    std::optional<int64_t> g0;  // first arrival sequence number (set after the walk)
  };
  // A substitution applied to another op's terms (its loop vars, its thread).
  struct Subst {
    z3::expr_vector from, to;
    explicit Subst(z3::context& c) : from(c), to(c) {}
    expr operator()(const expr& e) const {
      if (from.empty()) return e;
      return const_cast<expr&>(e).substitute(from, to);
    }
  };
  absl::Status DoMbarOp(const Op& op);
  MbOp& NewMbOp(const Op& op, MbOp::Kind kind, int bar, int index_var);
  absl::Status DoTma(const Op& op);
  // The TMA-store epilogue (verify_epilogue.cc): tma_store, its commit and
  // wait, warpgroup_barrier, the fences and fragment stores around them,
  // recorded during the walk and checked after it (CheckEpilogue).
  struct EpiOp {
    enum Kind { kWrite, kStore, kCommit, kWait, kWgBar, kFence } kind = kWrite;
    const Op* op = nullptr;
    int pos = 0;
    std::vector<int> loops;
    std::optional<expr> pc;
    View view;                          // kWrite: destination; kStore: shared source
    std::optional<expr> at_i, at_j;     // kWrite with at=
    std::optional<dsl::FragGeom> geom;  // kWrite
    int64_t n = 0;                      // kWait
    View gview;                         // kStore: the global tile
  };
  std::vector<EpiOp> epi_;
  // Tag flow to the stored tile: a proved assert_tag on a wgmma operand gives
  // the output row (A: first coordinate of the tag, a function of operand row
  // `param`) or column (B: second coordinate, of operand column `param`) that
  // the accumulator's row / column belongs to.
  struct OperandTag {
    std::optional<expr> param, coord;
    std::vector<int> loops;
  };
  std::map<int, int> wg_operand_acc_;                   // wgmma operand var -> accumulator var
  std::map<std::pair<int, bool>, OperandTag> op_tags_;  // (accumulator, is A) -> its tag
  // An elementwise fragment value (silu(g) * u) -> the accumulators its
  // element (i, j) is made of, element (i, j) each: tag flow checks where a
  // store puts it by their operand tags.
  std::map<int, std::set<int>> ew_accs_;
  // tag_flow: element (R, C) of fragment `stored`, written to global
  // coordinates `gc` of tensor `tname` where `guard` holds (inside `loops`),
  // lands where its accumulators' proved operand tags put it.
  void CheckPlacement(const Op& store, int stored, const expr& R, const expr& C,
                      const std::vector<expr>& gc, const std::string& tname, const expr& guard,
                      const std::vector<int>& loops, const Op* written_at);
  void RecordOperandTag(int var, const std::vector<expr>& idx, const Tag& t);
  absl::Status DoEpilogue(const Op& op);
  void RecordEpi(const Op& op, EpiOp::Kind kind);
  void CheckEpilogue();
  // The linearized iteration number of `loops` (outer trip counts free, inner
  // ones constant), in the variables of `sub`; nullopt when not linear.
  std::optional<expr> EpiIter(const std::vector<int>& loops, const Inst* in);
  // Named barriers (bar.sync / bar.arrive id, n; verify_hopper.cc): ordering
  // only — the data-flow checks ignore the order they give (every hand-off
  // must go through barrier() or an mbarrier, so ignoring it can only add
  // false alarms); checked: whole warp groups reach them (Step), ids clear
  // of warpgroup_barrier()'s, and the threads that use an id are its count.
  struct NamedBar {
    const Op* op;
    expr pc, id;
    int64_t n;
  };
  std::vector<NamedBar> named_;
  void DoNamedBarrier(const Op& op);
  void CheckNamedBarriers();
  absl::Status DoWgmmaOperand(const Op& op);
  absl::Status DoWgmma(const Op& op);
  void CheckWarpgroupUniform(const Op& op, const char* what, const dsl::FragGeom* g,
                             bool uniform = true);
  // An accumulator read (or, `write`, a register A operand rewritten) while
  // the wgmma that writes (reads) it may be in flight.
  void CheckAccRead(const Op& op, int acc, bool write = false);
  std::set<int> reg_vars_;  // vars assigned by to_operand (register A operands)
  bool Analyze(MbOp& m);
  struct Executors {  // of a guard (path condition): Analyze
    std::optional<expr> resid;
    std::vector<int64_t> threads;
    std::string why;  // not a uniform set of iterations
  };
  std::map<unsigned, Executors> executors_;  // by the guard's term id (kept alive by its MbOps)
  bool WaitFamily(MbOp& m, bool numeral, const std::function<bool(const std::string&)>& fail);
  void CheckWaitFamilies();
  void FreeInstVars(const expr& e, std::set<unsigned>* out);
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
  expr CoversSeq(const MbOp& a, const expr& g);
  expr Covers(const MbOp& a, const expr& b, const expr& t) {
    return t >= 0 && CoversSeq(a, SeqOf(a, b, t));
  }
  Subst LastInner(const MbOp& w, size_t depth);
  // The fill that wait `cw` observes is always in `cw`'s own iteration, in a
  // loop nest of the same shape as TMA load `w`'s.
  bool Parallel(const MbOp& w, const MbOp& cw);
  std::map<std::pair<const MbOp*, const MbOp*>, bool> parallel_;
  bool Before(const MbOp& w, const std::vector<int>& loops, int pos) const {
    if (w.pos >= pos || w.loops.size() > loops.size()) return false;
    for (size_t i = 0; i < w.loops.size(); ++i)
      if (w.loops[i] != loops[i]) return false;
    return true;
  }
  expr Know0(const std::vector<int>& loops, int pos, const Subst& sub, int bar, const expr& b,
             const expr& q);
  expr Know(const std::vector<int>& loops, int pos, const Subst& sub, int bar, const expr& b,
            const expr& q);
  std::vector<Cand> TmaCandidates(const Event& rd, const std::vector<expr>& L);
  Cand BuildCand(const Event& w, const std::vector<expr>& L, const std::map<unsigned, expr>& pins,
                 expr extra, bool window, std::vector<expr> bind);
  bool post_ = false;  // in the checks after the walk
  void CheckMbarriers();
  void CheckTmaRead(const Event& rd);
  void CheckProxyFence(const Event& rd, const std::vector<Cand>& cands);
  std::string BarText(const MbOp& m, const ProofResult& r, const std::string& key);
  void FillerWatch(const MbOp& f, const expr& b, const expr& t, const std::string& key,
                   std::vector<std::pair<std::string, expr>>* watch);
  std::string FillerText(const MbOp& f, const ProofResult& r, const std::string& key);

  const dsl::ir::Module& mod_;
  const Function& f_;
  const VerifyOptions& opt_;
  Report* rep_;
  Solver solver_;
  z3::context& c_;
  int fresh_ = 0, inst_count_ = 0, pos_ = 0;
  std::vector<expr> inst_;  // per-thread / per-iteration variables
  std::vector<expr> facts_;
  std::vector<Val> vals_;
  std::vector<expr> dim_;
  std::vector<expr> blk_, grid_;
  std::optional<expr> tid_, pc_, bar_, commit_;
  expr tid_base_{c_};
  expr fi_{c_}, fj_{c_};  // canonical fragment element (row, col) of FragTags
  std::vector<dsl::ir::Layout> allocs_;
  std::vector<std::string> alloc_names_;
  std::deque<Event> events_;
  std::vector<LoopInfo> loops_;
  std::vector<int> loop_stack_;
  struct Wait {
    expr commit, bar;
    int64_t n;
  };
  std::optional<Wait> wait_;
  bool counts_ok_ = true;
  // Hopper state.
  std::vector<BarArray> bars_;
  std::deque<MbOp> mbops_;
  std::set<int> tma_allocs_;
  std::set<int> written_tensors_;    // tensor indices some op writes (FindWrittenTensors)
  bool has_tma_ = false;             // the kernel issues TMA loads: reads checked at the end
  std::vector<int> deferred_reads_;  // events
  std::optional<expr> wg_commit_, wg_covered_;  // wgmma groups committed / known complete
  std::map<int, expr> acc_group_;               // acc var -> group of its last wgmma (-1: none)
  std::vector<unsigned> ctx_;                   // ids of the enclosing path conditions
  std::vector<expr> ctx_keep_;                  // keeps those terms (and their ids) alive
  int in_while_ = 0;
  struct WgWait {
    int pos;
    std::vector<int> loops;
    expr bar, covered;
  };
  std::vector<WgWait> wg_waits_;
  Subst fixed_dims_{c_};  // the dims fixed by the options, as values
  std::set<unsigned> inst_ids_;

 public:
  // A refutation relied on a value older than the exact window: rerun wider.
  bool needs_window = false;

 private:
  bool stopped_ = false;       // deadline reached or unsupported construct: stop
  bool deadline_hit_ = false;  // a solver query ran out of the deadline's time
  int64_t deadline_ = NowMs() + opt_.deadline_ms;

 public:
  // The request's deadline as an absolute time (NowMs), when the engine is
  // one of several runs of one request (the window widening reruns).
  void set_deadline_at(int64_t at_ms) { deadline_ = at_ms; }
  static int64_t NowMs() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }

 private:
  bool trace_ = std::getenv("ARGUS_VERIFIER_TRACE") != nullptr;
};

}  // namespace argus::verifier::engine

#endif  // ARGUS_VERIFIER_ENGINE_H_
