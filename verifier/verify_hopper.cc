// verifier/verify_hopper.cc: the engine's Hopper part — mbarrier phases as
// functions of the iteration, TMA loads, wgmma groups and the checks they
// bring (see engine.h and docs/verifier.md, "Hopper").
#include <algorithm>
#include <cstdio>
#include <functional>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status.h"
#include "verifier/engine.h"

namespace argus::verifier::engine {

// ---- Hopper: mbarriers, TMA and wgmma -----------------------------------------
//
// The abstract domain of an mbarrier phase: every mbarrier op (and TMA load)
// sits in a loop nest whose iterations, linearized to N, execute it for
// N >= v, on barrier index (N + c) mod S, so it acts in round (N - v) / S of
// that barrier. A phase completes when its round's arrivals (and bytes) are
// in; a wait in its own round r with parity r + delta (delta 0, or -1 for the
// "fresh barrier counts as a completed parity-1 phase" idiom) observes phase
// r + delta. Happens-before between roles is derived from these functions:
// "phase q of X[b] completed before point P" holds when a wait before P (same
// iteration) observed it (Know0), or observed a phase of another barrier whose
// arrivals came after a wait that observed it (one hop through another
// thread, Know). Everything else about these ops is `unsupported`.

void Engine::FreeInstVars(const expr& e, std::set<unsigned>* out) {
  std::set<unsigned> seen;
  std::function<void(const expr&)> go = [&](const expr& x) {
    if (!seen.insert(x.id()).second) return;
    if (x.is_const()) {
      if (inst_ids_.count(x.id())) out->insert(x.id());
      return;
    }
    if (x.is_app()) {
      for (unsigned i = 0; i < x.num_args(); ++i) go(x.arg(i));
    } else if (x.is_quantifier()) {
      go(x.body());
    }
  };
  go(e);
}

std::vector<expr> Engine::NestValues(const MbOp& m, const expr& n) {
  std::vector<expr> out;
  size_t d = m.nest.size();
  for (size_t i = 0; i < d; ++i) {
    expr p = I(1);
    for (size_t j = i + 1; j < d; ++j) p = p * *loops_[m.nest[j]].trip;
    const LoopInfo& li = loops_[m.nest[i]];
    expr ni = i == 0 ? n / p : z3::mod(n / p, *li.trip);
    out.push_back((*li.lo + ni * I(li.step)).simplify());
  }
  return out;
}

Engine::Subst Engine::At(const MbOp& m, const expr& n, std::optional<expr> tid) {
  Subst s(c_);
  auto vals = NestValues(m, n);
  for (size_t i = 0; i < m.nest.size(); ++i) {
    s.from.push_back(*loops_[m.nest[i]].var);
    s.to.push_back(vals[i]);
  }
  if (tid) {
    s.from.push_back(tid_base_);
    s.to.push_back(*tid);
  }
  return s;
}

bool Engine::Analyze(MbOp& m) {
  if (m.state) return m.state > 0;
  auto fail = [&](const std::string& why) {
    m.state = -1;
    m.why = why;
    return false;
  };
  std::set<unsigned> idx;
  FreeInstVars(*m.index, &idx);
  size_t d = m.loops.size();
  if (m.kind == MbOp::kTma) {
    // Loops that only repeat TMA issues (no mbarrier operation, the index
    // does not move) are repetitions within one round; with none left the
    // load is one-shot (a Q tile loaded once in KD column blocks).
    while (d > 0 && !loops_[m.loops[d - 1]].has_mbar_sync &&
           !idx.count(loops_[m.loops[d - 1]].var->id()))
      --d;
  }
  m.nest.assign(m.loops.begin(), m.loops.begin() + d);
  m.reps.assign(m.loops.begin() + d, m.loops.end());
  std::set<unsigned> allowed = {tid_base_.id()};
  for (int l : m.loops) allowed.insert(loops_[l].var->id());
  auto only = [&](const expr& e, const std::set<unsigned>& ok) {
    std::set<unsigned> fv;
    FreeInstVars(e, &fv);
    for (unsigned v : fv)
      if (!ok.count(v)) return false;
    return true;
  };
  std::set<unsigned> none;
  for (int l : m.reps) {
    auto t = loops_[l].trip->simplify();
    int64_t tv;
    if (!t.is_numeral_i64(tv))
      return fail("a loop repeating TMA loads whose trip count is not a constant");
    m.rep_count *= tv;
  }
  for (size_t i = 1; i < m.nest.size(); ++i) {
    if (!only(*loops_[m.nest[i]].trip, none) || !only(*loops_[m.nest[i]].lo, none))
      return fail("an inner loop whose bounds depend on an outer loop");
  }
  {
    std::set<unsigned> fv;
    if (m.bytes) FreeInstVars(*m.bytes, &fv);
    if (fv.count(tid_base_.id())) return fail("a byte count that depends on the thread");
  }
  for (const auto& t : {m.index, m.parity, m.bytes, m.pc}) {
    if (t && !only(*t, allowed))
      return fail(
          "a barrier index, parity, byte count or guard that depends on a value the verifier "
          "does not follow as a function of the iteration (e.g. a loop-carried phase variable)");
  }
  expr n = I(0), total = I(1);
  for (size_t i = 0; i < m.nest.size(); ++i) {
    const LoopInfo& li = loops_[m.nest[i]];
    n = n * *li.trip + (*li.var - *li.lo) / I(li.step);
    total = total * *li.trip;
  }
  m.n_own = n.simplify();
  m.total = total.simplify();
  // The threads that execute it, and the iterations they execute it in
  // (one enumeration per guard: the ops of one branch share it).
  auto cached = executors_.find(m.pc->id());
  if (cached == executors_.end()) {
    Executors ex;
    for (int64_t t = 0; t < f_.threads && ex.why.empty(); ++t) {
      z3::expr_vector from(c_), to(c_);
      from.push_back(tid_base_);
      to.push_back(I(t));
      expr r = fixed_dims_(const_cast<expr&>(*m.pc).substitute(from, to)).simplify();
      if (r.is_false()) continue;
      if (!ex.resid) {
        ex.resid = r;
      } else if (!z3::eq(*ex.resid, r)) {
        ex.why = "threads execute it in different iterations (a thread-dependent guard)";
      }
      ex.threads.push_back(t);
    }
    if (ex.threads.empty()) ex.why = "no thread executes it";
    cached = executors_.emplace(m.pc->id(), ex).first;
  }
  if (!cached->second.why.empty()) return fail(cached->second.why);
  std::optional<expr> resid = cached->second.resid;
  m.executors = cached->second.threads;
  // v: the first iteration that executes it.
  Subst reps0(c_);
  for (int l : m.reps) {
    reps0.from.push_back(*loops_[l].var);
    reps0.to.push_back(*loops_[l].lo);
  }
  int64_t limit = 64;
  bool found = false;
  auto holds = [&](const expr& e) {
    expr r = fixed_dims_(e).simplify();
    if (r.is_true() || r.is_false()) return r.is_true();
    auto p = ProveIn(e);
    return p.ok() && p->verdict == Verdict::kProved;
  };
  expr ranges = c_.bool_val(true);
  for (int l : m.loops) ranges = ranges && *loops_[l].range;
  for (int64_t v = 0; v < limit && !found; ++v) {
    Subst at = At(m, I(v), std::nullopt);
    if (holds(z3::implies(at(reps0(ranges)), at(reps0(*resid))))) {
      m.v = v;
      found = true;
    }
  }
  if (!found) return fail("no iteration among the first 64 executes it");
  auto valid = [&](const expr& e) {
    auto r = ProveIn(e);
    return r.ok() && r->verdict == Verdict::kProved;
  };
  int64_t S = bars_[m.bar].count;
  m.resid = reps0(*resid);
  // The index written as E % S: E, the sequence number.
  std::optional<expr> mod_arg;
  {
    expr ix = *m.index;
    int64_t sv;
    if (ix.is_app() && ix.decl().decl_kind() == Z3_OP_MOD && ix.num_args() == 2 &&
        fixed_dims_(ix.arg(1)).simplify().is_numeral_i64(sv) && sv == S)
      mod_arg = ix.arg(0);
  }
  if (m.nest.empty()) {
    // One-shot (outside its role's loops: a peeled first or last pipeline
    // iteration, or a tile loaded once): one execution, N = 0, whose sequence
    // number is E for an index E % S, else the index itself; E may be a
    // run-time term of the block (`(nkv - 1) % S`), never of the thread.
    expr g = fixed_dims_(mod_arg ? *mod_arg : *m.index).simplify();
    if (!only(g, none))
      return fail("a one-shot mbarrier operation whose barrier index depends on the thread");
    int64_t gv;
    bool numeral = g.is_numeral_i64(gv);
    if (!valid(*m.index == z3::mod(g, I(S))))
      return fail("its barrier index is not its sequence number % the barrier count");
    if (m.kind != MbOp::kWait) {
      m.ga = 1;
      if (numeral) {
        m.gc = m.g_first = gv;
      } else {
        m.gc_sym = g;
      }
      m.state = 1;
      return true;
    }
    m.seq0 = g;
    if (m.parity) {
      m.parity = fixed_dims_(*m.parity).simplify();
      if (!only(*m.parity, none)) return fail("a parity that depends on the thread");
    }
    return WaitFamily(m, numeral, fail);
  }
  if (m.kind != MbOp::kWait) {
    // Its place in the arrival sequence: the index is G % S with G affine in
    // N (G = N + c when the index is written otherwise), executed wherever
    // its guard holds; the sequence checks (CheckMbarriers) make the rounds.
    expr idx = *m.index;
    expr g = *m.n_own;
    bool has_g = false;
    if (idx.is_app() && idx.decl().decl_kind() == Z3_OP_MOD && idx.num_args() == 2) {
      int64_t sv;
      if (fixed_dims_(idx.arg(1)).simplify().is_numeral_i64(sv) && sv == S) {
        g = idx.arg(0);
        has_g = true;
      }
    }
    int64_t g0v, g1v;
    expr e0 = fixed_dims_(At(m, I(0), std::nullopt)(g)).simplify();
    expr e1 = fixed_dims_(At(m, I(1), std::nullopt)(g)).simplify();
    if (!e0.is_numeral_i64(g0v) || !e1.is_numeral_i64(g1v) || g1v - g0v <= 0)
      return fail(
          "its barrier index is not (an increasing affine function of the iteration) % "
          "the barrier count");
    m.ga = g1v - g0v;
    m.gc = g0v;
    if (!valid(z3::implies(ranges, g == I(m.ga) * *m.n_own + I(m.gc))))
      return fail(
          "its barrier index is not (an affine function of the iteration) % the barrier "
          "count");
    if (!has_g && !valid(z3::implies(ranges, idx == z3::mod(*m.n_own, I(S)))))
      return fail("its barrier index is not (iteration + constant) % the barrier count");
    m.g_first = m.ga * m.v + m.gc;
    m.state = 1;
    return true;
  }
  if (!valid(z3::implies(ranges, *resid == (*m.n_own >= I(m.v)))))
    return fail("the iterations that execute it are not all those from some iteration on");
  {
    // A wait written over a sequence number (index = E % S) must see every
    // number in turn: E = N + c. Otherwise it skips phases (e.g. ping-pong
    // consumers), which the own-count model of its phase does not cover.
    expr idx = *m.index;
    if (idx.is_app() && idx.decl().decl_kind() == Z3_OP_MOD && idx.num_args() == 2) {
      expr e0 = fixed_dims_(At(m, I(m.v), std::nullopt)(idx.arg(0))).simplify();
      int64_t ev;
      if (!e0.is_numeral_i64(ev) || !valid(z3::implies(ranges && *m.n_own >= I(m.v),
                                                       idx.arg(0) == *m.n_own - I(m.v) + I(ev))))
        return fail(
            "a wait that skips phases of its barrier (its iterations are not consecutive "
            "in the barrier's sequence)");
    }
  }
  expr i0 = fixed_dims_(At(m, I(m.v), std::nullopt)(*m.index)).simplify();
  int64_t iv;
  if (!i0.is_numeral_i64(iv)) return fail("its first barrier index is not a constant");
  m.c = ((iv - m.v) % S + S) % S;
  if (!valid(
          z3::implies(ranges && *m.n_own >= I(m.v), *m.index == z3::mod(*m.n_own + I(m.c), I(S)))))
    return fail("its barrier index is not (iteration + constant) % the barrier count");
  int64_t ev = iv;
  if (mod_arg) {
    expr e0 = fixed_dims_(At(m, I(m.v), std::nullopt)(*mod_arg)).simplify();
    if (!e0.is_numeral_i64(ev)) return fail("its first sequence number is not a constant");
  }
  m.seq0 = I(ev);
  return WaitFamily(m, true, fail);
}

// A wait's family: the waits of the same threads on the same barrier array
// (a peeled first wait, the loop's, a peeled last one). Their sequence
// numbers must run from the family's first one on, each once, in program
// order (CheckWaitFamilies proves it); the phase a wait observes is its
// sequence number's round, its parity convention that of the family's first
// wait (0, or 1 for the "fresh barrier counts as a completed phase" idiom).
bool Engine::WaitFamily(MbOp& m, bool numeral,
                        const std::function<bool(const std::string&)>& fail) {
  const MbOp* base = numeral ? &m : nullptr;
  for (MbOp& o : mbops_) {
    if (&o == &m || o.kind != MbOp::kWait || o.bar != m.bar || o.state <= 0 ||
        o.executors != m.executors)
      continue;
    int64_t ov;
    if (!o.seq0->simplify().is_numeral_i64(ov)) continue;
    int64_t bv = 0;
    if (!base || (base->seq0->simplify().is_numeral_i64(bv) && ov < bv)) base = &o;
  }
  if (!base) return fail("the first wait of its barrier family has a run-time sequence number");
  if (base == &m) {
    expr p0 = fixed_dims_(At(m, I(m.v), std::nullopt)(*m.parity)).simplify();
    int64_t pv;
    if (!p0.is_numeral_i64(pv)) return fail("the parity of its first wait is not a constant");
    m.delta = (pv % 2 == 0) ? 0 : -1;
    m.seq0->simplify().is_numeral_i64(m.wbase);
  } else {
    m.delta = base->delta;
    m.wbase = base->wbase;
  }
  m.state = 1;
  return true;
}

bool Engine::Parallel(const MbOp& w, const MbOp& cw) {
  auto key = std::make_pair(&w, &cw);
  auto it = parallel_.find(key);
  if (it != parallel_.end()) return it->second;
  bool ok = w.nest.size() == cw.nest.size();
  for (size_t i = 0; ok && i < w.nest.size(); ++i) {
    const LoopInfo& a = loops_[w.nest[i]];
    const LoopInfo& b = loops_[cw.nest[i]];
    ok = a.step == b.step && z3::eq(a.trip->simplify(), b.trip->simplify()) &&
         z3::eq(a.lo->simplify(), b.lo->simplify());
  }
  if (ok) {
    auto r =
        ProveIn(z3::implies(*cw.pc, Covers(w, *cw.index, Target(cw, *cw.n_own)) &&
                                        Inv(w, *cw.index, Target(cw, *cw.n_own)) == *cw.n_own));
    ok = r.ok() && r->verdict == Verdict::kProved;
  }
  parallel_[key] = ok;
  return ok;
}

expr Engine::CoversSeq(const MbOp& a, const expr& g) {
  expr n = (g - Gc(a)) / I(a.ga);
  return z3::mod(g - Gc(a), I(a.ga)) == 0 && n >= 0 && n < *a.total &&
         At(a, n, std::nullopt)(*a.resid);
}

Engine::Subst Engine::LastInner(const MbOp& w, size_t depth) {
  Subst s(c_);
  for (size_t i = depth; i < w.loops.size(); ++i) {
    const LoopInfo& li = loops_[w.loops[i]];
    s.from.push_back(*li.var);
    s.to.push_back(*li.lo + (*li.trip - 1) * I(li.step));
  }
  return s;
}

expr Engine::Know0(const std::vector<int>& loops, int pos, const Subst& sub, int bar, const expr& b,
                   const expr& q) {
  expr k = c_.bool_val(false);
  for (MbOp& w : mbops_) {
    if (w.kind != MbOp::kWait || w.bar != bar || !Analyze(w)) continue;
    if (w.loops == loops && !w.nest.empty()) {
      // The most recent execution of w on index b, in this iteration (when w
      // precedes the point) or an earlier one: its target is the highest.
      int64_t S = bars_[w.bar].count;
      expr n = sub(*w.n_own);
      expr last = w.pos < pos ? n : n - 1;
      expr np = last - z3::mod(last + I(w.c) - b, I(S));
      // (the thread executes w: its guard at w's first iteration, where the
      // iteration part holds by Analyze)
      expr member = sub(At(w, I(w.v), std::nullopt)(*w.pc));
      k = k || (np >= I(w.v) && member && q <= Target(w, np));
    } else if (Before(w, loops, pos)) {
      k = k || (sub(*w.pc) && sub(*w.index) == b && q <= sub(Target(w, *w.n_own)));
    } else if (w.pos < pos && w.loops.size() > loops.size() &&
               std::equal(loops.begin(), loops.end(), w.loops.begin())) {
      // w sits in inner loops that finished before the point: its most
      // recent execution on index b, counting from their last iteration.
      int64_t S = bars_[w.bar].count;
      Subst last = LastInner(w, loops.size());
      expr inner_ran = c_.bool_val(true);
      for (size_t i = loops.size(); i < w.loops.size(); ++i)
        inner_ran = inner_ran && *loops_[w.loops[i]].trip > 0;
      expr nl = sub(last(*w.n_own));
      expr np = nl - z3::mod(nl + I(w.c) - b, I(S));
      expr member = sub(At(w, I(w.v), std::nullopt)(*w.pc));
      k = k || (inner_ran && np >= I(w.v) && member && q <= Target(w, np));
    }
  }
  return k;
}

expr Engine::Know(const std::vector<int>& loops, int pos, const Subst& sub, int bar, const expr& b,
                  const expr& q) {
  expr k = Know0(loops, pos, sub, bar, b, q);
  for (MbOp& w : mbops_) {
    if (w.kind != MbOp::kWait || !Analyze(w)) continue;
    // w before the point in this iteration, or (its last iteration) in inner
    // loops that finished before it
    Subst last(c_);
    expr ran = c_.bool_val(true);
    if (!Before(w, loops, pos)) {
      if (!(w.pos < pos && w.loops.size() > loops.size() &&
            std::equal(loops.begin(), loops.end(), w.loops.begin())))
        continue;
      last = LastInner(w, loops.size());
      for (size_t i = loops.size(); i < w.loops.size(); ++i)
        ran = ran && *loops_[w.loops[i]].trip > 0;
    }
    expr g = ran && sub(last(*w.pc)), t = sub(last(Target(w, *w.n_own))), bw = sub(last(*w.index));
    for (MbOp& a : mbops_) {
      if (a.bar != w.bar || (a.kind != MbOp::kArrive && a.kind != MbOp::kArriveTx) || !Analyze(a))
        continue;
      expr m = Inv(a, bw, t);
      Subst sa = At(a, m, I(a.executors[0]));
      k = k || (g && Covers(a, bw, t) && Know0(a.loops, a.pos, sa, bar, b, q));
    }
  }
  return k;
}

absl::Status Engine::DoMbarOp(const Op& op) {
  Val& bv = vals_[op.operands[0]];
  if (bv.k != Val::kBar) {
    Unsupported(op, "an mbarrier the verifier does not track");
    return absl::OkStatus();
  }
  MbOp& m = NewMbOp(op,
                    op.code == OpCode::kMbarWait       ? MbOp::kWait
                    : op.code == OpCode::kMbarArriveTx ? MbOp::kArriveTx
                                                       : MbOp::kArrive,
                    bv.bar, op.operands[1]);
  if (m.kind == MbOp::kWait) m.parity = IntOf(op.operands[2]);
  if (m.kind == MbOp::kArriveTx) m.bytes = IntOf(op.operands[2]);
  // Analyzed where it is met: a phase the model cannot follow stops the
  // verification here rather than after the walk.
  if (!Analyze(m)) Unsupported(op, m.why);
  return absl::OkStatus();
}

MbOp& Engine::NewMbOp(const Op& op, MbOp::Kind kind, int bar, int index_var) {
  mbops_.emplace_back();
  MbOp& m = mbops_.back();
  m.kind = kind;
  m.op = &op;
  m.pos = pos_;
  m.bar = bar;
  m.loops = loop_stack_;
  m.index = IntOf(index_var);
  m.pc = *pc_;
  m.ctx = ctx_;
  m.wg_covered = *wg_covered_;
  const BarArray& ba = bars_[bar];
  expr bad = *pc_ && (*m.index < 0 || *m.index >= I(ba.count));
  auto watch = BaseWatch();
  watch.emplace_back("@i", *m.index);
  Obligation("oob", op, bad, watch, [&](const ProofResult& r, Finding* f) {
    f->message = absl::StrCat("mbarrier index ", M(r, "@i"), " outside '", ba.name, "' (", ba.count,
                              " barriers)");
    f->cex.expected = absl::StrCat("an index in [0, ", ba.count, ")");
    f->cex.actual = absl::StrCat(ba.name, "[", M(r, "@i"), "]");
  });
  return m;
}

absl::Status Engine::DoTma(const Op& op) {
  Val& d = vals_[op.operands[1]];
  Val& bv = vals_[op.operands[2]];
  if (op.ints.size() < 3 || op.operands.size() < 6 || bv.k != Val::kBar || d.k != Val::kView ||
      !d.view.ok || d.view.space != dsl::Space::kShared || d.view.ext.size() != 2) {
    Unsupported(op, "a TMA load the verifier cannot follow (its destination or barrier)");
    return absl::OkStatus();
  }
  View sv = TmaTileView(op, 4);
  std::vector<int64_t> ext;
  expr range(c_);
  std::vector<expr> el = ElemVars(d.view, "t", &ext, &range);
  expr g = *pc_ && range;
  auto sc = Coords(sv, el);
  auto dc = Coords(d.view, el);
  // The tile must lie inside the tensor (docs/dsl.md: the DSL makes the
  // hardware's zero fill an error) and fit its shared buffer.
  CheckOob(op, sv, sc, g, el);
  CheckOob(op, d.view, dc, g, el);
  Event& e = NewEvent(op, d.view, true);
  e.async = true;
  e.tma = true;
  e.elem = el;
  e.elem_ext = ext;
  e.coords = dc;
  e.guard = g;
  e.thread = tid_;
  FillInverse(e, d.view);
  e.value.kind = 1;
  e.value.tensor = sv.base;
  e.value.c = sc;
  tma_allocs_.insert(d.view.base);
  int eid = e.id;
  e.mb = static_cast<int>(mbops_.size());
  MbOp& m = NewMbOp(op, MbOp::kTma, bv.bar, op.operands[3]);
  m.bytes = I(op.ints[1] * op.ints[2] * dsl::DTypeBytes(f_.tensors[sv.base].dtype));
  m.event = eid;
  if (!Analyze(m)) Unsupported(op, m.why);
  return absl::OkStatus();
}

absl::Status Engine::DoWgmmaOperand(const Op& op) {
  Val& s = vals_[op.operands[0]];
  Val out;
  out.k = Val::kFrag;
  const dsl::ir::Type& ty = f_.vars[op.result].type;
  dsl::FragGeom g = ty.frag.Geom();
  bool isA = ty.frag.role == dsl::FragRole::kA;
  if (s.k != Val::kView || !s.view.ok || s.view.space != dsl::Space::kShared) {
    Unsupported(op, "a wgmma operand from a view the verifier does not track");
    vals_[op.result] = out;
    return absl::OkStatus();
  }
  int rows = ty.frag.rows, cols = ty.frag.cols;
  expr i = Fresh("w0"), j = Fresh("w1");
  expr range = i >= 0 && i < I(rows) && j >= 0 && j < I(cols);
  std::vector<expr> idx;
  if (s.view.ext.size() == 2) {
    idx = {i, j};
  } else if (s.view.ext.size() == 3 && !isA) {
    idx = {j / I(64), i, z3::mod(j, I(64))};  // (BN/64, BK, 64) column blocks
  } else {
    Unsupported(op, "a wgmma operand view of this rank");
    vals_[op.result] = out;
    return absl::OkStatus();
  }
  auto coords = Coords(s.view, idx);
  // The warp group that consumes element (i, j) (the symbolic thread is one
  // of its threads): A rows and B columns are split like the accumulator.
  expr other = Fresh("wgfree");
  expr wg(c_);
  int wm = std::max(1, ty.frag.wm), wn = std::max(1, ty.frag.wn);
  int bm = std::max(1, ty.frag.bm), bn = std::max(1, ty.frag.bn);
  if (isA) {
    wg = I(ty.frag.first) + (i / I(std::max(1, bm / wm))) * I(wn) + other;
    range = range && other >= 0 && other < I(wn);
  } else {
    wg = I(ty.frag.first) + other * I(wn) + j / I(std::max(1, bn / wn));
    range = range && other >= 0 && other < I(wm);
  }
  expr guard = *pc_ && range && tid_base_ / I(128) == wg;
  CheckOob(op, s.view, coords, guard, {i, j});
  Event& e = NewEvent(op, s.view, false);
  e.elem = {i, j};
  e.coords = coords;
  e.guard = guard;
  e.thread = tid_;
  e.wgmma_read = true;
  out.read_event = e.id;
  wg_operand_acc_[op.result] = op.operands[1];
  (void)g;
  CheckRead(e);
  vals_[op.result] = out;
  return absl::OkStatus();
}

void Engine::DoNamedBarrier(const Op& op) {
  const expr id = IntOf(op.operands[0]);
  named_.push_back(NamedBar{&op, *pc_, id, op.ints.empty() ? 0 : op.ints[0]});
  // warpgroup_barrier() takes ids 1 .. threads / 128.
  bool wg_bar = false;
  std::function<void(const Block&)> scan = [&](const Block& b) {
    for (const Op& o : b) {
      wg_bar |= o.code == OpCode::kWarpgroupBarrier;
      for (const Block& r : o.regions) scan(r);
    }
  };
  scan(f_.body);
  const int64_t lo = wg_bar ? f_.threads / 128 + 1 : 1;
  auto iw = BaseWatch();
  iw.emplace_back("@id", id);
  Obligation("oob", op, *pc_ && (id < I(lo) || id > I(15)), iw,
             [&](const ProofResult& r, Finding* f) {
               f->message = absl::StrCat("named barrier id ", M(r, "@id"), " outside ", lo, "..15",
                                         wg_bar ? " (warpgroup_barrier() uses 1.." : "",
                                         wg_bar ? absl::StrCat(lo - 1, ")") : "");
               f->cex.expected = absl::StrCat("an id in ", lo, "..15");
               f->cex.actual = absl::StrCat("id ", M(r, "@id"));
             });
}

// Each id is a barrier of `n` threads: the threads that sync or arrive on it
// (enumerated: per thread, its guard and id) must be exactly n, all with the
// same count — fewer never complete a generation (deadlock), more complete it
// early. (The generations' order — which sync meets which arrive — is not
// followed: a hang is not a data-flow error, and the interpreter reports it.)
void Engine::CheckNamedBarriers() {
  if (named_.empty()) return;
  struct Use {
    std::set<int64_t> threads, counts;
    const NamedBar* first = nullptr;
  };
  std::map<int64_t, Use> ids;
  for (const NamedBar& nb : named_) {
    for (int64_t t = 0; t < f_.threads; ++t) {
      z3::expr_vector from(c_), to(c_);
      from.push_back(tid_base_);
      to.push_back(I(t));
      expr g = fixed_dims_(const_cast<expr&>(nb.pc).substitute(from, to)).simplify();
      if (g.is_false()) continue;
      expr idt = fixed_dims_(const_cast<expr&>(nb.id).substitute(from, to)).simplify();
      int64_t iv;
      if (!idt.is_numeral_i64(iv))
        return Unsupported(*nb.op, "a named barrier id that is not a constant per thread");
      Use& u = ids[iv];
      u.threads.insert(t);
      u.counts.insert(nb.n);
      if (!u.first) u.first = &nb;
    }
  }
  for (const auto& [id, u] : ids) {
    rep_->obligations++;
    const int64_t n = *u.counts.begin();
    std::string why;
    if (u.counts.size() > 1) {
      why = absl::StrCat("named barrier ", id, " is used with different thread counts (",
                         absl::StrJoin(u.counts, ", "), ")");
    } else if (static_cast<int64_t>(u.threads.size()) != n) {
      why = absl::StrCat("named barrier ", id, " counts ", n, " threads per generation, but ",
                         u.threads.size(), " threads sync or arrive on it",
                         static_cast<int64_t>(u.threads.size()) < n
                             ? " (a generation never completes: deadlock)"
                             : " (a generation completes before all of them arrived)");
    }
    if (why.empty()) {
      rep_->proved++;
      continue;
    }
    Finding f;
    f.check = "named_barrier_count";
    f.message = why;
    f.loc = u.first->op->loc;
    f.source_line = Src(u.first->op->loc);
    f.has_cex = true;
    f.cex.block.assign(blk_.size(), 0);
    f.cex.thread = *u.threads.begin();
    f.cex.warp = f.cex.thread / f_.warp_size;
    f.cex.lane = f.cex.thread % f_.warp_size;
    f.cex.expected = absl::StrCat(n, " threads on barrier ", id);
    f.cex.actual = absl::StrCat(u.threads.size(), " threads (", *u.threads.begin(), "..",
                                *u.threads.rbegin(), ")");
    rep_->findings.push_back(f);
  }
}

void Engine::CheckWarpgroupUniform(const Op& op, const char* what, const dsl::FragGeom* g,
                                   bool uniform) {
  std::map<unsigned, expr> pins;
  for (int l : loop_stack_) pins.emplace(loops_[l].var->id(), *loops_[l].var);
  Inst in = MakeInst(pins);
  expr t2 = Sub(in, tid_base_);
  expr wg = tid_base_ / I(128);
  expr bad = uniform ? *pc_ && t2 >= 0 && t2 < I(f_.threads) && t2 / I(128) == wg && !Sub(in, *pc_)
                     : c_.bool_val(false);
  expr outside = c_.bool_val(false);
  if (g) outside = *pc_ && (wg < I(g->first) || wg >= I(g->first + g->wm * g->wn));
  auto watch = BaseWatch();
  watch.emplace_back("@t2", t2);
  watch.emplace_back("@out", outside);
  Obligation(
      "warpgroup_divergence", op, bad || outside, watch, [&](const ProofResult& r, Finding* f) {
        if (M(r, "@out")) {
          f->message =
              absl::StrCat(what, " executed by a warp group that holds no part of its accumulator");
          return;
        }
        f->message = absl::StrCat(what,
                                  " is warp-group collective, but only some threads of the "
                                  "warp group reach it");
        int64_t t = M(r, "@t2");
        f->cex.other = absl::StrCat("thread ", t, " (warp ", t / f_.warp_size, ", lane ",
                                    t % f_.warp_size, ") does not reach it");
      });
}

absl::Status Engine::DoWgmma(const Op& op) {
  const dsl::ir::Type& at = f_.vars[op.operands[0]].type;
  std::optional<dsl::FragGeom> g;
  if (at.is_frag()) g = at.frag.Geom();
  CheckWarpgroupUniform(op, "wgmma", g ? &*g : nullptr);
  for (int k = 1; k <= 2; ++k) {
    Val& x = vals_[op.operands[k]];
    if (x.k == Val::kFrag && x.read_event >= 0) events_[x.read_event].wg_group = *wg_commit_;
  }
  acc_group_.insert_or_assign(op.operands[0], *wg_commit_);
  if (reg_vars_.count(op.operands[1])) acc_group_.insert_or_assign(op.operands[1], *wg_commit_);
  // Tags flow as through mma (fragment math): the operands' values are those
  // of their reads (the reads' windows and waits are checked on their
  // events), a register A operand's K coordinate is its source's column tag.
  DoMma(op);
  return absl::OkStatus();
}

void Engine::CheckAccRead(const Op& op, int acc, bool write) {
  auto it = acc_group_.find(acc);
  if (it == acc_group_.end()) return;
  // A register A operand (to_operand) is read by its wgmmas until they
  // complete: reading it is fine, rewriting it is not.
  const bool reg = reg_vars_.count(acc) > 0;
  if (reg != write) return;
  expr bad = *pc_ && it->second >= *wg_covered_;
  auto watch = BaseWatch();
  watch.emplace_back("@g", it->second);
  watch.emplace_back("@cov", *wg_covered_);
  Obligation(
      reg ? "wgmma_operand_overwrite" : "wgmma_read_before_wait", op, bad, watch,
      [&](const ProofResult& r, Finding* f) {
        f->message =
            reg ? absl::StrCat("register operand '", f_.vars[acc].name,
                               "' rewritten while a wgmma that reads it may still be in flight (no "
                               "wgmma_wait covers that wgmma)")
                : absl::StrCat("accumulator '", f_.vars[acc].name,
                               "' read while a wgmma on it may still be in flight (no wgmma_wait "
                               "covers its last wgmma)");
        f->cex.expected = absl::StrCat("wgmma group ", M(r, "@g"), " complete");
        f->cex.actual = absl::StrCat("only groups < ", M(r, "@cov"), " known complete");
      });
}

std::vector<Cand> Engine::TmaCandidates(const Event& rd, const std::vector<expr>& L) {
  std::vector<Cand> out;
  std::vector<MbOp*> ws;
  for (MbOp& m : mbops_) {
    if (m.kind == MbOp::kTma && events_[m.event].alloc == rd.alloc && Analyze(m)) ws.push_back(&m);
  }
  // The reader's last wait on the barrier the TMA completes on: the phase it
  // observes is the newest round whose data has landed.
  auto cover = [&](const MbOp& w) -> MbOp* {
    MbOp* best = nullptr;
    for (MbOp& x : mbops_) {
      if (x.kind == MbOp::kWait && x.bar == w.bar && Before(x, rd.loops, rd.pos) && Analyze(x))
        best = &x;
    }
    return best;
  };
  bool newest_parallel = true;  // every fill's newest landed round is the reader's iteration
  expr newest_pc = c_.bool_val(true);
  auto pins_at = [&](const MbOp& w, const expr& n) {
    std::map<unsigned, expr> pins;
    auto vals = NestValues(w, n);
    for (size_t i = 0; i < w.nest.size(); ++i) pins.emplace(loops_[w.nest[i]].var->id(), vals[i]);
    return pins;
  };
  for (int d = 0; d <= opt_.window; ++d) {
    for (auto it = ws.rbegin(); it != ws.rend(); ++it) {
      const MbOp& w = **it;
      MbOp* cw = cover(w);
      if (!cw) {
        newest_parallel = false;
        continue;
      }
      if (d == 0) {
        newest_parallel = newest_parallel && Parallel(w, *cw);
        newest_pc = newest_pc && *cw->pc;
      }
      expr t = Target(*cw, *cw->n_own) - I(d);
      expr m = Inv(w, *cw->index, t);
      auto pins = pins_at(w, m);
      if (d == 0 && Parallel(w, *cw)) {
        // the newest landed fill is the reader's own iteration: pin the
        // writer's loop variables to the reader's (keeps the query linear)
        pins.clear();
        for (size_t i = 0; i < w.nest.size(); ++i)
          pins.emplace(loops_[w.nest[i]].var->id(), *loops_[cw->nest[i]].var);
      }
      out.push_back(
          BuildCand(events_[w.event], L, pins, *cw->pc && Covers(w, *cw->index, t), true, {}));
    }
    if (d == 0 && !out.empty() && out.size() == ws.size() && newest_parallel) {
      // When the fills of the reader's own iteration (one, or a tile loaded
      // in 64-row boxes, one statement each) together cover every element
      // the read may touch, older fills cannot be the value: leave them out
      // of the queries.
      expr any = c_.bool_val(false);
      for (const Cand& c : out) any = any || c.excl;
      auto r = ProveIn(z3::implies(*rd.guard && newest_pc, any));
      if (r.ok() && r->verdict == Verdict::kProved) return out;
    }
  }
  for (MbOp* wp : ws) {
    const MbOp& w = *wp;
    MbOp* cw = cover(w);
    if (!cw) continue;
    expr t = Target(*cw, *cw->n_own);
    expr nf = Fresh("Nold");
    expr extra = *cw->pc && nf >= 0 && nf < *w.total && At(w, nf, std::nullopt)(*w.resid) &&
                 At(w, nf, std::nullopt)(*w.index) == *cw->index &&
                 Round(w, nf) <= t - I(opt_.window + 1);
    out.push_back(BuildCand(events_[w.event], L, pins_at(w, nf), extra, false, {nf}));
  }
  return out;
}

void Engine::CheckTmaRead(const Event& rd) {
  for (MbOp& w : mbops_) {
    if (w.kind != MbOp::kTma || events_[w.event].alloc != rd.alloc || !Analyze(w)) continue;
    const Event& we = events_[w.event];
    Inst in = MakeInst({});
    Subst si(c_);
    si.from = in.from;
    si.to = in.to;
    expr nw = si(*w.n_own), bw = si(*w.index), rw = Round(w, nw);
    expr cover = si(*we.guard);
    for (size_t d = 0; d < rd.coords.size(); ++d) cover = cover && si(we.coords[d]) == rd.coords[d];
    // landed: a wait of the reader observed the TMA's phase
    expr landed = c_.bool_val(false);
    for (MbOp& x : mbops_) {
      if (x.kind != MbOp::kWait || x.bar != w.bar || !Before(x, rd.loops, rd.pos) || !Analyze(x))
        continue;
      landed = landed || (*x.pc && *x.index == bw && rw <= Target(x, *x.n_own));
    }
    // released: before issuing, the producer waited for a phase that an
    // arrive after the read (after the wgmma that reads it completed) completes
    expr released = c_.bool_val(false);
    for (MbOp& p : mbops_) {
      if (p.kind != MbOp::kWait || !Before(p, we.loops, w.pos) || !Analyze(p)) continue;
      expr gp = si(*p.pc), tp = si(Target(p, *p.n_own)), bp = si(*p.index);
      for (MbOp& a : mbops_) {
        if (a.bar != p.bar || (a.kind != MbOp::kArrive && a.kind != MbOp::kArriveTx) || !Analyze(a))
          continue;
        expr m = Inv(a, bp, tp);
        expr base = gp && Covers(a, bp, tp);
        if (rd.wgmma_read && rd.wg_group) {
          std::map<int64_t, int64_t> wit;  // one arriving thread per warp group
          for (int64_t t : a.executors) wit.emplace(t / 128, t);
          for (const auto& [wg, t] : wit) {
            Subst sa = At(a, m, I(t));
            released = released || (base && sa(*a.pc) && I(wg) == tid_base_ / I(128) &&
                                    sa(*a.wg_covered) > *rd.wg_group);
          }
        } else if (a.loops == rd.loops) {
          Subst sa = At(a, m, *rd.thread);
          released = released || (base && sa(*a.pc) &&
                                  (m > *a.n_own || (m == *a.n_own && c_.bool_val(a.pos > rd.pos))));
        }
      }
    }
    expr bad = *rd.guard && cover && !landed && !released;
    // Which side is late: a fill of an iteration up to the reader's (in the
    // linearized iterations) should have landed; a later one should wait.
    expr nr = I(0);
    for (int l : rd.loops)
      nr = nr * *loops_[l].trip + (*loops_[l].var - *loops_[l].lo) / I(loops_[l].step);
    bool same_depth = rd.loops.size() == w.nest.size();
    expr early = same_depth ? nw <= nr : c_.bool_val(true);
    auto watch = BaseWatch();
    for (size_t j = 0; j < rd.elem.size(); ++j)
      watch.emplace_back(absl::StrCat("@e", j), rd.elem[j]);
    // the reader's last wait on this barrier array, for the report
    const MbOp* last = nullptr;
    for (MbOp& x : mbops_) {
      if (x.kind == MbOp::kWait && x.bar == w.bar && Before(x, rd.loops, rd.pos) && Analyze(x))
        last = &x;
    }
    if (last) {
      watch.emplace_back("@lt", Target(*last, *last->n_own));
      watch.emplace_back("@lb", *last->index);
    }
    watch.emplace_back("@bw", bw);
    watch.emplace_back("@rw", rw);
    for (int l : we.loops) watch.emplace_back("@w:" + loops_[l].name, si(*loops_[l].var));
    const BarArray& ba = bars_[w.bar];
    auto wit = [&](const ProofResult& r) {
      std::vector<std::string> wi;
      for (int l : we.loops)
        wi.push_back(absl::StrCat(loops_[l].name, "=", M(r, "@w:" + loops_[l].name)));
      return absl::StrJoin(wi, ",");
    };
    Obligation(
        "read_before_wait", *rd.op, bad && early, watch, [&](const ProofResult& r, Finding* f) {
          f->message = absl::StrCat("shared memory '", alloc_names_[rd.alloc],
                                    "' read before the TMA load that fills it has landed: no "
                                    "mbarrier_wait before the read observes phase ",
                                    M(r, "@rw"), " of ", ba.name, "[", M(r, "@bw"), "]");
          for (size_t j = 0; j < rd.elem.size(); ++j)
            f->cex.coordinates.push_back(M(r, absl::StrCat("@e", j)));
          f->cex.written_at = w.op->loc;
          f->cex.written_source = Src(w.op->loc);
          f->cex.written_iteration = wit(r);
          f->cex.expected =
              absl::StrCat("a wait that observes phase ", M(r, "@rw"), " of ", ba.name, "[",
                           M(r, "@bw"), "] (filled in iteration ", wit(r), ")");
          f->cex.actual =
              last ? absl::StrCat(
                         "the last wait before the read (line ", last->op->loc.line,
                         ") observes phase ", M(r, "@lt"), " of ", ba.name, "[", M(r, "@lb"), "]",
                         M(r, "@lt") < 0 ? " (none: parity 1 on a fresh barrier returns at once)"
                                         : "",
                         "; the data may still be in flight")
                   : "no wait on that barrier before the read; the data may still be in flight";
        });
    auto watch2 = watch;
    Obligation(
        "stage_overwrite", *w.op, bad && !early, watch2, [&](const ProofResult& r, Finding* f) {
          f->message = absl::StrCat(
              "TMA load refills '", alloc_names_[rd.alloc], "' (stage ", ba.name, "[", M(r, "@bw"),
              "], iteration ", wit(r),
              ") before its consumers released it: no mbarrier_wait before the load observes a "
              "phase completed by an arrive after the read at line ",
              rd.op->loc.line);
          f->cex.iterations.clear();
          for (int l : we.loops) f->cex.iterations[loops_[l].name] = M(r, "@w:" + loops_[l].name);
          std::vector<std::string> ri;
          for (int l : rd.loops)
            ri.push_back(absl::StrCat(loops_[l].name, "=", M(r, "@loop:" + loops_[l].name)));
          f->cex.other = absl::StrCat("read at line ", rd.op->loc.line, " in iteration ",
                                      absl::StrJoin(ri, ","), " (", Src(rd.op->loc), ")");
          f->cex.expected = "the load ordered after the readers' arrive on the empty barrier";
          f->cex.actual = "the load may overwrite the stage while it is read";
          for (size_t j = 0; j < rd.elem.size(); ++j)
            f->cex.coordinates.push_back(M(r, absl::StrCat("@e", j)));
        });
  }
  // No landed load covers the element at all.
  auto cands = TmaCandidates(rd, rd.coords);
  expr none = *rd.guard;
  for (const Cand& c : cands) none = none && !c.excl;
  auto watch = BaseWatch();
  for (size_t j = 0; j < rd.elem.size(); ++j) watch.emplace_back(absl::StrCat("@e", j), rd.elem[j]);
  Obligation("uninitialized_read", *rd.op, none, watch, [&](const ProofResult& r, Finding* f) {
    f->message = absl::StrCat("read of shared memory '", alloc_names_[rd.alloc],
                              "' that no TMA load observed by an mbarrier_wait before it fills");
    for (size_t j = 0; j < rd.elem.size(); ++j)
      f->cex.coordinates.push_back(M(r, absl::StrCat("@e", j)));
    f->cex.expected = "a TMA load whose phase a wait before the read observed";
    f->cex.actual = "uninitialized";
  });
}

void Engine::CheckProxyFence(const Event& rd, const std::vector<Cand>& cands) {
  expr prior = c_.bool_val(true), bad = c_.bool_val(false);
  auto watch = BaseWatch();
  for (size_t i = 0; i < cands.size(); ++i) {
    const Cand& c = cands[i];
    if (!c.w->tma && !c.w->is_virtual && c.w->field.empty()) {
      expr ok = c.fence_bar ? *c.fence_bar < *rd.bar : c_.bool_val(false);
      expr ind = *rd.guard && prior && c.body && !ok;
      watch.emplace_back(absl::StrCat("@pf", i), ind);
      bad = bad || ind;
    }
    if (c.window) prior = prior && !c.excl;
  }
  for (size_t j = 0; j < rd.elem.size(); ++j) watch.emplace_back(absl::StrCat("@e", j), rd.elem[j]);
  Obligation("proxy_fence", *rd.op, bad, watch, [&](const ProofResult& r, Finding* f) {
    f->message = absl::StrCat(
        "wgmma reads '", alloc_names_[rd.alloc],
        "' (through the async proxy) after ordinary stores without fence_proxy_async() between "
        "the stores and a barrier before the read");
    for (size_t j = 0; j < rd.elem.size(); ++j)
      f->cex.coordinates.push_back(M(r, absl::StrCat("@e", j)));
    for (size_t i = 0; i < cands.size(); ++i) {
      if (!M(r, absl::StrCat("@pf", i))) continue;
      f->cex.written_at = cands[i].w->op->loc;
      f->cex.written_source = Src(cands[i].w->op->loc);
      break;
    }
    f->cex.expected = "fence_proxy_async() after the write, then a barrier";
    f->cex.actual = "no fence between the ordinary store and the wgmma read";
  });
}

void Engine::FillerWatch(const MbOp& f, const expr& b, const expr& t, const std::string& key,
                         std::vector<std::pair<std::string, expr>>* watch) {
  expr n = Inv(f, b, t);
  auto vals = NestValues(f, n);
  watch->emplace_back(key + "#ok", z3::ite(Covers(f, b, t), I(1), I(0)));
  for (size_t i = 0; i < f.nest.size(); ++i)
    watch->emplace_back(absl::StrCat(key, ":", loops_[f.nest[i]].name), vals[i]);
}

std::string Engine::FillerText(const MbOp& f, const ProofResult& r, const std::string& key) {
  if (!M(r, key + "#ok")) return "no iteration";
  std::vector<std::string> it;
  for (int l : f.nest)
    it.push_back(absl::StrCat(loops_[l].name, "=", M(r, absl::StrCat(key, ":", loops_[l].name))));
  return absl::StrCat("iteration ", absl::StrJoin(it, ","));
}

// The families of waits (WaitFamily): each sequence number from the first
// on is waited for exactly once, in program order, so a wait's round is its
// sequence number's.
void Engine::CheckWaitFamilies() {
  std::map<std::pair<int, std::vector<int64_t>>, std::vector<MbOp*>> fams;
  for (MbOp& m : mbops_) {
    if (m.kind == MbOp::kWait && m.state > 0) fams[{m.bar, m.executors}].push_back(&m);
  }
  loop_stack_.clear();
  for (auto& [key, fam] : fams) {
    if (fam.size() < 2 || stopped_) continue;
    int64_t base = fam[0]->wbase;
    for (MbOp* m : fam) {
      int64_t v;
      if (m->seq0->simplify().is_numeral_i64(v)) base = std::min(base, v);
    }
    for (MbOp* m : fam) {
      if (m->wbase != base)
        return Unsupported(*m->op,
                           "a wait whose barrier family's first wait comes later in the program");
    }
    for (MbOp* a : fam) {
      for (MbOp* b : fam) {
        if (a->pos < b->pos && !a->nest.empty() && !b->nest.empty() && a->nest[0] == b->nest[0])
          return Unsupported(*b->op,
                             "two waits of the same threads on one barrier array in one loop");
      }
    }
    // executions: sequence number g of member m, at N = g - seq0 + v
    auto covers = [&](const MbOp& m, const expr& g) {
      expr n = g - *m.seq0 + I(m.v);
      return n >= I(m.v) && n < *m.total && At(m, n, std::nullopt)(*m.resid);
    };
    const BarArray& ba = bars_[key.first];
    expr g1 = Fresh("Gw"), g2 = Fresh("Gw");
    std::vector<std::pair<std::string, expr>> watch = {{"@g1", g1}, {"@g2", g2}};
    for (MbOp* a : fam) {
      for (MbOp* b : fam) {
        if (a == b || a->pos > b->pos) continue;
        Obligation("mbarrier_parity", *b->op, covers(*a, g1) && covers(*b, g2) && g1 >= g2, watch,
                   [&](const ProofResult& r, Finding* f) {
                     f->message = absl::StrCat(
                         "this wait and the earlier one at line ", a->op->loc.line, " on '",
                         ba.name, "' wait for sequence numbers ", M(r, "@g1"), " and ", M(r, "@g2"),
                         " out of order or twice: the phases they observe are not "
                         "the rounds their indexes name");
                   });
      }
    }
    expr any = c_.bool_val(false), before = c_.bool_val(false);
    for (MbOp* m : fam) {
      any = any || covers(*m, g1);
      before = before || covers(*m, g1 - 1);
    }
    Obligation("mbarrier_parity", *fam[0]->op, g1 > I(base) && any && !before, watch,
               [&](const ProofResult& r, Finding* f) {
                 f->message = absl::StrCat(
                     "the waits on '", ba.name, "' skip sequence number ", M(r, "@g1") - 1,
                     ": a phase no wait observes shifts every later wait's phase");
               });
  }
}

void Engine::CheckMbarriers() {
  std::set<int> skip;
  for (MbOp& m : mbops_) {
    if (!Analyze(m)) {
      Unsupported(*m.op, m.why);
      skip.insert(m.bar);
    }
  }
  if (stopped_) return;
  CheckWaitFamilies();
  if (stopped_) return;
  for (int alloc : tma_allocs_) {
    for (const Event& e : events_) {
      if (e.alloc == alloc && e.write && !e.tma && !e.is_virtual) {
        Unsupported(*e.op, "ordinary writes to a buffer that TMA loads also fill");
        break;
      }
      if (e.alloc == alloc && e.is_virtual && e.write) {
        Unsupported(*e.op, "tag()/reset_tags on a buffer that TMA loads fill");
        break;
      }
    }
  }
  // Two TMA loads in flight must not write the same element: writes to one
  // element come from the same barrier index in different rounds (ordered by
  // the round-ordering check below).
  for (size_t i = 0; i < mbops_.size(); ++i) {
    MbOp& w1 = mbops_[i];
    if (w1.kind != MbOp::kTma || skip.count(w1.bar)) continue;
    for (size_t j = i; j < mbops_.size(); ++j) {
      MbOp& w2 = mbops_[j];
      if (w2.kind != MbOp::kTma || skip.count(w2.bar)) continue;
      const Event& e1 = events_[w1.event];
      const Event& e2 = events_[w2.event];
      if (e1.alloc != e2.alloc) continue;
      Inst i1 = MakeInst({}), i2 = MakeInst({});
      expr bad = Sub(i1, *e1.guard) && Sub(i2, *e2.guard);
      for (size_t d = 0; d < e1.coords.size(); ++d)
        bad = bad && Sub(i1, e1.coords[d]) == Sub(i2, e2.coords[d]);
      if (i == j) {
        expr differ = c_.bool_val(false);
        for (int l : w1.loops)
          differ = differ || Sub(i1, *loops_[l].var) != Sub(i2, *loops_[l].var);
        bad = bad && differ;
      }
      expr n1 = Sub(i1, *w1.n_own), n2 = Sub(i2, *w2.n_own);
      expr ordered = c_.bool_val(w1.bar == w2.bar) && Sub(i1, *w1.index) == Sub(i2, *w2.index) &&
                     Round(w1, n1) != Round(w2, n2);
      loop_stack_.clear();
      std::vector<std::pair<std::string, expr>> watch;
      for (int l : w1.loops) watch.emplace_back("@1:" + loops_[l].name, Sub(i1, *loops_[l].var));
      for (int l : w2.loops) watch.emplace_back("@2:" + loops_[l].name, Sub(i2, *loops_[l].var));
      Obligation(
          "shared_race", *w2.op, bad && !ordered, watch, [&](const ProofResult& r, Finding* f) {
            auto it = [&](const MbOp& w, const char* k) {
              std::vector<std::string> v;
              for (int l : w.loops)
                v.push_back(
                    absl::StrCat(loops_[l].name, "=", M(r, absl::StrCat(k, loops_[l].name))));
              return absl::StrJoin(v, ",");
            };
            f->message =
                absl::StrCat("two TMA loads may be in flight writing the same element of '",
                             alloc_names_[e1.alloc], "' (not ordered by one barrier's phases)");
            f->cex.written_at = w1.op->loc;
            f->cex.written_source = Src(w1.op->loc);
            f->cex.written_iteration = it(w1, "@1:");
            f->cex.other = absl::StrCat("this load in iteration ", it(w2, "@2:"));
          });
    }
  }
  // Each array's arrival sequence starts at its earliest arrival.
  for (MbOp& m : mbops_) {
    if (m.kind == MbOp::kWait || skip.count(m.bar) || m.gc_sym) continue;
    auto& g0 = bars_[m.bar].g0;
    g0 = g0 ? std::min(*g0, m.g_first) : m.g_first;
  }
  for (MbOp& m : mbops_) {
    if (m.kind == MbOp::kWait || !m.gc_sym) continue;
    const auto& g0 = bars_[m.bar].g0;
    auto r = g0 ? ProveIn(*m.gc_sym >= I(*g0)) : absl::StatusOr<ProofResult>(ProofResult{});
    if (!r.ok() || r->verdict != Verdict::kProved)
      return Unsupported(*m.op,
                         "a one-shot arrival with a run-time sequence number that may come before "
                         "the barrier's first constant one");
  }
  for (size_t x = 0; x < bars_.size(); ++x) {
    if (skip.count(static_cast<int>(x))) continue;
    const BarArray& ba = bars_[x];
    std::vector<MbOp*> al, ws;
    for (MbOp& m : mbops_) {
      if (m.bar != static_cast<int>(x)) continue;
      (m.kind == MbOp::kWait ? ws : al).push_back(&m);
    }
    if (al.empty()) {
      for (MbOp* w : ws) {
        loop_stack_ = w->loops;
        Obligation("mbarrier_hang", *w->op, *w->pc && Target(*w, *w->n_own) >= 0, BaseWatch(),
                   [&](const ProofResult&, Finding* f) {
                     f->message =
                         absl::StrCat("waits on '", ba.name,
                                      "', which nothing arrives on: the wait never returns");
                   });
      }
      continue;
    }
    // Families: the arrive operations of one set of threads, and each TMA
    // load; each family must bring its arrival for every round in turn
    // (so that hardware phases, which count arrivals, are the rounds).
    std::vector<std::vector<MbOp*>> fams;
    for (MbOp* a : al) {
      bool placed = false;
      for (auto& fam : fams) {
        if (a->kind != MbOp::kTma && fam[0]->kind != MbOp::kTma &&
            fam[0]->executors == a->executors) {
          fam.push_back(a);
          placed = true;
          break;
        }
      }
      if (!placed) fams.push_back({a});
    }
    int64_t g0 = *bars_[x].g0;
    int64_t S = ba.count;
    loop_stack_.clear();
    auto any = [&](const std::vector<MbOp*>& fam, const expr& g) {
      expr e = c_.bool_val(false);
      for (MbOp* a : fam) e = e || CoversSeq(*a, g);
      return e;
    };
    for (auto& fam : fams) {
      expr g = Fresh("G");
      std::vector<std::pair<std::string, expr>> watch = {{"@g", g}};
      auto round_text = [&](const ProofResult& r) {
        int64_t gv = M(r, "@g");
        return absl::StrCat("round ", (gv - g0) / S, " of ", ba.name, "[", ((gv % S) + S) % S, "]");
      };
      for (size_t i = 0; i < fam.size(); ++i) {
        for (size_t j = i + 1; j < fam.size(); ++j) {
          Obligation("mbarrier_count", *fam[j]->op, CoversSeq(*fam[i], g) && CoversSeq(*fam[j], g),
                     watch, [&](const ProofResult& r, Finding* f) {
                       f->message = absl::StrCat("the same threads arrive twice in ", round_text(r),
                                                 " (here and at line ", fam[i]->op->loc.line, ")");
                     });
        }
      }
      Obligation("mbarrier_count", *fam[0]->op,
                 g >= I(g0 + S) && any(fam, g) && !any(fam, g - I(S)), watch,
                 [&](const ProofResult& r, Finding* f) {
                   f->message = absl::StrCat("these threads skip a round on '", ba.name,
                                             "': they arrive in ", round_text(r),
                                             " but not in the round before, so the barrier's "
                                             "phases no longer match its rounds");
                 });
    }
    const MbOp* first_arrive = nullptr;
    int64_t arrivals = 0;
    for (auto& fam : fams) {
      if (fam[0]->kind == MbOp::kTma) continue;
      if (!first_arrive) first_arrive = fam[0];
      arrivals += static_cast<int64_t>(fam[0]->executors.size());
    }
    if (arrivals != ba.arrivals) {
      Finding f;
      f.check = "mbarrier_count";
      const MbOp* at = first_arrive ? first_arrive : al[0];
      f.loc = at->op->loc;
      f.source_line = Src(at->op->loc);
      f.has_cex = true;
      f.cex.block.assign(blk_.size(), 0);
      f.cex.thread = at->executors.empty() ? 0 : at->executors[0];
      f.cex.warp = f.cex.thread / f_.warp_size;
      f.cex.lane = f.cex.thread % f_.warp_size;
      f.message = absl::StrCat(
          "'", ba.name, "' expects ", ba.arrivals, " arrivals per phase, but each round brings ",
          arrivals,
          arrivals < ba.arrivals ? " (its phases never complete)" : " (phases complete early)");
      f.cex.expected = absl::StrCat(ba.arrivals, " arrivals");
      f.cex.actual = absl::StrCat(arrivals, " arrivals");
      rep_->findings.push_back(f);
      rep_->obligations++;
    }
    // Transaction bytes: what a round's arrivals expect is what its TMA loads bring.
    const MbOp* tx_at = nullptr;
    for (MbOp* a : al) {
      if (a->kind == MbOp::kArriveTx && !tx_at) tx_at = a;
    }
    for (MbOp* a : al) {
      if (a->kind == MbOp::kTma && !tx_at) tx_at = a;
    }
    if (tx_at) {
      expr g = Fresh("G");
      expr want = I(0), got = I(0);
      for (MbOp* a : al) {
        int64_t k = static_cast<int64_t>(a->executors.size());
        expr n = (g - Gc(*a)) / I(a->ga);
        if (a->kind == MbOp::kArriveTx)
          want = want +
                 z3::ite(CoversSeq(*a, g), At(*a, n, I(a->executors[0]))(*a->bytes) * I(k), I(0));
        if (a->kind == MbOp::kTma)
          got = got + z3::ite(CoversSeq(*a, g), *a->bytes * I(a->rep_count * k), I(0));
      }
      expr in = c_.bool_val(false);
      for (auto& fam : fams) in = in || any(fam, g);
      std::vector<std::pair<std::string, expr>> watch = {{"@want", want}, {"@got", got}};
      Obligation("mbarrier_tx", *tx_at->op, in && want != got, watch,
                 [&](const ProofResult& r, Finding* f) {
                   f->message = absl::StrCat(
                       "'", ba.name, "' expects ", M(r, "@want"),
                       " transaction bytes per phase, but its TMA loads bring ", M(r, "@got"),
                       M(r, "@want") < M(r, "@got") ? " (the phase completes before the data lands)"
                                                    : " (the phase never completes)");
                   f->cex.expected = absl::StrCat(M(r, "@got"), " bytes");
                   f->cex.actual = absl::StrCat(M(r, "@want"), " bytes");
                 });
    }
    // Round ordering: round r's arrivals come after phase r - 1 completed.
    for (MbOp* a : al) {
      loop_stack_ = a->loops;
      expr r = Round(*a, *a->n_own);
      Subst id(c_);
      expr bad =
          *a->pc && r >= 1 && !Know(a->loops, a->pos, id, static_cast<int>(x), *a->index, r - 1);
      auto watch = BaseWatch();
      watch.emplace_back("@b", *a->index);
      watch.emplace_back("@r", r);
      Obligation("mbarrier_overrun", *a->op, bad, watch, [&](const ProofResult& m, Finding* f) {
        f->message = absl::StrCat(
            a->kind == MbOp::kTma ? "TMA load completing on " : "arrive on ", ba.name, "[",
            M(m, "@b"), "] for its phase ", M(m, "@r"), " is not ordered after phase ",
            M(m, "@r") - 1,
            " completed (no mbarrier_wait before it observes that phase, directly or through the "
            "other role's barrier)");
        f->cex.expected =
            absl::StrCat("phase ", M(m, "@r") - 1, " of ", ba.name, "[", M(m, "@b"), "] complete");
        f->cex.actual = "not ordered";
      });
    }
    const MbOp* filler = al[0];
    for (MbOp* a : al)
      if (a->kind == MbOp::kTma) {
        filler = a;
        break;
      }
    for (MbOp* w : ws) {
      loop_stack_ = w->loops;
      expr t = Target(*w, *w->n_own);
      // parity
      {
        auto watch = BaseWatch();
        watch.emplace_back("@b", *w->index);
        watch.emplace_back("@t", t);
        watch.emplace_back("@p", *w->parity);
        FillerWatch(*filler, *w->index, t, "@fe", &watch);
        FillerWatch(*filler, *w->index, t - 1, "@fa", &watch);
        Obligation("mbarrier_parity", *w->op, *w->pc && *w->parity != z3::mod(t, I(2)), watch,
                   [&](const ProofResult& r, Finding* f) {
                     int64_t tt = M(r, "@t");
                     f->message = absl::StrCat(
                         "mbarrier_wait on ", ba.name, "[", M(r, "@b"), "] with parity ",
                         M(r, "@p"), " observes the wrong phase: this wait must observe phase ", tt,
                         " (filled in ", FillerText(*filler, r, "@fe"), ")");
                     f->cex.expected = absl::StrCat(
                         "parity ", ((tt % 2) + 2) % 2, " (phase ", tt, " of ", ba.name, "[",
                         M(r, "@b"), "], filled in ", FillerText(*filler, r, "@fe"), ")");
                     f->cex.actual =
                         absl::StrCat("parity ", M(r, "@p"), " (returns once phase ", tt - 1,
                                      " completes, filled in ", FillerText(*filler, r, "@fa"), ")");
                   });
      }
      // liveness: every family brings its arrival of the observed phase
      {
        auto watch = BaseWatch();
        watch.emplace_back("@b", *w->index);
        watch.emplace_back("@t", t);
        for (auto& fam : fams) {
          expr some = c_.bool_val(false);
          for (MbOp* a : fam) some = some || Covers(*a, *w->index, t);
          const MbOp* a = fam[0];
          Obligation("mbarrier_hang", *w->op, *w->pc && t >= 0 && !some, watch,
                     [&](const ProofResult& r, Finding* f) {
                       f->message = absl::StrCat("waits for phase ", M(r, "@t"), " of ", ba.name,
                                                 "[", M(r, "@b"), "], which the ",
                                                 a->kind == MbOp::kTma ? "TMA load" : "arrive",
                                                 " at line ", a->op->loc.line,
                                                 " never completes: the wait never returns");
                     });
        }
      }
      for (MbOp* a : al) {
        expr m = Inv(*a, *w->index, t);
        auto watch = BaseWatch();
        watch.emplace_back("@b", *w->index);
        watch.emplace_back("@t", t);
        // deadlock: the arrive waits (in its own iteration) for something
        // this thread only provides after this wait
        if (a->nest == w->nest) {
          // the same loop: a waiting thread that is also an arriver must not
          // need its own later arrive
          bool shared = false;
          for (int64_t t : a->executors)
            shared |= std::find(w->executors.begin(), w->executors.end(), t) != w->executors.end();
          if (!shared) continue;
          expr later = m > *w->n_own || (m == *w->n_own && c_.bool_val(a->pos > w->pos));
          Obligation("mbarrier_hang", *w->op, *w->pc && Covers(*a, *w->index, t) && later, watch,
                     [&](const ProofResult& r, Finding* f) {
                       f->message = absl::StrCat(
                           "deadlock: this wait for phase ", M(r, "@t"), " of ", ba.name, "[",
                           M(r, "@b"), "] needs the arrive at line ", a->op->loc.line,
                           ", which the waiting threads only reach after this wait");
                     });
          continue;
        }
        Subst sa = At(*a, m, I(a->executors[0]));
        for (MbOp& w2 : mbops_) {
          if (w2.kind != MbOp::kWait || !Before(w2, a->loops, a->pos) || !Analyze(w2)) continue;
          expr t2 = sa(Target(w2, *w2.n_own)), b2 = sa(*w2.index), g2 = sa(*w2.pc);
          for (MbOp& a1 : mbops_) {
            if (a1.bar != w2.bar || a1.kind == MbOp::kWait || !Analyze(a1) || a1.nest != w->nest)
              continue;
            expr m1 = Inv(a1, b2, t2);
            expr c1 = Covers(a1, b2, t2);
            expr later = m1 > *w->n_own || (m1 == *w->n_own && c_.bool_val(a1.pos > w->pos));
            expr bad = *w->pc && Covers(*a, *w->index, t) && g2 && c1 && later;
            Obligation("mbarrier_hang", *w->op, bad, watch, [&](const ProofResult& r, Finding* f) {
              f->message =
                  absl::StrCat("deadlock: this wait for phase ", M(r, "@t"), " of ", ba.name, "[",
                               M(r, "@b"), "] needs the arrive at line ", a->op->loc.line,
                               ", which first waits (line ", w2.op->loc.line, ") for what line ",
                               a1.op->loc.line, " provides only after this wait");
            });
          }
        }
      }
    }
  }
  loop_stack_.clear();
}

}  // namespace argus::verifier::engine
