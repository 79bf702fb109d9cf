// verifier/analysis/tma_reads.cc: reads of TMA-filled buffers (see
// tma_reads.h).
#include "verifier/analysis/tma_reads.h"

#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace argus::verifier::engine {

std::vector<Cand> TmaReads::Candidates(const Event& rd, const std::vector<expr>& L) {
  std::vector<Cand> out;
  std::vector<MbOp*> ws;
  for (MbOp& m : phases_.mbops()) {
    if (m.kind == MbOp::kTma && w_.events()[m.event].alloc == rd.alloc && phases_.Analyze(m))
      ws.push_back(&m);
  }
  // The reader's last wait on the barrier the TMA completes on: the phase it
  // observes is the newest round whose data has landed.
  auto cover = [&](const MbOp& w) -> MbOp* {
    MbOp* best = nullptr;
    for (MbOp& x : phases_.mbops()) {
      if (x.kind == MbOp::kWait && x.bar == w.bar && phases_.Precedes(x, rd.loops, rd.pos) &&
          phases_.Analyze(x))
        best = &x;
    }
    return best;
  };
  bool newest_parallel = true;  // every fill's newest landed round is the reader's iteration
  expr newest_pc = c_.bool_val(true);
  auto pins_at = [&](const MbOp& w, const expr& n) {
    std::map<unsigned, expr> pins;
    auto vals = phases_.NestValues(w, n);
    for (size_t i = 0; i < w.nest.size(); ++i)
      pins.emplace(w_.loops()[w.nest[i]].var->id(), vals[i]);
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
        newest_parallel = newest_parallel && phases_.Parallel(w, *cw);
        newest_pc = newest_pc && *cw->pc;
      }
      expr t = phases_.Target(*cw, *cw->n_own) - I(d);
      expr m = phases_.Inv(w, *cw->index, t);
      auto pins = pins_at(w, m);
      if (d == 0 && phases_.Parallel(w, *cw)) {
        // the newest landed fill is the reader's own iteration: pin the
        // writer's loop variables to the reader's (keeps the query linear)
        pins.clear();
        for (size_t i = 0; i < w.nest.size(); ++i)
          pins.emplace(w_.loops()[w.nest[i]].var->id(), *w_.loops()[cw->nest[i]].var);
      }
      out.push_back(w_.BuildCand(w_.events()[w.event], L, pins,
                                 *cw->pc && phases_.Covers(w, *cw->index, t), true, {}));
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
    expr t = phases_.Target(*cw, *cw->n_own);
    expr nf = Fresh("Nold");
    expr extra = *cw->pc && nf >= 0 && nf < *w.total && phases_.At(w, nf, std::nullopt)(*w.resid) &&
                 phases_.At(w, nf, std::nullopt)(*w.index) == *cw->index &&
                 phases_.Round(w, nf) <= t - I(opt_.window + 1);
    out.push_back(w_.BuildCand(w_.events()[w.event], L, pins_at(w, nf), extra, false, {nf}));
  }
  return out;
}

