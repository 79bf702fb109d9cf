// verifier/analysis/epilogue.cc: the TMA-store epilogue's checks (see
// epilogue.h).
#include "verifier/analysis/epilogue.h"

#include <map>
#include <set>

#include "absl/strings/str_cat.h"

namespace argus::verifier::engine {

void Epilogue::Before(const Op& op) {
  switch (op.code) {
    case OpCode::kStoreFragment:
      return Record(op, EpiOp::kWrite);
    case OpCode::kFenceProxyAsync:
      return Record(op, EpiOp::kFence);
    case OpCode::kTmaStoreCommit:
      return Record(op, EpiOp::kCommit);
    case OpCode::kTmaStoreWait:
      return Record(op, EpiOp::kWait);
    case OpCode::kWarpgroupBarrier:
      return Record(op, EpiOp::kWgBar);
    default:
      return;
  }
}

void Epilogue::Accessed(const Access& a) {
  // A tma_store's first access is the global tile it writes.
  if (a.op.code == OpCode::kTmaStore && a.view.space == dsl::Space::kGlobal) store_tile_ = a.view;
}

void Epilogue::After(const Op& op) {
  if (op.code != OpCode::kTmaStore) return;
  Record(op, EpiOp::kStore);
  if (!epi_.empty() && epi_.back().op == &op) epi_.back().gview = store_tile_;
}

void Epilogue::Record(const Op& op, EpiOp::Kind kind) {
  EpiOp e;
  e.kind = kind;
  e.op = &op;
  e.pos = w_.pos();
  e.loops = w_.loop_stack();
  e.pc = w_.pc();
  if (kind == EpiOp::kWrite || kind == EpiOp::kStore) {
    const Val& v = w_.vals()[op.operands[kind == EpiOp::kWrite ? 1 : 0]];
    if (v.k != Val::kView || !v.view.ok || v.view.space != dsl::Space::kShared) return;
    e.view = v.view;
  }
  if (kind == EpiOp::kWrite) {
    const dsl::ir::Type& at = f_.vars[op.operands[0]].type;
    if (at.is_frag()) e.geom = at.frag.Geom();
    if (op.operands.size() == 4) {
      e.at_i = IntOf(op.operands[2]);
      e.at_j = IntOf(op.operands[3]);
    }
  }
  if (kind == EpiOp::kWait) e.n = op.ints.empty() ? 0 : op.ints[0];
  epi_.push_back(e);
}

std::optional<expr> Epilogue::EpiIter(const std::vector<int>& loops, const Inst* in) {
  auto sub = [&](const expr& e) { return in ? Sub(*in, e) : e; };
  expr n = I(0);
  for (size_t d = 0; d < loops.size(); ++d) {
    const LoopInfo& li = w_.loops()[loops[d]];
    if (d > 0) {
      int64_t t;
      if (!li.trip || !li.trip->simplify().is_numeral_i64(t)) return std::nullopt;
      n = n * I(t);
    }
    n = n + (sub(*li.var) - sub(*li.lo)) / I(li.step);
  }
  return n;
}

void Epilogue::AfterWalk() {
  Plan p;
  if (!Collect(&p)) return;
  auto saved_loops = w_.loop_stack();
  w_.loop_stack() = p.L;
  p.nA = EpiIter(p.L, nullptr);
  if (!p.nA) {
    w_.loop_stack() = saved_loops;
    return Unsupported(*p.S->op,
                       "TMA-store epilogue: the loops around the tma_store are not linear (inner "
                       "trip counts must be constants)");
  }
  CheckGroups(p);
  CheckReuse(p);
  CheckStoreReads(p);
  CheckDrain(p);
  w_.loop_stack() = saved_loops;
}

// The modeled shape (one store and its commit in one loop nest, the buffer
// written only by store(acc, buf, at=) there), or false once unsupported.
bool Epilogue::Collect(Plan* p) {
  std::vector<const EpiOp*> stores, commits;
  for (const EpiOp& e : epi_) {
    if (e.kind == EpiOp::kStore) stores.push_back(&e);
    if (e.kind == EpiOp::kCommit) commits.push_back(&e);
  }
  if (stores.empty()) return false;
  auto unsupported = [&](const Op& op, const std::string& why) {
    Unsupported(op, absl::StrCat("TMA-store epilogue: ", why));
    return false;
  };
  const EpiOp& S = *stores[0];
  if (stores.size() != 1 || commits.size() != 1) {
    return unsupported(*S.op, "one tma_store and one tma_store_commit per kernel are modeled");
  }
  const EpiOp& Cm = *commits[0];
  const std::vector<int>& L = S.loops;
  if (L.empty() || Cm.loops != L || Cm.pos < S.pos)
    return unsupported(*S.op, "the tma_store and then its commit must sit in the same loop");
  const int buf = S.view.base;
  const std::string bname = buf >= 0 && buf < static_cast<int>(w_.alloc_names().size())
                                ? w_.alloc_names()[buf]
                                : std::string("the buffer");
  std::vector<const EpiOp*> ws, waits, bars, fences, drains;
  for (const EpiOp& e : epi_) {
    bool in_l = e.loops == L;
    switch (e.kind) {
      case EpiOp::kWrite:
        if (e.view.base != buf) break;
        if (!in_l || !e.at_i || !e.geom)
          return unsupported(*e.op, absl::StrCat("the stored buffer '", bname,
                                                 "' is written only by store(acc, buf, at=) in "
                                                 "the tma_store's loop"));
        ws.push_back(&e);
        break;
      case EpiOp::kWait:
        if (in_l) waits.push_back(&e);
        if (e.loops.empty() && e.n == 0 && e.pos > Cm.pos) drains.push_back(&e);
        break;
      case EpiOp::kWgBar:
        if (in_l) bars.push_back(&e);
        break;
      case EpiOp::kFence:
        if (in_l) fences.push_back(&e);
        break;
      default:
        break;
    }
  }
  for (const Event& ev : w_.events()) {
    // store(acc, buf, at=) is also an ordinary write event (fragment math's
    // rule); the checks below model those writes themselves.
    if (ev.op->code == dsl::ir::OpCode::kStoreFragment) continue;
    if (ev.alloc == buf && !ev.is_virtual)
      return unsupported(*ev.op, absl::StrCat("the stored buffer '", bname,
                                              "' is also accessed by ordinary loads, stores or "
                                              "copies"));
  }
  if (ws.empty()) return unsupported(*S.op, "the stored buffer is never written in its loop");
  for (const EpiOp* w : ws) {
    for (const EpiOp* w2 : ws) {
      if (w2 != w && w->pos < w2->pos && w2->pos < S.pos)
        return unsupported(*w2->op, "two fragment stores into the buffer before one tma_store");
    }
  }
  *p = Plan{&S, &Cm, L, bname, ws, waits, bars, fences, drains, std::nullopt};
  return true;
}

void Epilogue::CheckGroups(const Plan& p) {
  const EpiOp& S = *p.S;
  const EpiOp& Cm = *p.Cm;
  const std::vector<int>& L = p.L;
  expr tid = w_.tid_base();
  // The bulk groups are the iterations: the store and its commit run in every
  // iteration of the nest in the threads that run them at all.
  {
    std::map<unsigned, expr> pins{{tid.id(), tid}};
    Inst B = MakeInst(pins);
    expr range_b = c_.bool_val(true);
    for (int l : L) range_b = range_b && Sub(B, *w_.loops()[l].range);
    expr bad = (*S.pc && ((range_b && !Sub(B, *S.pc)) || !*Cm.pc));
    auto watch = BaseWatch();
    Obligation("bulk_store_group", *S.op, bad, watch, [&](const ProofResult&, Finding* f) {
      f->message =
          "a thread issues this tma_store (with its tma_store_commit) in some iterations of its "
          "loops but not in others: its bulk groups are not counted by the iteration";
    });
  }
}

void Epilogue::CheckReuse(const Plan& p) {
  const EpiOp& S = *p.S;
  const EpiOp& Cm = *p.Cm;
  const std::vector<int>& L = p.L;
  const std::string& bname = p.bname;
  const std::vector<const EpiOp*>& ws = p.ws;
  const std::vector<const EpiOp*>& waits = p.waits;
  const std::vector<const EpiOp*>& bars = p.bars;
  const std::optional<expr>& nA = p.nA;
  expr tid = w_.tid_base();
  auto threads_ok = [&](const expr& t) { return t >= 0 && t < I(f_.threads); };
  // Writes against stores that may still read: same warp group, covered by a
  // wait of the storing thread in the writer's iteration, then a barrier.
  for (const EpiOp* w : ws) {
    std::vector<int64_t> ext;
    expr rw(c_), rs(c_);
    std::vector<expr> ew = w_.ElemVars(w->view, "ew", &ext, &rw);
    std::vector<expr> es = w_.ElemVars(S.view, "es", &ext, &rs);
    Inst B = MakeInst({});  // the storing thread T' in iteration nB
    expr t2 = Sub(B, tid);
    std::map<unsigned, expr> pins{{tid.id(), t2}};
    for (int l : L) pins.emplace(w_.loops()[l].var->id(), *w_.loops()[l].var);
    Inst C = MakeInst(pins);  // T' in the writer's iteration
    expr nB = *EpiIter(L, &B);
    auto cw = w_.Coords(w->view, ew);
    auto cs = w_.Coords(S.view, es);
    expr overlap = c_.bool_val(true);
    for (size_t d = 0; d < cw.size() && d < cs.size(); ++d)
      overlap = overlap && cw[d] == Sub(B, cs[d]);
    expr order = nB < *nA || (S.pos < w->pos ? nB == *nA : c_.bool_val(false));
    expr safe = c_.bool_val(false);
    for (const EpiOp* wt : waits) {
      if (wt->pos > w->pos) continue;
      for (const EpiOp* b : bars) {
        if (b->pos < wt->pos || b->pos > w->pos) continue;
        expr count = *nA + I(Cm.pos < wt->pos ? 1 : 0);
        safe = safe || (Sub(C, *wt->pc) && *b->pc && nB < count - I(wt->n));
      }
    }
    expr same_wg = tid / I(128) == t2 / I(128);
    expr bad = *w->pc && rw && Sub(B, *S.pc && rs) && threads_ok(t2) && overlap && order &&
               !(same_wg && safe);
    auto watch = BaseWatch();
    watch.emplace_back("@t2", t2);
    watch.emplace_back("@nS", nB);
    watch.emplace_back("@nW", *nA);
    Obligation("bulk_store_reuse", *w->op, bad, watch, [&](const ProofResult& r, Finding* f) {
      int64_t t = M(r, "@t2");
      f->message = absl::StrCat(
          "shared '", bname, "' written while the tma_store at line ", S.op->loc.line,
          " may still read it: the storing thread's tma_store_wait(n) must cover that store's "
          "group, and a warpgroup_barrier() after the wait must order it before this write");
      f->cex.other = absl::StrCat("thread ", t, " (warp ", t / f_.warp_size,
                                  ") stored the element in linearized iteration ", M(r, "@nS"),
                                  "; this write is in iteration ", M(r, "@nW"));
      f->cex.written_at = S.op->loc;
      f->cex.written_source = Src(S.op->loc);
    });
    // Two warp groups writing the same element: nothing orders them.
    for (const EpiOp* w2 : ws) {
      std::vector<int64_t> ext2;
      expr r2(c_);
      std::vector<expr> e2 = w_.ElemVars(w2->view, "ex", &ext2, &r2);
      Inst D = MakeInst({});
      auto c2 = w_.Coords(w2->view, e2);
      expr ov = c_.bool_val(true);
      for (size_t d = 0; d < cw.size() && d < c2.size(); ++d) ov = ov && cw[d] == Sub(D, c2[d]);
      expr td = Sub(D, tid);
      expr bad2 = *w->pc && rw && Sub(D, *w2->pc && r2) && threads_ok(td) && ov &&
                  tid / I(128) != td / I(128);
      auto watch2 = BaseWatch();
      watch2.emplace_back("@t2", td);
      Obligation("bulk_store_race", *w->op, bad2, watch2, [&](const ProofResult& r, Finding* f) {
        int64_t t = M(r, "@t2");
        f->message = absl::StrCat("two warp groups write the same element of '", bname,
                                  "' (nothing orders them): give each warp group its own buffer");
        f->cex.other = absl::StrCat("thread ", t, " (warp group ", t / 128, ") writes it at line ",
                                    w2->op->loc.line);
      });
    }
  }
}

void Epilogue::CheckStoreReads(const Plan& p) {
  const EpiOp& S = *p.S;
  const std::vector<int>& L = p.L;
  const std::string& bname = p.bname;
  const std::vector<const EpiOp*>& ws = p.ws;
  const std::vector<const EpiOp*>& bars = p.bars;
  const std::vector<const EpiOp*>& fences = p.fences;
  expr tid = w_.tid_base();
  auto threads_ok = [&](const expr& t) { return t >= 0 && t < I(f_.threads); };
  // What the store reads: its warp group's fragment stores of this iteration,
  // fenced for the async proxy and ordered by a barrier.
  {
    std::vector<int64_t> ext;
    expr rs(c_);
    std::vector<expr> es = w_.ElemVars(S.view, "er", &ext, &rs);
    auto cs = w_.Coords(S.view, es);
    expr covered = c_.bool_val(false);
    for (const EpiOp* w : ws) {
      if (w->pos > S.pos || w->view.ext != S.view.ext) continue;
      const dsl::FragGeom& g = *w->geom;
      int64_t h = w->view.ext[0], wd = w->view.ext[1];
      expr unit = tid / I(g.mma->warp_size) - I(g.first);
      expr r0 = (unit / I(g.wn)) * I(g.bm / g.wm), c0 = (unit % I(g.wn)) * I(g.bn / g.wn);
      expr inpart = unit >= 0 && unit < I(g.wm * g.wn) && *w->at_i * I(h) >= r0 &&
                    *w->at_i * I(h) + I(h) <= r0 + I(g.bm / g.wm) && *w->at_j * I(wd) >= c0 &&
                    *w->at_j * I(wd) + I(wd) <= c0 + I(g.bn / g.wn);
      auto cw = w_.Coords(w->view, es);
      expr same = c_.bool_val(true);
      for (size_t d = 0; d < cw.size(); ++d) same = same && cw[d] == cs[d];
      covered = covered || (*w->pc && inpart && same);
    }
    auto watch = BaseWatch();
    Obligation("bulk_store_stale", *S.op, *S.pc && rs && !covered, watch,
               [&](const ProofResult&, Finding* f) {
                 f->message = absl::StrCat(
                     "tma_store reads elements of '", bname, "' that its warp group's store(acc, ",
                     bname,
                     ", at=) of this iteration does not write (a sub-tile outside the warp "
                     "group's part of the accumulator, or another buffer)");
               });
  }
  // Tag flow: the element the store takes from the buffer lands where the
  // accumulator element it holds belongs.
  for (const EpiOp* w : ws) {
    if (w->pos > S.pos || w->view.ext != S.view.ext || S.gview.map.size() != 2) continue;
    std::vector<int64_t> ext;
    expr rs(c_);
    std::vector<expr> es = w_.ElemVars(S.view, "et", &ext, &rs);
    expr R = *w->at_i * I(w->view.ext[0]) + es[0], Cc = *w->at_j * I(w->view.ext[1]) + es[1];
    tag_flow_.CheckPlacement(*S.op, w->op->operands[0], R, Cc, w_.Coords(S.gview, es),
                             f_.tensors[S.gview.base].name, *S.pc && *w->pc && rs, L, w->op);
  }
  for (const EpiOp* w : ws) {
    if (w->pos > S.pos) continue;
    // Every thread of the warp group stores the same sub-tile into the same
    // buffer (the union of their elements is the whole sub-tile).
    std::vector<int64_t> ext;
    expr re(c_);
    std::vector<expr> e = w_.ElemVars(w->view, "eu", &ext, &re);
    std::map<unsigned, expr> pins;
    for (int l : L) pins.emplace(w_.loops()[l].var->id(), *w_.loops()[l].var);
    for (const expr& x : e) pins.emplace(x.id(), x);
    Inst D = MakeInst(pins);
    expr t2 = Sub(D, tid);
    auto cw = w_.Coords(w->view, e);
    expr same = Sub(D, *w->pc) && Sub(D, *w->at_i) == *w->at_i && Sub(D, *w->at_j) == *w->at_j;
    for (const expr& c : cw) same = same && Sub(D, c) == c;
    auto watch = BaseWatch();
    watch.emplace_back("@t2", t2);
    Obligation("warpgroup_divergence", *w->op,
               *w->pc && re && threads_ok(t2) && t2 / I(128) == tid / I(128) && !same, watch,
               [&](const ProofResult& r, Finding* f) {
                 f->message = absl::StrCat(
                     "store(acc, ", bname,
                     ", at=) feeding a tma_store must write the same sub-tile into the same "
                     "buffer in every thread of the warp group");
                 f->cex.other = absl::StrCat("thread ", M(r, "@t2"), " differs");
               });
    expr fenced = c_.bool_val(false), ordered = c_.bool_val(false);
    for (const EpiOp* fe : fences) {
      if (fe->pos < w->pos || fe->pos > S.pos) continue;
      fenced = fenced || *fe->pc;
      for (const EpiOp* b : bars) {
        if (b->pos > fe->pos && b->pos < S.pos) ordered = ordered || (*fe->pc && *b->pc);
      }
    }
    Obligation("proxy_fence", *S.op, *w->pc && *S.pc && !fenced, BaseWatch(),
               [&](const ProofResult&, Finding* f) {
                 f->message =
                     absl::StrCat("tma_store reads '", bname,
                                  "' (through the async proxy) after ordinary stores without "
                                  "fence_proxy_async() between them");
                 f->cex.expected = "fence_proxy_async() after the write, then a barrier";
                 f->cex.written_at = w->op->loc;
                 f->cex.written_source = Src(w->op->loc);
               });
    Obligation("bulk_store_unordered", *S.op, *w->pc && *S.pc && fenced && !ordered, BaseWatch(),
               [&](const ProofResult&, Finding* f) {
                 f->message = absl::StrCat(
                     "tma_store may read '", bname,
                     "' before the other threads of its warp group have stored and fenced their "
                     "elements: a warpgroup_barrier() after the fence must precede it");
                 f->cex.written_at = w->op->loc;
                 f->cex.written_source = Src(w->op->loc);
               });
  }
}

void Epilogue::CheckDrain(const Plan& p) {
  const EpiOp& S = *p.S;
  const std::vector<const EpiOp*>& drains = p.drains;
  // The stores still read shared memory until a wait: drain before the end.
  {
    expr drained = c_.bool_val(false);
    for (const EpiOp* d : drains) drained = drained || *d->pc;
    Obligation("bulk_store_drain", *S.op, *S.pc && !drained, BaseWatch(),
               [&](const ProofResult&, Finding* f) {
                 f->message =
                     "the kernel may end while this tma_store still reads shared memory: "
                     "tma_store_wait(0) after the loop in every thread that stores";
               });
  }
}

}  // namespace argus::verifier::engine
