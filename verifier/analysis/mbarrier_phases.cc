// verifier/analysis/mbarrier_phases.cc: the mbarrier phase model — each
// operation's phase function of the iteration, and the happens-before it
// derives (see mbarrier_phases.h; its checks: mbarrier_checks.cc).
#include "verifier/analysis/mbarrier_phases.h"

#include <algorithm>
#include <functional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace argus::verifier::engine {

void MbarrierPhases::Before(const Op& op) {
  if (op.code != OpCode::kMbarArrive && op.code != OpCode::kMbarArriveTx &&
      op.code != OpCode::kMbarWait)
    return;
  Val& bv = w_.vals()[op.operands[0]];
  if (bv.k != Val::kBar) {
    Unsupported(op, "an mbarrier the verifier does not track");
    return;
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
}

MbOp& MbarrierPhases::NewMbOp(const Op& op, MbOp::Kind kind, int bar, int index_var) {
  mbops_.emplace_back();
  MbOp& m = mbops_.back();
  m.kind = kind;
  m.op = &op;
  m.pos = w_.pos();
  m.bar = bar;
  m.loops = w_.loop_stack();
  m.index = IntOf(index_var);
  m.pc = w_.pc();
  m.ctx = w_.ctx_ids();
  m.wg_covered = wgmma_.covered();
  const BarArray& ba = bars_[bar];
  expr bad = w_.pc() && (*m.index < 0 || *m.index >= I(ba.count));
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

void MbarrierPhases::After(const Op& op) {
  if (op.code == OpCode::kMbarrier) {
    BarArray b;
    b.name = f_.vars[op.result].name;
    b.count = op.ints.empty() ? 1 : op.ints[0];
    b.arrivals = op.ints.size() > 1 ? op.ints[1] : 1;
    b.op = &op;
    bars_.push_back(b);
    return;
  }
  if (op.code != OpCode::kTmaLoad) return;
  // The walker recorded the load's write event last.
  const Event& e = w_.events().back();
  const int bar = w_.vals()[op.operands[2]].bar;
  tma_allocs_.insert(e.alloc);
  const int eid = e.id;
  MbOp& m = NewMbOp(op, MbOp::kTma, bar, op.operands[3]);
  m.bytes = I(op.ints[1] * op.ints[2] * dsl::DTypeBytes(f_.tensors[e.value.tensor].dtype));
  m.event = eid;
  if (!Analyze(m)) Unsupported(op, m.why);
}

bool MbarrierPhases::OnlyVars(const expr& e, const std::set<unsigned>& ok) {
  std::set<unsigned> fv;
  w_.FreeInstVars(e, &fv);
  for (unsigned v : fv)
    if (!ok.count(v)) return false;
  return true;
}

bool MbarrierPhases::Valid(const expr& e) {
  auto r = ProveIn(e);
  return r.ok() && r->verdict == Verdict::kProved;
}

bool MbarrierPhases::HasMbarSync(int loop) {
  auto it = mbar_sync_.find(loop);
  if (it != mbar_sync_.end()) return it->second;
  bool sync = false;
  std::function<void(const Block&)> scan = [&](const Block& b) {
    for (const Op& o : b) {
      if (o.code == OpCode::kMbarWait || o.code == OpCode::kMbarArrive ||
          o.code == OpCode::kMbarArriveTx)
        sync = true;
      for (const Block& r : o.regions) scan(r);
    }
  };
  scan(w_.loops()[loop].op->regions[0]);
  return mbar_sync_[loop] = sync;
}

std::vector<expr> MbarrierPhases::NestValues(const MbOp& m, const expr& n) {
  std::vector<expr> out;
  size_t d = m.nest.size();
  for (size_t i = 0; i < d; ++i) {
    expr p = I(1);
    for (size_t j = i + 1; j < d; ++j) p = p * *w_.loops()[m.nest[j]].trip;
    const LoopInfo& li = w_.loops()[m.nest[i]];
    expr ni = i == 0 ? n / p : z3::mod(n / p, *li.trip);
    out.push_back((*li.lo + ni * I(li.step)).simplify());
  }
  return out;
}

Subst MbarrierPhases::At(const MbOp& m, const expr& n, std::optional<expr> tid) {
  Subst s(c_);
  auto vals = NestValues(m, n);
  for (size_t i = 0; i < m.nest.size(); ++i) {
    s.from.push_back(*w_.loops()[m.nest[i]].var);
    s.to.push_back(vals[i]);
  }
  if (tid) {
    s.from.push_back(w_.tid_base());
    s.to.push_back(*tid);
  }
  return s;
}

bool MbarrierPhases::Analyze(MbOp& m) {
  if (m.state) return m.state > 0;
  std::set<unsigned> idx;
  w_.FreeInstVars(*m.index, &idx);
  size_t d = m.loops.size();
  if (m.kind == MbOp::kTma) {
    // Loops that only repeat TMA issues (no mbarrier operation, the index
    // does not move) are repetitions within one round; with none left the
    // load is one-shot (a Q tile loaded once in KD column blocks).
    while (d > 0 && !HasMbarSync(m.loops[d - 1]) &&
           !idx.count(w_.loops()[m.loops[d - 1]].var->id()))
      --d;
  }
  m.nest.assign(m.loops.begin(), m.loops.begin() + d);
  m.reps.assign(m.loops.begin() + d, m.loops.end());
  std::set<unsigned> allowed = {w_.tid_base().id()};
  for (int l : m.loops) allowed.insert(w_.loops()[l].var->id());
  for (int l : m.reps) {
    auto t = w_.loops()[l].trip->simplify();
    int64_t tv;
    if (!t.is_numeral_i64(tv))
      return Fail(m, "a loop repeating TMA loads whose trip count is not a constant");
    m.rep_count *= tv;
  }
  for (size_t i = 1; i < m.nest.size(); ++i) {
    if (!OnlyVars(*w_.loops()[m.nest[i]].trip, {}) || !OnlyVars(*w_.loops()[m.nest[i]].lo, {}))
      return Fail(m, "an inner loop whose bounds depend on an outer loop");
  }
  {
    std::set<unsigned> fv;
    if (m.bytes) w_.FreeInstVars(*m.bytes, &fv);
    if (fv.count(w_.tid_base().id())) return Fail(m, "a byte count that depends on the thread");
  }
  for (const auto& t : {m.index, m.parity, m.bytes, m.pc}) {
    if (t && !OnlyVars(*t, allowed))
      return Fail(
          m,
          "a barrier index, parity, byte count or guard that depends on a value the verifier "
          "does not follow as a function of the iteration (e.g. a loop-carried phase variable)");
  }
  expr n = I(0), total = I(1);
  for (size_t i = 0; i < m.nest.size(); ++i) {
    const LoopInfo& li = w_.loops()[m.nest[i]];
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
      from.push_back(w_.tid_base());
      to.push_back(I(t));
      expr r = w_.fixed_dims()(const_cast<expr&>(*m.pc).substitute(from, to)).simplify();
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
  if (!cached->second.why.empty()) return Fail(m, cached->second.why);
  std::optional<expr> resid = cached->second.resid;
  m.executors = cached->second.threads;
  // v: the first iteration that executes it.
  Subst reps0(c_);
  for (int l : m.reps) {
    reps0.from.push_back(*w_.loops()[l].var);
    reps0.to.push_back(*w_.loops()[l].lo);
  }
  int64_t limit = 64;
  bool found = false;
  auto holds = [&](const expr& e) {
    expr r = w_.fixed_dims()(e).simplify();
    if (r.is_true() || r.is_false()) return r.is_true();
    auto p = ProveIn(e);
    return p.ok() && p->verdict == Verdict::kProved;
  };
  expr ranges = c_.bool_val(true);
  for (int l : m.loops) ranges = ranges && *w_.loops()[l].range;
  for (int64_t v = 0; v < limit && !found; ++v) {
    Subst at = At(m, I(v), std::nullopt);
    if (holds(z3::implies(at(reps0(ranges)), at(reps0(*resid))))) {
      m.v = v;
      found = true;
    }
  }
  if (!found) return Fail(m, "no iteration among the first 64 executes it");
  int64_t S = bars_[m.bar].count;
  m.resid = reps0(*resid);
  // The index written as E % S: E, the sequence number.
  std::optional<expr> mod_arg;
  {
    expr ix = *m.index;
    int64_t sv;
    if (ix.is_app() && ix.decl().decl_kind() == Z3_OP_MOD && ix.num_args() == 2 &&
        w_.fixed_dims()(ix.arg(1)).simplify().is_numeral_i64(sv) && sv == S)
      mod_arg = ix.arg(0);
  }
  if (m.nest.empty()) return AnalyzeOneShot(m, mod_arg);
  if (m.kind != MbOp::kWait) return AnalyzeArrival(m, ranges);
  return AnalyzeWait(m, *resid, ranges, mod_arg);
}

// One-shot (outside its role's loops: a peeled first or last pipeline
// iteration, or a tile loaded once): one execution, N = 0, whose sequence
// number is E for an index E % S, else the index itself; E may be a run-time
// term of the block (`(nkv - 1) % S`), never of the thread.
bool MbarrierPhases::AnalyzeOneShot(MbOp& m, const std::optional<expr>& mod_arg) {
  int64_t S = bars_[m.bar].count;
  // One-shot (outside its role's loops: a peeled first or last pipeline
  // iteration, or a tile loaded once): one execution, N = 0, whose sequence
  // number is E for an index E % S, else the index itself; E may be a
  // run-time term of the block (`(nkv - 1) % S`), never of the thread.
  expr g = w_.fixed_dims()(mod_arg ? *mod_arg : *m.index).simplify();
  if (!OnlyVars(g, {}))
    return Fail(m, "a one-shot mbarrier operation whose barrier index depends on the thread");
  int64_t gv;
  bool numeral = g.is_numeral_i64(gv);
  if (!Valid(*m.index == z3::mod(g, I(S))))
    return Fail(m, "its barrier index is not its sequence number % the barrier count");
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
    m.parity = w_.fixed_dims()(*m.parity).simplify();
    if (!OnlyVars(*m.parity, {})) return Fail(m, "a parity that depends on the thread");
  }
  return WaitFamily(m, numeral);
}

// An arrival's place in the arrival sequence: the index is G % S with G
// affine in N (G = N + c when the index is written otherwise), executed
// wherever its guard holds; the sequence checks (AfterWalk) make the rounds.
bool MbarrierPhases::AnalyzeArrival(MbOp& m, const expr& ranges) {
  int64_t S = bars_[m.bar].count;
  expr idx = *m.index;
  expr g = *m.n_own;
  bool has_g = false;
  if (idx.is_app() && idx.decl().decl_kind() == Z3_OP_MOD && idx.num_args() == 2) {
    int64_t sv;
    if (w_.fixed_dims()(idx.arg(1)).simplify().is_numeral_i64(sv) && sv == S) {
      g = idx.arg(0);
      has_g = true;
    }
  }
  int64_t g0v, g1v;
  expr e0 = w_.fixed_dims()(At(m, I(0), std::nullopt)(g)).simplify();
  expr e1 = w_.fixed_dims()(At(m, I(1), std::nullopt)(g)).simplify();
  if (!e0.is_numeral_i64(g0v) || !e1.is_numeral_i64(g1v) || g1v - g0v <= 0)
    return Fail(m,
                "its barrier index is not (an increasing affine function of the iteration) % "
                "the barrier count");
  m.ga = g1v - g0v;
  m.gc = g0v;
  if (!Valid(z3::implies(ranges, g == I(m.ga) * *m.n_own + I(m.gc))))
    return Fail(m,
                "its barrier index is not (an affine function of the iteration) % the barrier "
                "count");
  if (!has_g && !Valid(z3::implies(ranges, idx == z3::mod(*m.n_own, I(S)))))
    return Fail(m, "its barrier index is not (iteration + constant) % the barrier count");
  m.g_first = m.ga * m.v + m.gc;
  m.state = 1;
  return true;
}

bool MbarrierPhases::AnalyzeWait(MbOp& m, const expr& resid_e, const expr& ranges,
                                 const std::optional<expr>& mod_arg) {
  int64_t S = bars_[m.bar].count;
  const std::optional<expr> resid = resid_e;
  if (!Valid(z3::implies(ranges, *resid == (*m.n_own >= I(m.v)))))
    return Fail(m, "the iterations that execute it are not all those from some iteration on");
  {
    // A wait written over a sequence number (index = E % S) must see every
    // number in turn: E = N + c. Otherwise it skips phases (e.g. ping-pong
    // consumers), which the own-count model of its phase does not cover.
    expr idx = *m.index;
    if (idx.is_app() && idx.decl().decl_kind() == Z3_OP_MOD && idx.num_args() == 2) {
      expr e0 = w_.fixed_dims()(At(m, I(m.v), std::nullopt)(idx.arg(0))).simplify();
      int64_t ev;
      if (!e0.is_numeral_i64(ev) || !Valid(z3::implies(ranges && *m.n_own >= I(m.v),
                                                       idx.arg(0) == *m.n_own - I(m.v) + I(ev))))
        return Fail(m,
                    "a wait that skips phases of its barrier (its iterations are not consecutive "
                    "in the barrier's sequence)");
    }
  }
  expr i0 = w_.fixed_dims()(At(m, I(m.v), std::nullopt)(*m.index)).simplify();
  int64_t iv;
  if (!i0.is_numeral_i64(iv)) return Fail(m, "its first barrier index is not a constant");
  m.c = ((iv - m.v) % S + S) % S;
  if (!Valid(
          z3::implies(ranges && *m.n_own >= I(m.v), *m.index == z3::mod(*m.n_own + I(m.c), I(S)))))
    return Fail(m, "its barrier index is not (iteration + constant) % the barrier count");
  int64_t ev = iv;
  if (mod_arg) {
    expr e0 = w_.fixed_dims()(At(m, I(m.v), std::nullopt)(*mod_arg)).simplify();
    if (!e0.is_numeral_i64(ev)) return Fail(m, "its first sequence number is not a constant");
  }
  m.seq0 = I(ev);
  return WaitFamily(m, true);
}

// A wait's family: the waits of the same threads on the same barrier array
// (a peeled first wait, the loop's, a peeled last one). Their sequence
// numbers must run from the family's first one on, each once, in program
// order (CheckWaitFamilies proves it); the phase a wait observes is its
// sequence number's round, its parity convention that of the family's first
// wait (0, or 1 for the "fresh barrier counts as a completed phase" idiom).
bool MbarrierPhases::WaitFamily(MbOp& m, bool numeral) {
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
  if (!base) return Fail(m, "the first wait of its barrier family has a run-time sequence number");
  if (base == &m) {
    expr p0 = w_.fixed_dims()(At(m, I(m.v), std::nullopt)(*m.parity)).simplify();
    int64_t pv;
    if (!p0.is_numeral_i64(pv)) return Fail(m, "the parity of its first wait is not a constant");
    m.delta = (pv % 2 == 0) ? 0 : -1;
    m.seq0->simplify().is_numeral_i64(m.wbase);
  } else {
    m.delta = base->delta;
    m.wbase = base->wbase;
  }
  m.state = 1;
  return true;
}

bool MbarrierPhases::Parallel(const MbOp& w, const MbOp& cw) {
  auto key = std::make_pair(&w, &cw);
  auto it = parallel_.find(key);
  if (it != parallel_.end()) return it->second;
  bool ok = w.nest.size() == cw.nest.size();
  for (size_t i = 0; ok && i < w.nest.size(); ++i) {
    const LoopInfo& a = w_.loops()[w.nest[i]];
    const LoopInfo& b = w_.loops()[cw.nest[i]];
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

expr MbarrierPhases::CoversSeq(const MbOp& a, const expr& g) {
  expr n = (g - Gc(a)) / I(a.ga);
  return z3::mod(g - Gc(a), I(a.ga)) == 0 && n >= 0 && n < *a.total &&
         At(a, n, std::nullopt)(*a.resid);
}

Subst MbarrierPhases::LastInner(const MbOp& w, size_t depth) {
  Subst s(c_);
  for (size_t i = depth; i < w.loops.size(); ++i) {
    const LoopInfo& li = w_.loops()[w.loops[i]];
    s.from.push_back(*li.var);
    s.to.push_back(*li.lo + (*li.trip - 1) * I(li.step));
  }
  return s;
}

expr MbarrierPhases::Know0(const std::vector<int>& loops, int pos, const Subst& sub, int bar,
                           const expr& b, const expr& q) {
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
    } else if (Precedes(w, loops, pos)) {
      k = k || (sub(*w.pc) && sub(*w.index) == b && q <= sub(Target(w, *w.n_own)));
    } else if (w.pos < pos && w.loops.size() > loops.size() &&
               std::equal(loops.begin(), loops.end(), w.loops.begin())) {
      // w sits in inner loops that finished before the point: its most
      // recent execution on index b, counting from their last iteration.
      int64_t S = bars_[w.bar].count;
      Subst last = LastInner(w, loops.size());
      expr inner_ran = c_.bool_val(true);
      for (size_t i = loops.size(); i < w.loops.size(); ++i)
        inner_ran = inner_ran && *w_.loops()[w.loops[i]].trip > 0;
      expr nl = sub(last(*w.n_own));
      expr np = nl - z3::mod(nl + I(w.c) - b, I(S));
      expr member = sub(At(w, I(w.v), std::nullopt)(*w.pc));
      k = k || (inner_ran && np >= I(w.v) && member && q <= Target(w, np));
    }
  }
  return k;
}

expr MbarrierPhases::Know(const std::vector<int>& loops, int pos, const Subst& sub, int bar,
                          const expr& b, const expr& q) {
  expr k = Know0(loops, pos, sub, bar, b, q);
  for (MbOp& w : mbops_) {
    if (w.kind != MbOp::kWait || !Analyze(w)) continue;
    // w before the point in this iteration, or (its last iteration) in inner
    // loops that finished before it
    Subst last(c_);
    expr ran = c_.bool_val(true);
    if (!Precedes(w, loops, pos)) {
      if (!(w.pos < pos && w.loops.size() > loops.size() &&
            std::equal(loops.begin(), loops.end(), w.loops.begin())))
        continue;
      last = LastInner(w, loops.size());
      for (size_t i = loops.size(); i < w.loops.size(); ++i)
        ran = ran && *w_.loops()[w.loops[i]].trip > 0;
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

}  // namespace argus::verifier::engine