// TMA load `w` into the element `rd` reads: it has landed (a wait of the
// reader observed its phase) or, when it comes later, it waits for the
// readers' release.
void TmaReads::CheckFill(const Event& rd, MbOp& w) {
  const Event& we = w_.events()[w.event];
  Inst in = MakeInst({});
  Subst si(c_);
  si.from = in.from;
  si.to = in.to;
  expr nw = si(*w.n_own), bw = si(*w.index), rw = phases_.Round(w, nw);
  expr cover = si(*we.guard);
  for (size_t d = 0; d < rd.coords.size(); ++d) cover = cover && si(we.coords[d]) == rd.coords[d];
  // landed: a wait of the reader observed the TMA's phase
  expr landed = c_.bool_val(false);
  for (MbOp& x : phases_.mbops()) {
    if (x.kind != MbOp::kWait || x.bar != w.bar || !phases_.Precedes(x, rd.loops, rd.pos) ||
        !phases_.Analyze(x))
      continue;
    landed = landed || (*x.pc && *x.index == bw && rw <= phases_.Target(x, *x.n_own));
  }
  // released: before issuing, the producer waited for a phase that an
  // arrive after the read (after the wgmma that reads it completed) completes
  expr released = c_.bool_val(false);
  for (MbOp& p : phases_.mbops()) {
    if (p.kind != MbOp::kWait || !phases_.Precedes(p, we.loops, w.pos) || !phases_.Analyze(p))
      continue;
    expr gp = si(*p.pc), tp = si(phases_.Target(p, *p.n_own)), bp = si(*p.index);
    for (MbOp& a : phases_.mbops()) {
      if (a.bar != p.bar || (a.kind != MbOp::kArrive && a.kind != MbOp::kArriveTx) ||
          !phases_.Analyze(a))
        continue;
      expr m = phases_.Inv(a, bp, tp);
      expr base = gp && phases_.Covers(a, bp, tp);
      if (rd.wgmma_read && rd.wg_group) {
        std::map<int64_t, int64_t> wit;  // one arriving thread per warp group
        for (int64_t t : a.executors) wit.emplace(t / 128, t);
        for (const auto& [wg, t] : wit) {
          Subst sa = phases_.At(a, m, I(t));
          released = released || (base && sa(*a.pc) && I(wg) == w_.tid_base() / I(128) &&
                                  sa(*a.wg_covered) > *rd.wg_group);
        }
      } else if (a.loops == rd.loops) {
        Subst sa = phases_.At(a, m, *rd.thread);
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
    nr =
        nr * *w_.loops()[l].trip + (*w_.loops()[l].var - *w_.loops()[l].lo) / I(w_.loops()[l].step);
  bool same_depth = rd.loops.size() == w.nest.size();
  expr early = same_depth ? nw <= nr : c_.bool_val(true);
  auto watch = BaseWatch();
  for (size_t j = 0; j < rd.elem.size(); ++j) watch.emplace_back(absl::StrCat("@e", j), rd.elem[j]);
  // the reader's last wait on this barrier array, for the report
  const MbOp* last = nullptr;
  for (MbOp& x : phases_.mbops()) {
    if (x.kind == MbOp::kWait && x.bar == w.bar && phases_.Precedes(x, rd.loops, rd.pos) &&
        phases_.Analyze(x))
      last = &x;
  }
  if (last) {
    watch.emplace_back("@lt", phases_.Target(*last, *last->n_own));
    watch.emplace_back("@lb", *last->index);
  }
  watch.emplace_back("@bw", bw);
  watch.emplace_back("@rw", rw);
  for (int l : we.loops) watch.emplace_back("@w:" + w_.loops()[l].name, si(*w_.loops()[l].var));
  const std::string& bar_name = phases_.bar_name(w.bar);
  auto wit = [&](const ProofResult& r) {
    std::vector<std::string> wi;
    for (int l : we.loops)
      wi.push_back(absl::StrCat(w_.loops()[l].name, "=", M(r, "@w:" + w_.loops()[l].name)));
    return absl::StrJoin(wi, ",");
  };
  Obligation(
      "read_before_wait", *rd.op, bad && early, watch, [&](const ProofResult& r, Finding* f) {
        f->message = absl::StrCat("shared memory '", w_.alloc_names()[rd.alloc],
                                  "' read before the TMA load that fills it has landed: no "
                                  "mbarrier_wait before the read observes phase ",
                                  M(r, "@rw"), " of ", bar_name, "[", M(r, "@bw"), "]");
        for (size_t j = 0; j < rd.elem.size(); ++j)
          f->cex.coordinates.push_back(M(r, absl::StrCat("@e", j)));
        f->cex.written_at = w.op->loc;
        f->cex.written_source = Src(w.op->loc);
        f->cex.written_iteration = wit(r);
        f->cex.expected = absl::StrCat("a wait that observes phase ", M(r, "@rw"), " of ", bar_name,
                                       "[", M(r, "@bw"), "] (filled in iteration ", wit(r), ")");
        f->cex.actual =
            last
                ? absl::StrCat(
                      "the last wait before the read (line ", last->op->loc.line,
                      ") observes phase ", M(r, "@lt"), " of ", bar_name, "[", M(r, "@lb"), "]",
                      M(r, "@lt") < 0 ? " (none: parity 1 on a fresh barrier returns at once)" : "",
                      "; the data may still be in flight")
                : "no wait on that barrier before the read; the data may still be in flight";
      });
  auto watch2 = watch;
  Obligation(
      "stage_overwrite", *w.op, bad && !early, watch2, [&](const ProofResult& r, Finding* f) {
        f->message = absl::StrCat(
            "TMA load refills '", w_.alloc_names()[rd.alloc], "' (stage ", bar_name, "[",
            M(r, "@bw"), "], iteration ", wit(r),
            ") before its consumers released it: no mbarrier_wait before the load observes a "
            "phase completed by an arrive after the read at line ",
            rd.op->loc.line);
        f->cex.iterations.clear();
        for (int l : we.loops)
          f->cex.iterations[w_.loops()[l].name] = M(r, "@w:" + w_.loops()[l].name);
        std::vector<std::string> ri;
        for (int l : rd.loops)
          ri.push_back(absl::StrCat(w_.loops()[l].name, "=", M(r, "@loop:" + w_.loops()[l].name)));
        f->cex.other = absl::StrCat("read at line ", rd.op->loc.line, " in iteration ",
                                    absl::StrJoin(ri, ","), " (", Src(rd.op->loc), ")");
        f->cex.expected = "the load ordered after the readers' arrive on the empty barrier";
        f->cex.actual = "the load may overwrite the stage while it is read";
        for (size_t j = 0; j < rd.elem.size(); ++j)
          f->cex.coordinates.push_back(M(r, absl::StrCat("@e", j)));
      });
}

void TmaReads::Read(const Event& rd) {
  if (!Fills(rd.alloc)) return;  // shared_reads'
  for (MbOp& w : phases_.mbops()) {
    if (w.kind != MbOp::kTma || w_.events()[w.event].alloc != rd.alloc || !phases_.Analyze(w))
      continue;
    CheckFill(rd, w);
  }
  // No landed load covers the element at all.
  auto cands = Candidates(rd, rd.coords);
  expr none = *rd.guard;
  for (const Cand& c : cands) none = none && !c.excl;
  auto watch = BaseWatch();
  for (size_t j = 0; j < rd.elem.size(); ++j) watch.emplace_back(absl::StrCat("@e", j), rd.elem[j]);
  Obligation("uninitialized_read", *rd.op, none, watch, [&](const ProofResult& r, Finding* f) {
    f->message = absl::StrCat("read of shared memory '", w_.alloc_names()[rd.alloc],
                              "' that no TMA load observed by an mbarrier_wait before it fills");
    for (size_t j = 0; j < rd.elem.size(); ++j)
      f->cex.coordinates.push_back(M(r, absl::StrCat("@e", j)));
    f->cex.expected = "a TMA load whose phase a wait before the read observed";
    f->cex.actual = "uninitialized";
  });
}

}  // namespace argus::verifier::engine
