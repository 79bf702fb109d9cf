// verifier/memory.cc: the walker's shared-memory model — accesses are events
// (buffer, element variables, base coordinates, thread, path condition,
// barrier and commit counts, the tag written); a read's value is that of the
// most recent writer instance that covers its element (the window of exact
// earlier iterations, then any older one), which Candidates lists.
#include <algorithm>
#include <functional>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "verifier/walker.h"

namespace argus::verifier::engine {

Event& Walker::NewEvent(const Op& op, const View& v, bool write) {
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

void Walker::FillInverse(Event& e, const View& v) {
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

// The tensors some op of the kernel writes (stores, copies, fragment and TMA
// stores into a view derived from the tensor): loads from the others are
// functions of their coordinates.
void Walker::FindWrittenTensors() {
  std::map<int, std::set<int>> roots;  // view var -> tensor indices it may view
  for (size_t t = 0; t < f_.tensors.size(); ++t)
    roots[f_.tensors[t].var].insert(static_cast<int>(t));
  std::vector<std::pair<int, int>> derives;  // (result, source) of view ops
  std::vector<int> dsts;
  std::function<void(const Block&)> scan = [&](const Block& b) {
    for (const Op& o : b) {
      switch (o.code) {
        case OpCode::kMov:
        case OpCode::kTile:
        case OpCode::kIndex:
        case OpCode::kSlice:
        case OpCode::kTranspose:
        case OpCode::kReshape:
          if (o.result >= 0 && !o.operands.empty()) derives.emplace_back(o.result, o.operands[0]);
          break;
        case OpCode::kStore:
          dsts.push_back(o.operands[0]);
          break;
        case OpCode::kCopy:
        case OpCode::kThreadCopy:
        case OpCode::kStoreFragment:
        case OpCode::kTmaStore:
          if (o.operands.size() > 1) dsts.push_back(o.operands[1]);
          break;
        default:
          break;
      }
      for (const Block& r : o.regions) scan(r);
    }
  };
  scan(f_.body);
  for (bool changed = true; changed;) {
    changed = false;
    for (const auto& [to, from] : derives) {
      auto it = roots.find(from);
      if (it == roots.end()) continue;
      std::set<int>& r = roots[to];
      for (int t : std::set<int>(it->second)) changed |= r.insert(t).second;
    }
  }
  for (int d : dsts) {
    auto it = roots.find(d);
    if (it != roots.end()) written_tensors_.insert(it->second.begin(), it->second.end());
  }
}

Cand Walker::BuildCand(const Event& w, const std::vector<expr>& L,
                       const std::map<unsigned, expr>& pins, expr extra, bool window,
                       std::vector<expr> bind) {
  // First instance: the pinned writer variables, the others renamed apart
  // from the reader's. The element a writer's element index must be to land
  // on reader coordinate L is solved in that same instance — its offset may
  // name a free writer variable (a loop filling sub-tile r of a buffer:
  // offset 64 r), which must be the one the guard and coordinates below
  // constrain, and bound with them.
  Inst in = MakeInst(pins);
  std::map<unsigned, expr> pins2;
  for (unsigned i = 0; i < in.from.size(); ++i) pins2.emplace(in.from[i].id(), in.to[i]);
  std::set<unsigned> solved;
  for (size_t j = 0; j < w.elem.size(); ++j) {
    if (j < w.elem_dim.size() && w.elem_dim[j] >= 0) {
      pins2.insert_or_assign(w.elem[j].id(), L[w.elem_dim[j]] - Sub(in, w.elem_off[j]));
      solved.insert(w.elem[j].id());
    }
  }
  Inst in2 = MakeInst(pins2);
  expr body = Sub(in2, *w.guard) && extra;
  for (size_t d = 0; d < L.size(); ++d) body = body && Sub(in2, w.coords[d]) == L[d];
  Cand c{&w, body, body, true, w.value, Sub(in2, *w.commit), Sub(in2, *w.thread), {}, window};
  c.tag.c.clear();
  for (const expr& x : w.value.c) c.tag.c.push_back(Sub(in2, x));
  for (int l : w.loops) c.iters.emplace_back(loops_[l].name, Sub(in2, *loops_[l].var));
  if (w.fence_bar) c.fence_bar = Sub(in2, *w.fence_bar);
  // free writer variables (renamed, neither pinned nor solved) -> exists
  std::set<unsigned> fresh;
  for (unsigned i = 0; i < in2.to.size(); ++i) {
    unsigned id = in2.from[i].id();
    if (!pins.count(id) && !solved.count(id)) fresh.insert(in2.to[i].id());
  }
  z3::expr_vector bound(c_);
  std::set<unsigned> seen;
  std::function<void(const expr&)> collect = [&](const expr& e) {
    if (e.is_const() && fresh.count(e.id())) {
      if (seen.insert(e.id()).second) bound.push_back(e);
      return;
    }
    if (e.is_app()) {
      for (unsigned i = 0; i < e.num_args(); ++i) collect(e.arg(i));
    }
  };
  collect(body);
  for (const expr& b : bind) {
    if (seen.insert(b.id()).second) bound.push_back(b);
  }
  if (bound.size() > 0) {
    c.qf = false;
    c.excl = z3::exists(bound, body);
  }
  return c;
}

std::vector<Cand> Walker::Candidates(const Event& rd, const std::vector<expr>& L,
                                     const std::string& field) {
  if (field.empty() && ResolvedByFills(rd.alloc)) return resolver_->Candidates(rd, L);
  std::vector<Cand> out;
  std::vector<const Event*> ws;
  for (const Event& w : events_) {
    if (!w.write || w.alloc != rd.alloc) continue;
    if (!(w.field == field || w.field == "*")) continue;
    ws.push_back(&w);
  }
  std::optional<expr> bind_extra;  // a writer-iteration variable of a "rest" candidate
  auto build = [&](const Event& w, const std::map<unsigned, expr>& pins, expr extra, bool window) {
    std::vector<expr> bind;
    if (bind_extra) bind.push_back(*bind_extra);
    out.push_back(BuildCand(w, L, pins, extra, window, bind));
  };
  // common loops
  for (int d = 0; d <= opt_.window; ++d) {
    for (auto it = ws.rbegin(); it != ws.rend(); ++it) {
      const Event& w = **it;
      size_t common = 0;
      while (common < w.loops.size() && common < rd.loops.size() &&
             w.loops[common] == rd.loops[common])
        ++common;
      std::map<unsigned, expr> pins;
      for (size_t i = 0; i + 1 < common; ++i)
        pins.emplace(loops_[w.loops[i]].var->id(), *loops_[w.loops[i]].var);
      if (common == 0) {
        // A straight-line writer before the read: exact when the read is
        // straight-line too; before a loop that holds the read it is older
        // than every iteration's writers (below, unordered).
        if (d > 0 || w.pos >= rd.pos || !w.loops.empty() || !rd.loops.empty()) continue;
        build(w, pins, c_.bool_val(true), true);
        continue;
      }
      const LoopInfo& lc = loops_[w.loops[common - 1]];
      if (d == 0 && w.pos >= rd.pos) continue;
      if (w.loops.size() != common) continue;  // inner loop of the writer: not exact
      pins.emplace(lc.var->id(), *lc.var - I(d * lc.step));
      build(w, pins, c_.bool_val(true), true);
    }
  }
  // everything older, in no particular order
  for (const Event* wp : ws) {
    const Event& w = *wp;
    size_t common = 0;
    while (common < w.loops.size() && common < rd.loops.size() &&
           w.loops[common] == rd.loops[common])
      ++common;
    Inst probe = MakeInst({});
    (void)probe;
    std::map<unsigned, expr> pins;
    if (common == 0) {
      if (w.pos >= rd.pos || (w.loops.empty() && rd.loops.empty())) continue;  // in the window
      build(w, pins, c_.bool_val(true), false);
      continue;
    }
    for (size_t i = 0; i + 1 < common; ++i)
      pins.emplace(loops_[w.loops[i]].var->id(), *loops_[w.loops[i]].var);
    const LoopInfo& lc = loops_[w.loops[common - 1]];
    // writer's instance of the common loop var, older than the window (or
    // any older iteration when the writer sits in an inner loop)
    expr kw = Fresh("kw");
    pins.emplace(lc.var->id(), kw);
    bool inner = w.loops.size() != common;
    expr lim = inner ? (w.pos < rd.pos ? kw <= *lc.var : kw < *lc.var)
                     : kw <= *lc.var - I((opt_.window + 1) * lc.step);
    bind_extra = kw;
    build(w, pins, lim, false);
    bind_extra.reset();
  }
  // writers before the common loop of... (covered above: common==0 with loops)
  return out;
}

void Walker::CheckLoopCarriedWrites(int loop) {
  const LoopInfo& li = loops_[loop];
  // A buffer whose every write is synchronous and untagged (computed values:
  // counters, a scan's partial sums) gives its readers no tags, whatever
  // iteration wrote it, and its readers' `uninitialized_read` needs only some
  // earlier write: missing a later one can only add a false alarm there.
  auto matters = [](const Event& w) {
    return w.async || w.tma || w.is_virtual || !w.field.empty() || w.value.kind != 0;
  };
  std::set<int> tagged_allocs;
  for (const Event& w : events_) {
    if (w.write && matters(w)) tagged_allocs.insert(w.alloc);
  }
  for (size_t r = 0; r < events_.size() && !stopped_; ++r) {
    const Event& rd = events_[r];
    if (rd.write || rd.alloc < 0 || rd.pos < li.pos_begin || rd.pos >= li.pos_end) continue;
    auto at = std::find(rd.loops.begin(), rd.loops.end(), loop);
    if (at == rd.loops.end()) continue;
    for (size_t k = 0; k < events_.size(); ++k) {
      const Event& w = events_[k];
      if (!w.write || w.alloc != rd.alloc || w.pos <= rd.pos || w.pos >= li.pos_end) continue;
      if (!matters(w) && !tagged_allocs.count(w.alloc)) continue;
      // The writer's instance in an earlier iteration of `loop` (the same
      // iterations of the loops around it) that writes the element read.
      std::map<unsigned, expr> pins;
      for (auto o = rd.loops.begin(); o != at; ++o)
        pins.emplace(loops_[*o].var->id(), *loops_[*o].var);
      expr kw = Fresh("kw");
      pins.emplace(li.var->id(), kw);
      expr earlier = (kw - *li.lo) / I(li.step) < (*li.var - *li.lo) / I(li.step);
      Cand c = BuildCand(w, rd.coords, pins, earlier, false, {kw});
      auto res = ProveIn(!(*rd.guard && c.excl));
      if (res.ok() && res->verdict == Verdict::kProved) continue;
      Unsupported(
          *rd.op,
          absl::StrCat("a read whose element a write later in the loop body (line ", w.op->loc.line,
                       ") may have written in an earlier iteration of ", li.name,
                       " (the walk follows writes in program order; move the write before "
                       "the read, e.g. refill the other buffer at the top of the body)"));
      return;
    }
  }
}

// The thread that holds fragment element (el[0], el[1]) (logical tile
// coordinates): the lane tables of mma.h for the instruction tile, the warp
// from the tile's place. A and B fragments are shared by the warps of a row
// (column) of the warp grid: one of them, free, in `range`.
expr Walker::FragThread(const dsl::FragGeom& g, const std::vector<expr>& el, expr* range) {
  const dsl::MmaInfo* mi = g.mma;
  bool isA = g.role == dsl::FragRole::kA, isB = g.role == dsl::FragRole::kB;
  if (el.size() != 2 || !mi || !(isA || isB || g.role == dsl::FragRole::kAcc) ||
      (isA && !mi->a_coord) || (isB && !mi->b_coord))
    return Fresh("reader");
  int tr = isA ? mi->m : isB ? mi->k : mi->m, tc = isA ? mi->k : mi->n;
  int regs = isA ? mi->regs_a : isB ? mi->regs_b : mi->regs_c;
  auto coord = isA ? mi->a_coord : isB ? mi->b_coord : mi->c_coord;
  std::vector<int> table(tr * tc, 0);
  for (int lane = 0; lane < mi->warp_size; ++lane) {
    for (int r = 0; r < regs; ++r) {
      int row, col;
      coord(lane, r, &row, &col);
      table[row * tc + col] = lane;
    }
  }
  // lane = table[(i % tr) * tc + j % tc], as a balanced ite over the index bits
  expr ix = z3::mod(el[0], I(tr)) * I(tc) + z3::mod(el[1], I(tc));
  std::function<expr(int, int)> tree = [&](int lo, int hi) -> expr {
    if (hi - lo == 1) return I(table[lo]);
    int mid = (lo + hi) / 2;
    return z3::ite(ix < I(mid), tree(lo, mid), tree(mid, hi));
  };
  expr lane = tree(0, tr * tc);
  expr wrow = el[0] / I(g.bm / g.wm), wcol = el[1] / I(g.bn / g.wn);
  if (isA || isB) {
    expr other = Fresh("wfree");
    *range = *range && other >= 0 && other < I(isA ? g.wn : g.wm);
    if (isA) wcol = other;
    if (isB) wrow = other;
  }
  return (I(g.first) + wrow * I(g.wn) + wcol) * I(mi->warp_size) + lane;
}

}  // namespace argus::verifier::engine
