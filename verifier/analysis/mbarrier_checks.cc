// verifier/analysis/mbarrier_checks.cc: the checks of the mbarrier phase
// model after the walk — wait families, TMA loads in flight, each array's
// arrival rounds, bytes and ordering, each wait's parity, liveness and
// deadlock freedom — and the review of the findings that rest on the model
// (see mbarrier_phases.h).
#include <algorithm>
#include <functional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "verifier/analysis/mbarrier_phases.h"

namespace argus::verifier::engine {

void MbarrierPhases::Review(Report* report) {
  // Findings that rest on the mbarrier model are only as good as that model:
  // with an mbarrier operation it cannot follow they are unknowns, not
  // violations (the `unsupported` findings say why).
  bool mb_unsupported = false;
  for (const MbOp& m : mbops_) mb_unsupported |= m.state < 0;
  if (!mb_unsupported) return;
  static const std::set<std::string> kDependent = {
      "tag_assert",         "tag_assert_eq",    "read_before_wait", "stage_overwrite",
      "uninitialized_read", "mbarrier_overrun", "mbarrier_hang",    "mbarrier_tx",
      "mbarrier_count",     "mbarrier_parity",  "shared_race",      "mma_k_mismatch"};
  for (Finding& f : report->findings) {
    if (f.severity != Severity::kViolation || !kDependent.count(f.check)) continue;
    f.severity = Severity::kUnknown;
    f.message = absl::StrCat(
        "unknown (rests on an mbarrier operation the verifier cannot follow): ", f.message);
  }
}

void MbarrierPhases::FillerWatch(const MbOp& f, const expr& b, const expr& t,
                                 const std::string& key, Watch* watch) {
  expr n = Inv(f, b, t);
  auto vals = NestValues(f, n);
  watch->emplace_back(key + "#ok", z3::ite(Covers(f, b, t), I(1), I(0)));
  for (size_t i = 0; i < f.nest.size(); ++i)
    watch->emplace_back(absl::StrCat(key, ":", w_.loops()[f.nest[i]].name), vals[i]);
}

std::string MbarrierPhases::FillerText(const MbOp& f, const ProofResult& r,
                                       const std::string& key) {
  if (!M(r, key + "#ok")) return "no iteration";
  std::vector<std::string> it;
  for (int l : f.nest)
    it.push_back(
        absl::StrCat(w_.loops()[l].name, "=", M(r, absl::StrCat(key, ":", w_.loops()[l].name))));
  return absl::StrCat("iteration ", absl::StrJoin(it, ","));
}

// The families of waits (WaitFamily): each sequence number from the first
// on is waited for exactly once, in program order, so a wait's round is its
// sequence number's.
void MbarrierPhases::CheckWaitFamilies() {
  std::map<std::pair<int, std::vector<int64_t>>, std::vector<MbOp*>> fams;
  for (MbOp& m : mbops_) {
    if (m.kind == MbOp::kWait && m.state > 0) fams[{m.bar, m.executors}].push_back(&m);
  }
  w_.loop_stack().clear();
  for (auto& [key, fam] : fams) {
    if (fam.size() < 2 || w_.stopped()) continue;
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

void MbarrierPhases::AfterWalk() {
  std::set<int> skip;
  for (MbOp& m : mbops_) {
    if (!Analyze(m)) {
      Unsupported(*m.op, m.why);
      skip.insert(m.bar);
    }
  }
  if (w_.stopped()) return;
  CheckWaitFamilies();
  if (w_.stopped()) return;
  for (int alloc : tma_allocs_) {
    for (const Event& e : w_.events()) {
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
  CheckTmaRaces(skip);
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
    if (skip.count(x)) continue;
    CheckArray(x);
  }
  w_.loop_stack().clear();
}

// Two TMA loads in flight must not write the same element: writes to one
// element come from the same barrier index in different rounds (ordered by
// the round-ordering check of CheckArray).
void MbarrierPhases::CheckTmaRaces(const std::set<int>& skip) {
  for (size_t i = 0; i < mbops_.size(); ++i) {
    MbOp& w1 = mbops_[i];
    if (w1.kind != MbOp::kTma || skip.count(w1.bar)) continue;
    for (size_t j = i; j < mbops_.size(); ++j) {
      MbOp& w2 = mbops_[j];
      if (w2.kind != MbOp::kTma || skip.count(w2.bar)) continue;
      const Event& e1 = w_.events()[w1.event];
      const Event& e2 = w_.events()[w2.event];
      if (e1.alloc != e2.alloc) continue;
      Inst i1 = MakeInst({}), i2 = MakeInst({});
      expr bad = Sub(i1, *e1.guard) && Sub(i2, *e2.guard);
      for (size_t d = 0; d < e1.coords.size(); ++d)
        bad = bad && Sub(i1, e1.coords[d]) == Sub(i2, e2.coords[d]);
      if (i == j) {
        expr differ = c_.bool_val(false);
        for (int l : w1.loops)
          differ = differ || Sub(i1, *w_.loops()[l].var) != Sub(i2, *w_.loops()[l].var);
        bad = bad && differ;
      }
      expr n1 = Sub(i1, *w1.n_own), n2 = Sub(i2, *w2.n_own);
      expr ordered = c_.bool_val(w1.bar == w2.bar) && Sub(i1, *w1.index) == Sub(i2, *w2.index) &&
                     Round(w1, n1) != Round(w2, n2);
      w_.loop_stack().clear();
      std::vector<std::pair<std::string, expr>> watch;
      for (int l : w1.loops)
        watch.emplace_back("@1:" + w_.loops()[l].name, Sub(i1, *w_.loops()[l].var));
      for (int l : w2.loops)
        watch.emplace_back("@2:" + w_.loops()[l].name, Sub(i2, *w_.loops()[l].var));
      Obligation(
          "shared_race", *w2.op, bad && !ordered, watch, [&](const ProofResult& r, Finding* f) {
            auto it = [&](const MbOp& w, const char* k) {
              std::vector<std::string> v;
              for (int l : w.loops)
                v.push_back(absl::StrCat(w_.loops()[l].name, "=",
                                         M(r, absl::StrCat(k, w_.loops()[l].name))));
              return absl::StrJoin(v, ",");
            };
            f->message =
                absl::StrCat("two TMA loads may be in flight writing the same element of '",
                             w_.alloc_names()[e1.alloc], "' (not ordered by one barrier's phases)");
            f->cex.written_at = w1.op->loc;
            f->cex.written_source = Src(w1.op->loc);
            f->cex.written_iteration = it(w1, "@1:");
            f->cex.other = absl::StrCat("this load in iteration ", it(w2, "@2:"));
          });
    }
  }
}

void MbarrierPhases::CheckArray(int x) {
  const BarArray& ba = bars_[x];
  std::vector<MbOp*> al, ws;
  for (MbOp& m : mbops_) {
    if (m.bar != x) continue;
    (m.kind == MbOp::kWait ? ws : al).push_back(&m);
  }
  if (al.empty()) {
    for (MbOp* w : ws) {
      w_.loop_stack() = w->loops;
      Obligation("mbarrier_hang", *w->op, *w->pc && Target(*w, *w->n_own) >= 0, BaseWatch(),
                 [&](const ProofResult&, Finding* f) {
                   f->message = absl::StrCat("waits on '", ba.name,
                                             "', which nothing arrives on: the wait never returns");
                 });
    }
    return;
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
  CheckArrivals(x, al, fams);
  // Round ordering: round r's arrivals come after phase r - 1 completed.
  for (MbOp* a : al) {
    w_.loop_stack() = a->loops;
    expr r = Round(*a, *a->n_own);
    Subst id(c_);
    expr bad = *a->pc && r >= 1 && !Know(a->loops, a->pos, id, x, *a->index, r - 1);
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
  for (MbOp* w : ws) CheckWait(x, w, al, fams, filler);
}

// Each family brings one arrival per round, round after round; a round's
// arrivals are the array's count, its bytes those of its TMA loads.
void MbarrierPhases::CheckArrivals(int x, const std::vector<MbOp*>& al,
                                   const std::vector<std::vector<MbOp*>>& fams) {
  const BarArray& ba = bars_[x];
  int64_t g0 = *bars_[x].g0;
  int64_t S = ba.count;
  w_.loop_stack().clear();
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
    Obligation("mbarrier_count", *fam[0]->op, g >= I(g0 + S) && any(fam, g) && !any(fam, g - I(S)),
               watch, [&](const ProofResult& r, Finding* f) {
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
    f.cex.block.assign(w_.blocks().size(), 0);
    f.cex.thread = at->executors.empty() ? 0 : at->executors[0];
    f.cex.warp = f.cex.thread / f_.warp_size;
    f.cex.lane = f.cex.thread % f_.warp_size;
    f.message = absl::StrCat(
        "'", ba.name, "' expects ", ba.arrivals, " arrivals per phase, but each round brings ",
        arrivals,
        arrivals < ba.arrivals ? " (its phases never complete)" : " (phases complete early)");
    f.cex.expected = absl::StrCat(ba.arrivals, " arrivals");
    f.cex.actual = absl::StrCat(arrivals, " arrivals");
    w_.AddFinding(f);
    w_.Decided(false);
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
        want =
            want + z3::ite(CoversSeq(*a, g), At(*a, n, I(a->executors[0]))(*a->bytes) * I(k), I(0));
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
}

// A wait observes the phase of its round (parity), which every family
// completes (liveness) without needing what the waiting threads provide
// after it (deadlock).
void MbarrierPhases::CheckWait(int x, MbOp* w, const std::vector<MbOp*>& al,
                               const std::vector<std::vector<MbOp*>>& fams, const MbOp* filler) {
  const BarArray& ba = bars_[x];
  w_.loop_stack() = w->loops;
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
                     "mbarrier_wait on ", ba.name, "[", M(r, "@b"), "] with parity ", M(r, "@p"),
                     " observes the wrong phase: this wait must observe phase ", tt, " (filled in ",
                     FillerText(*filler, r, "@fe"), ")");
                 f->cex.expected = absl::StrCat("parity ", ((tt % 2) + 2) % 2, " (phase ", tt,
                                                " of ", ba.name, "[", M(r, "@b"), "], filled in ",
                                                FillerText(*filler, r, "@fe"), ")");
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
                   f->message = absl::StrCat(
                       "waits for phase ", M(r, "@t"), " of ", ba.name, "[", M(r, "@b"),
                       "], which the ", a->kind == MbOp::kTma ? "TMA load" : "arrive", " at line ",
                       a->op->loc.line, " never completes: the wait never returns");
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
                   f->message =
                       absl::StrCat("deadlock: this wait for phase ", M(r, "@t"), " of ", ba.name,
                                    "[", M(r, "@b"), "] needs the arrive at line ", a->op->loc.line,
                                    ", which the waiting threads only reach after this wait");
                 });
      continue;
    }
    Subst sa = At(*a, m, I(a->executors[0]));
    for (MbOp& w2 : mbops_) {
      if (w2.kind != MbOp::kWait || !Precedes(w2, a->loops, a->pos) || !Analyze(w2)) continue;
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

}  // namespace argus::verifier::engine
