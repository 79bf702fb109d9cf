#include "verifier/verify.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status.h"
#include "verifier/engine.h"

namespace argus::verifier {
namespace engine {

// The tensors some op of the kernel writes (stores, copies, fragment and TMA
// stores into a view derived from the tensor): loads from the others are
// functions of their coordinates.
void Engine::FindWrittenTensors() {
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

Cand Engine::BuildCand(const Event& w, const std::vector<expr>& L,
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

std::vector<Cand> Engine::Candidates(const Event& rd, const std::vector<expr>& L,
                                     const std::string& field) {
  if (field.empty() && tma_allocs_.count(rd.alloc)) return TmaCandidates(rd, L);
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

void Engine::CheckRead(const Event& rd) {
  // Kernels with TMA loads: reads are checked after the walk, when every
  // writer, wait and arrive is known.
  if (has_tma_ && !post_) {
    deferred_reads_.push_back(rd.id);
    return;
  }
  if (tma_allocs_.count(rd.alloc)) return CheckTmaRead(rd);
  // read of async data before its wait_group, and reads of unwritten memory
  std::vector<expr> L = rd.coords;
  auto cands = Candidates(rd, L, "");
  if (rd.wgmma_read) CheckProxyFence(rd, cands);
  expr none = *rd.guard;
  expr early = c_.bool_val(false), early_def = c_.bool_val(false);
  std::vector<std::pair<std::string, expr>> watch = BaseWatch();
  for (size_t j = 0; j < rd.elem.size(); ++j) watch.emplace_back(absl::StrCat("@e", j), rd.elem[j]);
  watch.emplace_back("@rt", *rd.thread);
  expr prior = c_.bool_val(true);
  for (size_t i = 0; i < cands.size(); ++i) {
    const Cand& c = cands[i];
    if (c.w->async) {
      expr landed = c_.bool_val(false);
      if (rd.has_wait) {
        landed = *c.commit < *rd.wait_commit - I(rd.wait_n) &&
                 (*c.thread == *rd.thread || *rd.bar > *rd.wait_bar);
      }
      expr ind = *rd.guard && prior && c.body && !landed;
      watch.emplace_back(absl::StrCat("@early", i), ind);
      early = early || ind;
      early_def = early_def || (c.window ? ind : ind && Within());
    }
    none = none && !c.excl;
    if (c.window) prior = prior && !c.excl;
  }
  const Op& op = *rd.op;
  Obligation(
      "read_before_wait", op, early_def, watch,
      [&](const ProofResult& r, Finding* f) {
        f->message =
            "shared memory read before the async copy that writes it has landed (missing or too "
            "weak "
            "wait_group, or no barrier after it)";
        for (size_t j = 0; j < rd.elem.size(); ++j)
          f->cex.coordinates.push_back(M(r, absl::StrCat("@e", j)));
        f->cex.thread = M(r, "@rt");
        f->cex.warp = f->cex.thread / f_.warp_size;
        f->cex.lane = f->cex.thread % f_.warp_size;
        for (size_t i = 0; i < cands.size(); ++i) {
          if (M(r, absl::StrCat("@early", i))) {
            f->cex.written_at = cands[i].w->op->loc;
            f->cex.written_source = Src(cands[i].w->op->loc);
            break;
          }
        }
      },
      early);
  bool all_qf = true;
  for (const Cand& c : cands) all_qf &= c.qf;
  (void)all_qf;  // quantified covers are fine here: Z3 decides them or says unknown
  {
    Obligation(
        "uninitialized_read", op, none && Within(), watch,
        [&](const ProofResult& r, Finding* f) {
          f->message = absl::StrCat("read of shared memory '", alloc_names_[rd.alloc],
                                    "' that no earlier write reaches");
          for (size_t j = 0; j < rd.elem.size(); ++j)
            f->cex.coordinates.push_back(M(r, absl::StrCat("@e", j)));
          f->cex.thread = M(r, "@rt");
          f->cex.warp = f->cex.thread / f_.warp_size;
          f->cex.lane = f->cex.thread % f_.warp_size;
          f->cex.actual = "uninitialized";
        },
        none);
  }
}

expr Engine::BoolBinary(dsl::ir::BinOp op, const expr& a, const expr& b) {
  using dsl::ir::BinOp;
  return op == BinOp::kAnd ? (a && b) : op == BinOp::kOr ? (a || b) : (a != b);
}

expr Engine::IntBinary(dsl::ir::BinOp op, const expr& a, const expr& b) {
  using dsl::ir::BinOp;
  auto bv = [&](const expr& x) { return z3::int2bv(32, x); };
  switch (op) {
    case BinOp::kAdd:
      return a + b;
    case BinOp::kSub:
      return a - b;
    case BinOp::kMul:
      return a * b;
    case BinOp::kDiv:
    case BinOp::kFloorDiv:
      return a / b;
    case BinOp::kMod:
      return z3::mod(a, b);
    case BinOp::kMin:
      return z3::ite(a < b, a, b);
    case BinOp::kMax:
      return z3::ite(a > b, a, b);
    case BinOp::kShl:
      return z3::bv2int(z3::shl(bv(a), bv(b)), false);
    case BinOp::kShr:
      return z3::bv2int(z3::lshr(bv(a), bv(b)), false);
    case BinOp::kAnd:
      return z3::bv2int(bv(a) & bv(b), false);
    case BinOp::kOr:
      return z3::bv2int(bv(a) | bv(b), false);
    case BinOp::kXor:
      return z3::bv2int(bv(a) ^ bv(b), false);
  }
  return Fresh("binop");
}

std::optional<expr> Engine::CallValue(const Op& call, const Function& caller,
                                      const std::function<expr(int)>& scalar_of, int depth) {
  if (call.ints.size() != 1 || call.ints[0] < 0 ||
      call.ints[0] >= static_cast<int64_t>(mod_.functions.size()))
    return std::nullopt;
  std::vector<std::optional<expr>> args;
  for (int x : call.operands) {
    if (IsIntType(caller.vars[x].type)) {
      args.push_back(scalar_of(x));
    } else {
      args.push_back(std::nullopt);  // a float: no term
    }
  }
  return DeviceCallValue(mod_.functions[call.ints[0]], args, depth);
}

// A @device function is scalar code that touches no memory (docs/dsl.md):
// its integer or bool result is a term over the arguments, so bounds that
// flow through a helper (a tile scheduler) are kept. Early returns select by
// their path conditions; a loop in it, or nesting deeper than 8 calls, makes
// the result unknown (a fresh value), and so do floats, thread indexes and
// warp operations for the values they feed.
std::optional<expr> Engine::DeviceCallValue(const Function& fn,
                                            const std::vector<std::optional<expr>>& args,
                                            int depth) {
  using dsl::ir::BinOp;
  using dsl::ir::CmpOp;
  if (depth > 8 || args.size() != fn.params.size()) return std::nullopt;
  struct State {
    expr pc, done;
    std::optional<expr> ret;
    bool opaque = false;
  };
  std::map<int, expr> env;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i]) env.insert_or_assign(fn.params[i], *args[i]);
  }
  auto is_bool = [&](int v) {
    const auto& t = fn.vars[v].type;
    return t.is_scalar() && t.dtype == dsl::DType::kBool;
  };
  auto is_int = [&](int v) { return IsIntType(fn.vars[v].type) && !is_bool(v); };
  auto get = [&](int v) -> expr {
    auto it = env.find(v);
    if (it != env.end()) return it->second;
    return is_bool(v) ? Fresh("dcond", true) : Fresh("dval");
  };
  auto as_int = [&](int v) {
    expr e = get(v);
    return e.is_bool() ? z3::ite(e, I(1), I(0)) : e;
  };
  auto as_bool = [&](int v) {
    expr e = get(v);
    return e.is_bool() ? e : e != 0;
  };
  State st{c_.bool_val(true), c_.bool_val(false), std::nullopt, false};
  std::function<void(const Block&)> eval = [&](const Block& b) {
    for (const Op& op : b) {
      if (st.opaque) return;
      const int r = op.result;
      switch (op.code) {
        case OpCode::kConst:
          if (r >= 0 && is_bool(r)) env.insert_or_assign(r, c_.bool_val(op.ints[0] != 0));
          if (r >= 0 && is_int(r)) env.insert_or_assign(r, I(op.ints[0]));
          break;
        case OpCode::kMov:
        case OpCode::kCast:
          if (r >= 0 && is_int(r) && IsIntType(fn.vars[op.operands[0]].type))
            env.insert_or_assign(r, as_int(op.operands[0]));
          else if (r >= 0 && is_bool(r) && is_bool(op.operands[0]))
            env.insert_or_assign(r, as_bool(op.operands[0]));
          else if (r >= 0)
            env.erase(r);
          break;
        case OpCode::kBinary:
          if (r >= 0 && is_bool(r)) {
            env.insert_or_assign(r, BoolBinary(static_cast<BinOp>(op.sub), as_bool(op.operands[0]),
                                               as_bool(op.operands[1])));
          } else if (r >= 0 && is_int(r)) {
            env.insert_or_assign(r, IntBinary(static_cast<BinOp>(op.sub), as_int(op.operands[0]),
                                              as_int(op.operands[1])));
          } else if (r >= 0) {
            env.erase(r);
          }
          break;
        case OpCode::kUnary: {
          auto u = static_cast<dsl::ir::UnaryOp>(op.sub);
          if (r >= 0 && u == dsl::ir::UnaryOp::kNot && is_bool(r))
            env.insert_or_assign(r, !as_bool(op.operands[0]));
          else if (r >= 0 && u == dsl::ir::UnaryOp::kNeg && is_int(r))
            env.insert_or_assign(r, -as_int(op.operands[0]));
          else if (r >= 0)
            env.erase(r);
          break;
        }
        case OpCode::kCompare:
          if (r >= 0 && IsIntType(fn.vars[op.operands[0]].type))
            env.insert_or_assign(r, ApplyCmp(static_cast<CmpOp>(op.sub), as_int(op.operands[0]),
                                             as_int(op.operands[1])));
          else if (r >= 0)
            env.erase(r);
          break;
        case OpCode::kSelect:
          if (r >= 0 && is_int(r))
            env.insert_or_assign(r, z3::ite(as_bool(op.operands[0]), as_int(op.operands[1]),
                                            as_int(op.operands[2])));
          else if (r >= 0 && is_bool(r))
            env.insert_or_assign(r, z3::ite(as_bool(op.operands[0]), as_bool(op.operands[1]),
                                            as_bool(op.operands[2])));
          else if (r >= 0)
            env.erase(r);
          break;
        case OpCode::kCall: {
          std::optional<expr> v = CallValue(
              op, fn, [&](int x) { return is_bool(x) ? as_bool(x) : as_int(x); }, depth + 1);
          if (r >= 0 && v) {
            env.insert_or_assign(r, *v);
          } else if (r >= 0) {
            env.erase(r);
          }
          break;
        }
        case OpCode::kReturn:
          if (!op.operands.empty()) {
            int x = op.operands[0];
            expr v = !IsIntType(fn.vars[x].type) ? Fresh("dret")
                     : is_bool(x)                ? as_bool(x)
                                                 : as_int(x);
            st.ret = st.ret ? z3::ite(st.pc && !st.done, v, *st.ret) : v;
          }
          st.done = st.done || st.pc;
          break;
        case OpCode::kIf: {
          expr cond = as_bool(op.operands[0]);
          expr pc0 = st.pc;
          std::map<int, expr> before = env;
          st.pc = pc0 && cond;
          eval(op.regions[0]);
          std::map<int, expr> then_env = std::move(env);
          env = before;
          st.pc = pc0 && !cond;
          if (op.regions.size() > 1) eval(op.regions[1]);
          st.pc = pc0;
          // Each variable is the branch's value on its side; one a branch
          // leaves unset is unknown there.
          std::map<int, expr> merged;
          std::set<int> vars;
          for (const auto& [v, e] : then_env) vars.insert(v);
          for (const auto& [v, e] : env) vars.insert(v);
          for (int v : vars) {
            auto t = then_env.find(v), e = env.find(v);
            expr tv = t != then_env.end() ? t->second : get(v);
            expr ev = e != env.end() ? e->second : get(v);
            if (tv.is_bool() != ev.is_bool()) continue;
            merged.insert_or_assign(v, z3::eq(tv, ev) ? tv : z3::ite(cond, tv, ev));
          }
          env = std::move(merged);
          break;
        }
        case OpCode::kFor:
        case OpCode::kWhile:
          st.opaque = true;  // loops are not followed here
          return;
        default:
          if (r >= 0) env.erase(r);  // floats, thread indexes, warp operations: unknown
          break;
      }
    }
  };
  eval(fn.body);
  if (st.opaque || !st.ret) return std::nullopt;
  // A path that falls off the end returns nothing the caller may use.
  expr done = st.done.simplify();
  if (done.is_true()) return *st.ret;
  return z3::ite(done, *st.ret, st.ret->is_bool() ? Fresh("dret", true) : Fresh("dret"));
}

void Engine::CheckLoopCarriedWrites(int loop) {
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

void Engine::CheckOob(const Op& op, const View& v, const std::vector<expr>& coords, expr guard,
                      const std::vector<expr>& elem) {
  if (v.space == dsl::Space::kLocal || !v.ok) return;
  expr bad = guard && !InBounds(v, coords);
  auto watch = BaseWatch();
  for (size_t d = 0; d < coords.size(); ++d) watch.emplace_back(absl::StrCat("@c", d), coords[d]);
  for (size_t j = 0; j < elem.size(); ++j) watch.emplace_back(absl::StrCat("@e", j), elem[j]);
  std::string name =
      v.space == dsl::Space::kGlobal ? f_.tensors[v.base].name : alloc_names_[v.base];
  Obligation("oob", op, bad, watch, [&, name](const ProofResult& r, Finding* f) {
    std::vector<int64_t> cs;
    for (size_t d = 0; d < coords.size(); ++d) cs.push_back(M(r, absl::StrCat("@c", d)));
    for (size_t j = 0; j < elem.size(); ++j)
      f->cex.coordinates.push_back(M(r, absl::StrCat("@e", j)));
    f->message = absl::StrCat("out-of-bounds access to ",
                              v.space == dsl::Space::kGlobal ? "tensor " : "shared buffer ", name,
                              " at (", absl::StrJoin(cs, ","), ")");
    f->cex.expected = "an index within the shape";
    f->cex.actual = absl::StrCat(name, "(", absl::StrJoin(cs, ","), ")");
  });
}

void Engine::CheckDivergence(const Op& op, const char* what) {
  std::map<unsigned, expr> pins;
  for (int l : loop_stack_) pins.emplace(loops_[l].var->id(), *loops_[l].var);
  Inst in = MakeInst(pins);
  expr t2 = Sub(in, tid_base_);
  expr bad = *pc_ && t2 >= 0 && t2 < I(f_.threads) && !Sub(in, *pc_);
  auto watch = BaseWatch();
  watch.emplace_back("@t2", t2);
  Obligation("barrier_divergence", op, bad, watch, [&](const ProofResult& r, Finding* f) {
    f->message = absl::StrCat(
        what,
        " under thread-dependent control flow: some threads of the block reach it, others do not");
    int64_t t = M(r, "@t2");
    f->cex.other = absl::StrCat("thread ", t, " (warp ", t / f_.warp_size, ", lane ",
                                t % f_.warp_size, ") does not reach it");
  });
}

void Engine::CheckRaces() {
  if (!counts_ok_) return;
  for (size_t a = 0; a < events_.size() && !stopped_; ++a) {
    const Event& w = events_[a];
    if (!w.write || w.field != "" || w.is_virtual || w.tma) continue;  // TMA: CheckTmaRead
    for (size_t b = 0; b < events_.size() && !stopped_; ++b) {
      const Event& x = events_[b];
      if (x.alloc != w.alloc || x.is_virtual || x.tma || (x.write && x.field != "")) continue;
      if (x.write && b < a) continue;
      Inst i1 = MakeInst({}), i2 = MakeInst({});
      expr same = Sub(i1, *w.bar) == Sub(i2, *x.bar) && Sub(i1, *w.thread) != Sub(i2, *x.thread);
      if (x.wgmma_read && x.wg_group) {
        // wgmma reads shared memory until a wgmma_wait covers its group: a
        // later write must come after a barrier that follows that wait (the
        // first wait after the read in the same iteration).
        const WgWait* end = nullptr;
        for (const WgWait& ww : wg_waits_) {
          if (ww.loops == x.loops && ww.pos > x.pos) {
            end = &ww;
            break;
          }
        }
        expr wb = Sub(i1, *w.bar), xb = Sub(i2, *x.bar);
        expr open =
            end ? (!(Sub(i2, end->covered) > Sub(i2, *x.wg_group)) || wb <= Sub(i2, end->bar))
                : c_.bool_val(true);
        same = same || (wb > xb && open);
      }
      expr bad = Sub(i1, *w.guard) && Sub(i2, *x.guard) && same;
      for (size_t d = 0; d < w.coords.size(); ++d)
        bad = bad && Sub(i1, w.coords[d]) == Sub(i2, x.coords[d]);
      std::vector<std::pair<std::string, expr>> watch;
      watch.emplace_back("@tid", Sub(i1, *w.thread));
      watch.emplace_back("@t2", Sub(i2, *x.thread));
      for (size_t d = 0; d < blk_.size(); ++d) watch.emplace_back(absl::StrCat("@b", d), blk_[d]);
      for (size_t d = 0; d < w.coords.size(); ++d)
        watch.emplace_back(absl::StrCat("@c", d), Sub(i1, w.coords[d]));
      for (int l : w.loops) watch.emplace_back("@loop:" + loops_[l].name, Sub(i1, *loops_[l].var));
      for (int l : x.loops) watch.emplace_back("@x:" + loops_[l].name, Sub(i2, *loops_[l].var));
      Obligation("shared_race", *x.op, bad, watch, [&](const ProofResult& r, Finding* f) {
        std::vector<int64_t> cs;
        for (size_t d = 0; d < w.coords.size(); ++d) cs.push_back(M(r, absl::StrCat("@c", d)));
        f->message =
            absl::StrCat("data race on shared buffer '", alloc_names_[w.alloc], "' element (",
                         absl::StrJoin(cs, ","), "): ", x.write ? "written" : "read",
                         " here while another thread writes it, with no barrier between",
                         x.wgmma_read ? " (wgmma reads shared memory until the wgmma_wait that "
                                        "covers it; the write must follow that wait and a barrier)"
                                      : "");
        f->cex.coordinates = cs;
        f->cex.written_at = w.op->loc;
        f->cex.written_source = Src(w.op->loc);
        std::vector<std::string> wi;
        for (int l : w.loops)
          wi.push_back(absl::StrCat(loops_[l].name, "=", M(r, "@loop:" + loops_[l].name)));
        f->cex.written_iteration = absl::StrJoin(wi, ",");
        f->cex.iterations.clear();
        for (int l : x.loops) f->cex.iterations[loops_[l].name] = M(r, "@x:" + loops_[l].name);
        int64_t t2 = M(r, "@t2");
        f->cex.thread = t2;
        f->cex.warp = t2 / f_.warp_size;
        f->cex.lane = t2 % f_.warp_size;
        int64_t t1 = M(r, "@tid");
        f->cex.other =
            absl::StrCat("racing write by thread ", t1, " (warp ", t1 / f_.warp_size, ", lane ",
                         t1 % f_.warp_size, ")", w.async ? ", an async copy in flight" : "");
      });
    }
  }
}

// One side of a tag comparison: the tag an element (index `idx`) of a
// fragment or view holds, as candidates (condition, tag) in recency order.
struct Side {
  bool ok = false;
  std::vector<expr> idx;
  std::optional<expr> guard, thread, none;
  std::vector<std::pair<expr, Tag>> cands;  // condition, tag
  std::vector<const Cand*> src;             // writer of each candidate (or null)
  std::vector<Cand> store;
  std::optional<dsl::FragGeom> geom;
};

void Engine::CheckAssert(const Op& op) {
  bool eq = op.code == OpCode::kAssertTagEq;
  std::string field = eq ? "" : op.name;
  auto side = [&](int var, const std::vector<expr>* pin, Side* s) {
    Val& x = vals_[var];
    const Event* rd = nullptr;
    bool global = false;
    View gview;
    if (x.k == Val::kFrag && x.read_event >= 0) {
      rd = &events_[x.read_event];
      global = x.frag_global;
      gview = x.view;
    } else if (x.k == Val::kView && x.view.ok && x.view.space != dsl::Space::kLocal) {
      Event& e = NewEvent(op, x.view, false);
      e.is_virtual = true;
      std::vector<int64_t> ext;
      expr range(c_);
      e.elem = ElemVars(x.view, "i", &ext, &range);
      e.coords = Coords(x.view, e.elem);
      e.guard = *pc_ && range;
      global = x.view.space == dsl::Space::kGlobal;
      if (global) e.alloc = -2;
      gview = x.view;
      rd = &e;
    } else {
      return;
    }
    z3::expr_vector from(c_), to(c_);
    if (pin) {
      if (pin->size() != rd->elem.size()) return;
      for (size_t j = 0; j < pin->size(); ++j) {
        from.push_back(rd->elem[j]);
        to.push_back((*pin)[j]);
      }
    }
    auto P = [&](const expr& e) { return pin ? const_cast<expr&>(e).substitute(from, to) : e; };
    s->ok = true;
    s->geom = rd->geom;
    for (const expr& e : rd->elem) s->idx.push_back(P(e));
    s->guard = P(*rd->guard);
    s->thread = P(*rd->thread);
    if (global) {
      Tag t;
      t.kind = field.empty() ? 1 : 0;
      t.tensor = gview.base;
      for (const expr& c : Coords(gview, rd->elem)) t.c.push_back(P(c));
      s->cands.emplace_back(c_.bool_val(true), t);
      s->src.push_back(nullptr);
      s->none = c_.bool_val(false);
      return;
    }
    s->store = Candidates(*rd, rd->coords, field);
    expr prior = c_.bool_val(true), none = c_.bool_val(true);
    for (const Cand& c : s->store) {
      Tag t = c.tag;
      for (expr& e : t.c) e = P(e);
      s->cands.emplace_back(P(prior && c.body), t);
      s->src.push_back(&c);
      if (c.window) prior = prior && !c.excl;
      none = none && !c.excl;
    }
    s->none = P(none);
  };
  Side a;
  side(op.operands[0], nullptr, &a);
  if (!a.ok) {
    Unsupported(op, "assert_tag on a value the verifier does not track (only fragments and views)");
    return;
  }
  Side b;
  if (eq) {
    side(op.operands[1], &a.idx, &b);
    if (!b.ok) {
      Unsupported(op, "assert_tag_eq on a value the verifier does not track");
      return;
    }
  } else {
    // expected, from the lambda
    if (op.regions.empty() || op.regions[0].empty()) return;
    for (size_t p = 0; p < op.region_params.size() && p < a.idx.size(); ++p)
      SetScalar(op.region_params[p], a.idx[p]);
    for (const Op& o : op.regions[0]) {
      if (o.code != OpCode::kYield) (void)Step(o);
    }
    const Op& y = op.regions[0].back();
    Tag t;
    t.kind = field.empty() ? 1 : 2;
    t.tensor = field.empty() ? static_cast<int>(op.ints.empty() ? -1 : op.ints[0]) : -1;
    for (int v : y.operands) t.c.push_back(IntOf(v));
    if (field.empty()) RecordOperandTag(op.operands[0], a.idx, t);
    b.ok = true;
    b.cands.emplace_back(c_.bool_val(true), t);
    b.src.push_back(nullptr);
    b.none = c_.bool_val(false);
  }
  auto watch = BaseWatch();
  for (size_t j = 0; j < a.idx.size(); ++j) watch.emplace_back(absl::StrCat("@e", j), a.idx[j]);
  watch.emplace_back("@rt", *a.thread);
  auto differ = [&](const Tag& x, const Tag& y) {
    if (x.kind != y.kind || (x.kind == 1 && x.tensor != y.tensor)) return c_.bool_val(true);
    if (x.kind == 0) return c_.bool_val(false);
    expr d = c_.bool_val(false);
    for (size_t i = 0; i < x.c.size() && i < y.c.size(); ++i) d = d || x.c[i] != y.c[i];
    return d;
  };
  expr bad = *a.guard && (*a.none || *b.none);
  expr within = Within();
  expr bad_def = bad && within;
  auto exact = [](const Cand* c) { return !c || c->window; };
  watch.emplace_back("@nonea", *a.guard && *a.none);
  for (size_t i = 0; i < a.cands.size(); ++i) {
    for (size_t j = 0; j < b.cands.size(); ++j) {
      expr ind = *a.guard && a.cands[i].first && b.cands[j].first &&
                 differ(a.cands[i].second, b.cands[j].second);
      watch.emplace_back(absl::StrCat("@w", i, "_", j), ind);
      bad = bad || ind;
      bad_def = bad_def || ((exact(a.src[i]) && exact(b.src[j])) ? ind : ind && within);
    }
    for (size_t d = 0; d < a.cands[i].second.c.size(); ++d)
      watch.emplace_back(absl::StrCat("@a", i, "_", d), a.cands[i].second.c[d]);
  }
  for (size_t j = 0; j < b.cands.size(); ++j) {
    for (size_t d = 0; d < b.cands[j].second.c.size(); ++d)
      watch.emplace_back(absl::StrCat("@b", j, "_", d), b.cands[j].second.c[d]);
  }
  for (size_t i = 0; i < a.src.size(); ++i) {
    if (!a.src[i]) continue;
    for (const auto& [n, v] : a.src[i]->iters)
      watch.emplace_back(absl::StrCat("@wi", i, ":", n), v);
  }
  Obligation(
      eq ? "tag_assert_eq" : "tag_assert", op, bad_def, watch,
      [&](const ProofResult& r, Finding* f) {
        std::vector<int64_t> cs;
        for (size_t j = 0; j < a.idx.size(); ++j) cs.push_back(M(r, absl::StrCat("@e", j)));
        f->cex.coordinates = cs;
        if (a.geom) {
          int64_t t = M(r, "@rt");
          int warp = static_cast<int>(t / f_.warp_size);
          f->cex.thread = t;
          f->cex.warp = warp;
          f->cex.lane = t % f_.warp_size;
          for (int e = 0; e < a.geom->PerLane(); ++e) {
            int rr, cc;
            a.geom->Coord(warp, static_cast<int>(f->cex.lane), e, &rr, &cc);
            if (cs.size() == 2 && rr == cs[0] && cc == cs[1]) {
              f->cex.element = e;
              break;
            }
          }
        }
        f->message = eq ? "assert_tag_eq does not hold: the two sides carry different tags"
                        : "tag assertion does not hold";
        f->cex.actual = "uninitialized (no write reaches it)";
        f->cex.expected = b.cands.size() == 1 ? TagText(r, "@b0_", b.cands[0].second, field)
                                              : "(see the second operand)";
        for (size_t i = 0; i < a.cands.size(); ++i) {
          for (size_t j = 0; j < b.cands.size(); ++j) {
            if (!M(r, absl::StrCat("@w", i, "_", j))) continue;
            f->cex.actual = TagText(r, absl::StrCat("@a", i, "_"), a.cands[i].second, field);
            f->cex.expected = TagText(r, absl::StrCat("@b", j, "_"), b.cands[j].second, field);
            if (const Cand* c = a.src[i]) {
              f->cex.written_at = c->w->op->loc;
              f->cex.written_source = Src(c->w->op->loc);
              std::vector<std::string> wi;
              for (const auto& [n, v] : c->iters)
                wi.push_back(absl::StrCat(n, "=", M(r, absl::StrCat("@wi", i, ":", n))));
              f->cex.written_iteration = absl::StrJoin(wi, ",");
              if (c->w->async) f->message += " (value from an async copy)";
            }
            return;
          }
        }
      },
      bad);
}

absl::Status Engine::Walk(const Block& b) {
  for (const Op& op : b) {
    ++pos_;
    if (Expired(op)) return absl::CancelledError("verification stopped");
    RETURN_IF_ERROR(Step(op));
    if (stopped_) return absl::CancelledError("verification stopped");
  }
  return absl::OkStatus();
}

absl::Status Engine::DoCopy(const Op& op) {
  Val& s = vals_[op.operands[0]];
  Val& d = vals_[op.operands[1]];
  if (s.k != Val::kView || d.k != Val::kView || !s.view.ok || !d.view.ok) {
    Unsupported(op, "copy between views the verifier cannot follow");
    return absl::OkStatus();
  }
  std::vector<int64_t> ext;
  expr range(c_);
  std::vector<expr> el = ElemVars(d.view, "e", &ext, &range);
  const dsl::ir::Layout& tl = op.layout;
  expr t(c_);
  int64_t vec = std::max<int64_t>(1, tl.vec);
  if (tl.shape.size() == 2 && el.size() == 2) {
    t = z3::mod(el[0], I(tl.shape[0])) * I(tl.shape[1]) + z3::mod(el[1] / I(vec), I(tl.shape[1]));
  } else if (tl.shape.size() == 1 && el.size() == 1) {
    t = z3::mod(el[0] / I(vec), I(tl.shape[0]));
  } else {
    Unsupported(op, "copy with this thread-layout rank");
    return absl::OkStatus();
  }
  z3::expr_vector from(c_), to(c_);
  from.push_back(tid_base_);
  to.push_back(t);
  expr g = const_cast<expr&>(*pc_).substitute(from, to) && range && t < I(f_.threads);
  auto sc = Coords(s.view, el);
  auto dc = Coords(d.view, el);
  CheckOob(op, s.view, sc, g, el);
  CheckOob(op, d.view, dc, g, el);
  bool async = !op.ints.empty() && op.ints[0] == 1;
  if (s.view.space == dsl::Space::kShared) {
    Event& e = NewEvent(op, s.view, false);
    e.elem = el;
    e.coords = sc;
    e.guard = g;
    e.thread = t;
  }
  if (d.view.space == dsl::Space::kShared) {
    Event& e = NewEvent(op, d.view, true);
    e.async = async;
    e.elem = el;
    e.elem_ext = ext;
    e.coords = dc;
    e.guard = g;
    e.thread = t;
    FillInverse(e, d.view);
    if (s.view.space == dsl::Space::kGlobal) {
      e.value.kind = 1;
      e.value.tensor = s.view.base;
      e.value.c = sc;
    }
  }
  if (s.view.space == dsl::Space::kShared)
    CheckRead(events_[events_.size() - (d.view.space == dsl::Space::kShared ? 2 : 1)]);
  return absl::OkStatus();
}

// The thread that holds fragment element (el[0], el[1]) (logical tile
// coordinates): the lane tables of mma.h for the instruction tile, the warp
// from the tile's place. A and B fragments are shared by the warps of a row
// (column) of the warp grid: one of them, free, in `range`.
expr Engine::FragThread(const dsl::FragGeom& g, const std::vector<expr>& el, expr* range) {
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

absl::Status Engine::DoLoadFragment(const Op& op) {
  Val& s = vals_[op.operands[0]];
  Val out;
  out.k = Val::kFrag;
  const dsl::ir::Type& ty = f_.vars[op.result].type;
  dsl::FragGeom g = ty.frag.Geom();
  out.geom = g;
  if (s.k != Val::kView || !s.view.ok) {
    vals_[op.result] = out;
    return absl::OkStatus();
  }
  std::vector<int64_t> ext;
  expr range(c_);
  std::vector<expr> el = ElemVars(s.view, "f", &ext, &range);
  auto coords = Coords(s.view, el);
  expr thread = FragThread(g, el, &range);
  CheckOob(op, s.view, coords, *pc_ && range, el);
  if (s.view.space == dsl::Space::kGlobal) {
    out.frag_global = true;
    out.view = s.view;
    Event& e = NewEvent(op, s.view, false);
    e.is_virtual = true;
    e.alloc = -2;
    e.elem = el;
    e.guard = *pc_ && range;
    e.thread = thread;
    e.geom = g;
    out.read_event = e.id;
  } else if (s.view.space == dsl::Space::kShared) {
    Event& e = NewEvent(op, s.view, false);
    e.elem = el;
    e.coords = coords;
    e.guard = *pc_ && range;
    e.thread = thread;
    e.geom = g;
    out.read_event = e.id;
    CheckRead(e);
  }
  vals_[op.result] = out;
  return absl::OkStatus();
}

absl::Status Engine::Step(const Op& op) {
  using dsl::ir::BinOp;
  using dsl::ir::CmpOp;
  using dsl::ir::SpecialOp;
  auto opnd = [&](int i) -> Val& { return vals_[op.operands[i]]; };
  switch (op.code) {
    case OpCode::kConst: {
      const dsl::ir::Type& t = f_.vars[op.result].type;
      if (IsIntType(t)) {
        SetScalar(op.result,
                  t.dtype == dsl::DType::kBool ? c_.bool_val(op.ints[0] != 0) : I(op.ints[0]));
      } else {
        vals_[op.result] = Val{};
      }
      return absl::OkStatus();
    }
    case OpCode::kMov:
      if (reg_vars_.count(op.result)) CheckAccRead(op, op.result, /*write=*/true);
      vals_[op.result] = opnd(0);
      if (acc_group_.count(op.operands[0])) {  // copying an accumulator reads it
        CheckAccRead(op, op.operands[0]);
        acc_group_.insert_or_assign(op.result, acc_group_.at(op.operands[0]));
      }
      return absl::OkStatus();
    case OpCode::kBinary: {
      if (!IsIntType(f_.vars[op.result].type)) {
        vals_[op.result] = Val{};
        return absl::OkStatus();
      }
      if (f_.vars[op.result].type.dtype == dsl::DType::kBool) {
        SetScalar(op.result, BoolBinary(static_cast<BinOp>(op.sub), BoolOf(op.operands[0]),
                                        BoolOf(op.operands[1])));
        return absl::OkStatus();
      }
      SetScalar(op.result, IntBinary(static_cast<BinOp>(op.sub), IntOf(op.operands[0]),
                                     IntOf(op.operands[1])));
      return absl::OkStatus();
    }
    case OpCode::kUnary: {
      if (!IsIntType(f_.vars[op.result].type)) {
        vals_[op.result] = Val{};
        return absl::OkStatus();
      }
      auto u = static_cast<dsl::ir::UnaryOp>(op.sub);
      if (u == dsl::ir::UnaryOp::kNot) {
        SetScalar(op.result, !BoolOf(op.operands[0]));
      } else if (u == dsl::ir::UnaryOp::kNeg) {
        SetScalar(op.result, -IntOf(op.operands[0]));
      } else {
        SetScalar(op.result, Fresh("bitnot"));
      }
      return absl::OkStatus();
    }
    case OpCode::kCompare: {
      if (!IsIntType(f_.vars[op.operands[0]].type)) {
        SetScalar(op.result, Fresh("fcmp", true));
        return absl::OkStatus();
      }
      expr a = IntOf(op.operands[0]), b = IntOf(op.operands[1]);
      std::optional<expr> r;
      r = ApplyCmp(static_cast<CmpOp>(op.sub), a, b);
      SetScalar(op.result, r);
      return absl::OkStatus();
    }
    case OpCode::kSelect: {
      if (!IsIntType(f_.vars[op.result].type)) {
        vals_[op.result] = Val{};
        return absl::OkStatus();
      }
      SetScalar(op.result,
                z3::ite(BoolOf(op.operands[0]), IntOf(op.operands[1]), IntOf(op.operands[2])));
      return absl::OkStatus();
    }
    case OpCode::kCast: {
      const dsl::ir::Type& t = f_.vars[op.result].type;
      if (IsIntType(t) && IsIntType(f_.vars[op.operands[0]].type)) {
        SetScalar(op.result, IntOf(op.operands[0]));
      } else {
        Havoc(op.result);
      }
      return absl::OkStatus();
    }
    case OpCode::kCall: {
      if (op.result < 0) return absl::OkStatus();
      std::optional<expr> v = CallValue(
          op, f_,
          [&](int x) { return f_.vars[x].type.dtype == dsl::DType::kBool ? BoolOf(x) : IntOf(x); },
          0);
      if (v && IsIntType(f_.vars[op.result].type)) {
        SetScalar(op.result, *v);
      } else {
        Havoc(op.result);
      }
      return absl::OkStatus();
    }
    case OpCode::kMath:
    case OpCode::kShfl:
    case OpCode::kWarpReduce:
      if (op.result >= 0) Havoc(op.result);
      return absl::OkStatus();
    case OpCode::kBlockReduce:
      CheckDivergence(op, "block_reduce (an implied barrier)");
      bar_ = *bar_ + 1;
      Havoc(op.result);
      return absl::OkStatus();
    case OpCode::kSpecial: {
      switch (static_cast<SpecialOp>(op.sub)) {
        case SpecialOp::kThreadId:
          SetScalar(op.result, *tid_);
          break;
        case SpecialOp::kBlockId: {
          size_t d = static_cast<size_t>(op.ints.empty() ? 0 : op.ints[0]);
          SetScalar(op.result, d < blk_.size() ? blk_[d] : I(0));
          break;
        }
        case SpecialOp::kGridDim: {
          size_t d = static_cast<size_t>(op.ints.empty() ? 0 : op.ints[0]);
          SetScalar(op.result, d < grid_.size() ? grid_[d] : I(1));
          break;
        }
        case SpecialOp::kWarpId:
          SetScalar(op.result, *tid_ / I(f_.warp_size));
          break;
        case SpecialOp::kLaneId:
          SetScalar(op.result, z3::mod(*tid_, I(f_.warp_size)));
          break;
        case SpecialOp::kWarpSize:
          SetScalar(op.result, I(f_.warp_size));
          break;
        case SpecialOp::kWarpGroupId:
          SetScalar(op.result, *tid_ / I(128));
          break;
      }
      return absl::OkStatus();
    }
    case OpCode::kAllocShared: {
      Val v;
      v.k = Val::kView;
      v.view.space = dsl::Space::kShared;
      v.view.base = static_cast<int>(allocs_.size());
      v.view.ok = true;
      allocs_.push_back(op.layout);
      alloc_names_.push_back(f_.vars[op.result].name);
      for (size_t d = 0; d < op.layout.shape.size(); ++d) {
        DimMap m;
        m.fixed = false;
        m.vdim = static_cast<int>(d);
        m.off = I(0);
        v.view.map.push_back(m);
        v.view.ext.push_back(op.layout.shape[d]);
      }
      vals_[op.result] = v;
      return absl::OkStatus();
    }
    case OpCode::kAllocLocal: {
      Val v;
      v.k = Val::kView;
      v.view.space = dsl::Space::kLocal;
      v.view.ok = false;
      vals_[op.result] = v;
      return absl::OkStatus();
    }
    case OpCode::kTile:
    case OpCode::kIndex:
    case OpCode::kSlice:
    case OpCode::kTranspose: {
      Val v = opnd(0);
      if (v.k != Val::kView || !v.view.ok) {
        vals_[op.result] = v;
        return absl::OkStatus();
      }
      View& w = v.view;
      if (op.code == OpCode::kTile) {
        for (DimMap& m : w.map) {
          if (m.fixed) continue;
          int j = m.vdim;
          m.off = *m.off + IntOf(op.operands[1 + j]) * I(op.ints[j]);
        }
        w.ext.assign(op.ints.begin(), op.ints.end());
      } else if (op.code == OpCode::kIndex) {
        int dim = static_cast<int>(op.ints[0]);
        expr i = IntOf(op.operands[1]);
        CheckOob(op, w, {}, c_.bool_val(false), {});  // counts nothing
        for (DimMap& m : w.map) {
          if (m.fixed) continue;
          if (m.vdim == dim) {
            m.fixed = true;
            m.off = *m.off + i;
          } else if (m.vdim > dim) {
            m.vdim--;
          }
        }
        w.ext.erase(w.ext.begin() + dim);
      } else if (op.code == OpCode::kSlice) {
        int dim = static_cast<int>(op.ints[0]);
        if (op.ints.size() > 1 && op.ints[1] != 1) {
          Unsupported(op, "strided slices");
          w.ok = false;
        }
        for (DimMap& m : w.map) {
          if (!m.fixed && m.vdim == dim) m.off = *m.off + IntOf(op.operands[1]);
        }
        const auto& rt = f_.vars[op.result].type;
        if (dim < rt.rank()) w.ext[dim] = rt.shape[dim];
      } else {
        for (DimMap& m : w.map) {
          if (!m.fixed) m.vdim = 1 - m.vdim;
        }
        std::swap(w.ext[0], w.ext[1]);
      }
      vals_[op.result] = v;
      return absl::OkStatus();
    }
    case OpCode::kReshape: {
      Val v = opnd(0);
      if (v.k == Val::kView && v.view.ok) {
        Unsupported(op, "reshape of a tracked view");
        v.view.ok = false;
      }
      vals_[op.result] = v;
      return absl::OkStatus();
    }
    case OpCode::kExtent: {
      Val& v = opnd(0);
      int d = static_cast<int>(op.ints[0]);
      if (v.k == Val::kView && v.view.ok && d < static_cast<int>(v.view.ext.size()) &&
          v.view.ext[d] >= 0) {
        SetScalar(op.result, I(v.view.ext[d]));
      } else if (v.k == Val::kView && v.view.ok && v.view.space == dsl::Space::kGlobal) {
        int bd = -1;
        for (size_t i = 0; i < v.view.map.size(); ++i) {
          if (!v.view.map[i].fixed && v.view.map[i].vdim == d) bd = static_cast<int>(i);
        }
        if (bd >= 0) {
          SetScalar(op.result, BaseExtent(v.view, bd) - *v.view.map[bd].off);
        } else {
          Havoc(op.result);
        }
      } else {
        Havoc(op.result);
      }
      return absl::OkStatus();
    }
    case OpCode::kLoad:
    case OpCode::kBufferLoad:
    case OpCode::kStore: {
      Val v = opnd(0);
      bool store = op.code == OpCode::kStore;
      size_t first = store ? 2 : 1;
      Val value = store ? opnd(1) : Val{};
      if (!store) Havoc(op.result);
      if (v.k != Val::kView || !v.view.ok) return absl::OkStatus();
      std::vector<expr> idx;
      for (size_t i = first; i < op.operands.size(); ++i) idx.push_back(IntOf(op.operands[i]));
      if (idx.size() != v.view.ext.size()) return absl::OkStatus();
      auto cs = Coords(v.view, idx);
      if (op.code != OpCode::kBufferLoad) CheckOob(op, v.view, cs, *pc_, {});
      if (v.view.space == dsl::Space::kShared) {
        Event& e = NewEvent(op, v.view, store);
        e.coords = cs;
        e.guard = *pc_;
        e.elem_dim.clear();
        if (store && value.tensor >= 0) {
          e.value.kind = 1;
          e.value.tensor = value.tensor;
          e.value.c = value.coords;
        }
        if (!store) CheckRead(e);
      } else if (v.view.space == dsl::Space::kGlobal && !store) {
        if (IsIntType(f_.vars[op.result].type) && v.view.base >= 0 &&
            !written_tensors_.count(v.view.base)) {
          // A tensor no thread of the kernel writes holds the same value at
          // a coordinate for every thread and iteration: a function of the
          // coordinates, so that two threads that read one address (an
          // expert id read by a producer and by the consumers) agree.
          z3::sort_vector dom(c_);
          z3::expr_vector args(c_);
          for (const expr& x : cs) {
            dom.push_back(c_.int_sort());
            args.push_back(x);
          }
          z3::func_decl ld = c_.function(absl::StrCat("ld:", f_.tensors[v.view.base].name).c_str(),
                                         dom, c_.int_sort());
          SetScalar(op.result, ld(args));
        }
        vals_[op.result].tensor = v.view.base;
        vals_[op.result].coords = cs;
      }
      return absl::OkStatus();
    }
    case OpCode::kCopy:
      return DoCopy(op);
    case OpCode::kCommitGroup:
      commit_ = *commit_ + 1;
      return absl::OkStatus();
    case OpCode::kWaitGroup:
      wait_ = Wait{*commit_, *bar_, op.ints.empty() ? 0 : op.ints[0]};
      return absl::OkStatus();
    case OpCode::kFragment: {
      Val v;
      v.k = Val::kFrag;
      v.ft = FragTags{};  // zero: no contributions yet
      vals_[op.result] = v;
      if (acc_group_.count(op.result)) {  // re-zeroing while a wgmma may write it
        CheckAccRead(op, op.result);
        acc_group_.insert_or_assign(op.result, I(-1));
      }
      return absl::OkStatus();
    }
    case OpCode::kLoadFragment:
      return DoLoadFragment(op);
    case OpCode::kMma:
      DoMma(op);
      return absl::OkStatus();
    case OpCode::kMbarrier: {
      CheckDivergence(op, "mbarrier() (initialization implies a barrier)");
      bar_ = *bar_ + 1;
      Val v;
      v.k = Val::kBar;
      v.bar = static_cast<int>(bars_.size());
      BarArray b;
      b.name = f_.vars[op.result].name;
      b.count = op.ints.empty() ? 1 : op.ints[0];
      b.arrivals = op.ints.size() > 1 ? op.ints[1] : 1;
      b.op = &op;
      bars_.push_back(b);
      vals_[op.result] = v;
      return absl::OkStatus();
    }
    case OpCode::kMbarArrive:
    case OpCode::kMbarArriveTx:
    case OpCode::kMbarWait:
      if (in_while_) {
        Unsupported(op, "an mbarrier operation inside a while loop");
        return absl::OkStatus();
      }
      return DoMbarOp(op);
    case OpCode::kTmaLoad:
      if (in_while_) {
        Unsupported(op, "a TMA load inside a while loop");
        return absl::OkStatus();
      }
      return DoTma(op);
    case OpCode::kFenceProxyAsync:
      RecordEpi(op, EpiOp::kFence);
      // Orders this thread's earlier ordinary shared writes (in an enclosing
      // control context) before later async-proxy reads.
      for (Event& e : events_) {
        if (!e.write || e.tma || e.is_virtual || e.alloc < 0 || e.fence_bar) continue;
        if (e.loops.size() < loop_stack_.size() ||
            !std::equal(loop_stack_.begin(), loop_stack_.end(), e.loops.begin()))
          continue;
        if (std::find(e.ctx.begin(), e.ctx.end(), pc_->id()) == e.ctx.end()) continue;
        e.fence_bar = *bar_;
      }
      return absl::OkStatus();
    case OpCode::kSetMaxNReg:
      CheckWarpgroupUniform(op, "setmaxnreg", nullptr);
      return absl::OkStatus();
    case OpCode::kWgmmaOperand:
      return DoWgmmaOperand(op);
    case OpCode::kTmaStore:
    case OpCode::kTmaStoreCommit:
    case OpCode::kTmaStoreWait:
    case OpCode::kWarpgroupBarrier:
      return DoEpilogue(op);
    case OpCode::kNamedBarrier:
      // Ping-pong turn order between warp groups. It orders no access for the
      // checks here (they take no ordering from it), so ignoring it can only
      // add reported races, never hide one; executed by whole warp groups.
      CheckWarpgroupUniform(op, "named_barrier_sync/arrive", nullptr);
      DoNamedBarrier(op);
      return absl::OkStatus();
    case OpCode::kWgmma:
      if (in_while_) Unsupported(op, "wgmma inside a while loop");
      return DoWgmma(op);
    case OpCode::kWgmmaCommit:
      CheckWarpgroupUniform(op, "wgmma_commit", nullptr);
      wg_commit_ = *wg_commit_ + 1;
      return absl::OkStatus();
    case OpCode::kWgmmaWait: {
      CheckWarpgroupUniform(op, "wgmma_wait", nullptr);
      expr cov = *wg_commit_ - I(op.ints.empty() ? 0 : op.ints[0]);
      wg_covered_ = z3::ite(cov > *wg_covered_, cov, *wg_covered_);
      wg_waits_.push_back(WgWait{pos_, loop_stack_, *bar_, *wg_covered_});
      return absl::OkStatus();
    }
    case OpCode::kStoreFragment: {
      CheckAccRead(op, op.operands[0]);
      RecordEpi(op, EpiOp::kWrite);
      if (const auto& at = f_.vars[op.operands[0]].type;
          at.is_frag() && at.frag.mma && at.frag.mma->wgmma) {
        dsl::FragGeom g = at.frag.Geom();
        CheckWarpgroupUniform(op, "store of a wgmma accumulator", &g, /*uniform=*/false);
      }
      Val& d = opnd(1);
      if (d.k == Val::kView && d.view.ok) {
        std::vector<int64_t> ext;
        expr range(c_);
        auto el = ElemVars(d.view, "s", &ext, &range);
        CheckOob(op, d.view, Coords(d.view, el), *pc_ && range, el);
        const auto& ft = f_.vars[op.operands[0]].type;
        if (d.view.space == dsl::Space::kGlobal && op.operands.size() == 2 && ft.is_frag() &&
            el.size() == 2 && ext[0] == ft.frag.rows && ext[1] == ft.frag.cols) {
          // The whole fragment into a global tile: element (i, j) to the
          // tile's (i, j), which must be where its accumulators' tags say.
          CheckPlacement(op, op.operands[0], el[0], el[1], Coords(d.view, el),
                         f_.tensors[d.view.base].name, *pc_ && range, loop_stack_, &op);
        }
        if (d.view.space == dsl::Space::kShared) {
          // A computed value lands in shared memory: a write (races, the
          // newest value of its elements) whose tag is no tensor's.
          const auto& at = f_.vars[op.operands[0]].type;
          Event& e = NewEvent(op, d.view, true);
          e.elem = el;
          e.elem_ext = ext;
          e.coords = Coords(d.view, el);
          e.guard = *pc_ && range;
          if (at.is_frag()) e.thread = FragThread(at.frag.Geom(), el, &*e.guard);
          FillInverse(e, d.view);
        }
      }
      return absl::OkStatus();
    }
    case OpCode::kBarrier:
      CheckDivergence(op, "barrier");
      bar_ = *bar_ + 1;
      return absl::OkStatus();
    case OpCode::kHint:
    case OpCode::kYield:
      return absl::OkStatus();
    case OpCode::kTag: {
      Val& v = opnd(0);
      if (v.k != Val::kView || !v.view.ok || v.view.space != dsl::Space::kShared) {
        Unsupported(op, "tag() on a buffer that is not a tracked shared-memory view");
        return absl::OkStatus();
      }
      std::vector<int64_t> ext;
      expr range(c_);
      Event& e = NewEvent(op, v.view, true);
      e.field = op.name;
      e.is_virtual = true;
      e.elem = ElemVars(v.view, "g", &ext, &range);
      e.coords = Coords(v.view, e.elem);
      e.guard = *pc_ && range;
      FillInverse(e, v.view);
      for (size_t p = 0; p < op.region_params.size() && p < e.elem.size(); ++p)
        SetScalar(op.region_params[p], e.elem[p]);
      for (const Op& o : op.regions[0]) {
        if (o.code != OpCode::kYield) RETURN_IF_ERROR(Step(o));
      }
      const Op& y = op.regions[0].back();
      e.value.kind = 2;
      e.value.c = {y.operands.empty() ? I(0) : IntOf(y.operands[0])};
      return absl::OkStatus();
    }
    case OpCode::kResetTags: {
      Val& v = opnd(0);
      if (v.k == Val::kView && v.view.ok && v.view.space == dsl::Space::kShared) {
        std::vector<int64_t> ext;
        expr range(c_);
        Event& e = NewEvent(op, v.view, true);
        e.field = "*";
        e.is_virtual = true;
        e.elem = ElemVars(v.view, "r", &ext, &range);
        e.coords = Coords(v.view, e.elem);
        e.guard = *pc_ && range;
        FillInverse(e, v.view);
      }
      return absl::OkStatus();
    }
    case OpCode::kAssertTag:
      CheckAssert(op);
      return absl::OkStatus();
    case OpCode::kAssertTagEq:
      CheckAssert(op);
      return absl::OkStatus();
    case OpCode::kReturn:
      Unsupported(op, "return inside a kernel");
      return absl::OkStatus();
    case OpCode::kFor: {
      std::set<int> as;
      Assigned(op.regions[0], &as);
      for (int v : as) {
        if (v != op.result) Havoc(v);
      }
      expr lo = IntOf(op.operands[0]), hi = IntOf(op.operands[1]);
      int64_t step = op.ints.empty() ? 1 : op.ints[0];
      LoopInfo li;
      li.op = &op;
      li.name = f_.vars[op.result].name.empty() ? "it" : f_.vars[op.result].name;
      li.var = Fresh(li.name);
      li.lo = lo;
      li.step = step;
      li.pos_begin = pos_;
      int id = static_cast<int>(loops_.size());
      expr k = *li.var;
      expr range = step > 0 ? (k >= lo && k < hi) : (k <= lo && k > hi);
      if (step != 1) range = range && z3::mod(k - lo, I(std::abs(step))) == 0;
      bool in_if = false, dyn = false;
      int nb = CountOps(op.regions[0], OpCode::kBarrier, &in_if, &dyn);
      int nc = CountOps(op.regions[0], OpCode::kCommitGroup, &in_if, &dyn);
      bool wg_if = false;
      int nwc = CountOps(op.regions[0], OpCode::kWgmmaCommit, &wg_if, &dyn);
      // (`dyn`: an inner loop of unknown trip count holds some of them, so
      // the counts above miss those: unsupported.)
      if (((nb || nc) && in_if) || dyn) counts_ok_ = false;
      if (nwc && wg_if) counts_ok_ = false;
      expr n = (k - lo) / I(step);
      expr trip = z3::ite(hi > lo, (hi - lo + I(step - 1)) / I(step), I(0));
      if (step < 0) trip = z3::ite(lo > hi, (lo - hi + I(-step - 1)) / I(-step), I(0));
      li.trip = trip.simplify();
      li.range = range;
      bool body_wg = false;
      std::set<int> body_accs;
      std::function<void(const Block&)> scan = [&](const Block& b) {
        for (const Op& o : b) {
          if (o.code == OpCode::kMbarWait || o.code == OpCode::kMbarArrive ||
              o.code == OpCode::kMbarArriveTx)
            li.has_mbar_sync = true;
          if (o.code == OpCode::kWgmma) body_accs.insert(o.operands[0]);
          if (o.code == OpCode::kWgmma && reg_vars_.count(o.operands[1]))
            body_accs.insert(o.operands[1]);
          if (o.code == OpCode::kWgmma || o.code == OpCode::kWgmmaWait ||
              o.code == OpCode::kWgmmaCommit)
            body_wg = true;
          for (const Block& r : o.regions) scan(r);
        }
      };
      scan(op.regions[0]);
      loops_.push_back(li);
      // wgmma groups: committed linearly in the iteration; what is pending at
      // the start of an iteration is bounded by the commits so far.
      expr wc0 = *wg_commit_;
      wg_commit_ = wc0 + n * I(nwc);
      auto acc_before = acc_group_;
      expr cov_before = *wg_covered_;
      if (body_wg) {
        // At the start of a later iteration: every wgmma of the earlier ones
        // is in a group below the commits so far (below them minus one when
        // each wgmma is followed by a commit in its iteration), and a
        // top-level wgmma_wait(w) after the body's last commit covered all
        // but w of them.
        std::function<bool(const Op&, OpCode)> has = [&](const Op& o, OpCode c) {
          if (o.code == c) return true;
          for (const Block& r : o.regions)
            for (const Op& x : r)
              if (has(x, c)) return true;
          return false;
        };
        std::function<bool(const Block&)> closed = [&](const Block& b) {
          bool open = false;
          for (const Op& o : b) {
            if (o.code == OpCode::kWgmma) {
              open = true;
            } else if (o.code == OpCode::kWgmmaCommit) {
              open = false;
            } else if (o.code == OpCode::kFor && has(o, OpCode::kWgmma)) {
              open = open || !closed(o.regions[0]);
            } else if (has(o, OpCode::kWgmma)) {
              open = true;
            }
          }
          return !open;
        };
        std::optional<int64_t> tail_wait;
        for (const Op& o : op.regions[0]) {
          if (o.code == OpCode::kWgmmaWait) {
            tail_wait = o.ints.empty() ? 0 : o.ints[0];
          } else if (has(o, OpCode::kWgmmaCommit) || has(o, OpCode::kWgmmaWait)) {
            tail_wait.reset();
          }
        }
        expr pend = closed(op.regions[0]) ? *wg_commit_ - 1 : *wg_commit_;
        for (int a : body_accs) acc_group_.emplace(a, I(-1));
        for (auto& [a, g] : acc_group_) g = z3::ite(n == 0, g, pend);
        if (tail_wait) {
          expr cov = *wg_commit_ - I(*tail_wait);
          wg_covered_ = z3::ite(n == 0, cov_before, z3::ite(cov > cov_before, cov, cov_before));
        }
      }
      ctx_.push_back(0);
      expr bar0 = *bar_, com0 = *commit_;
      auto saved_pc = pc_;
      auto saved_wait = wait_;
      bool has_wait = false;
      std::function<void(const Block&)> fw = [&](const Block& b) {
        for (const Op& o : b) {
          if (o.code == OpCode::kWaitGroup) has_wait = true;
          for (const Block& r : o.regions) fw(r);
        }
      };
      fw(op.regions[0]);
      if (has_wait) wait_.reset();
      bar_ = bar0 + n * I(nb);
      commit_ = com0 + n * I(nc);
      pc_ = *pc_ && range;
      ctx_keep_.push_back(*pc_);
      ctx_.back() = pc_->id();
      SetScalar(op.result, k);
      std::map<int, FragTags> carried;
      CarryBegin(id, op.regions[0], &carried);
      loop_stack_.push_back(id);
      RETURN_IF_ERROR(Walk(op.regions[0]));
      loop_stack_.pop_back();
      CarryEnd(id, carried);
      ctx_.pop_back();
      loops_[id].pos_end = pos_;
      CheckLoopCarriedWrites(id);
      pc_ = saved_pc;
      bar_ = bar0 + trip * I(nb);
      commit_ = com0 + trip * I(nc);
      wg_commit_ = wc0 + trip * I(nwc);
      if (body_wg) {
        // the state after the last iteration, or the state before when none ran
        z3::expr_vector from(c_), to(c_);
        from.push_back(k);
        to.push_back(lo + (trip - 1) * I(step));
        for (auto& [a, g] : acc_group_) {
          auto b = acc_before.find(a);
          g = z3::ite(trip > 0, g.substitute(from, to), b == acc_before.end() ? I(-1) : b->second);
        }
        wg_covered_ = z3::ite(trip > 0, wg_covered_->substitute(from, to), cov_before);
      }
      if (has_wait)
        wait_.reset();
      else
        wait_ = saved_wait;
      for (int v : as) Havoc(v);
      return absl::OkStatus();
    }
    case OpCode::kIf: {
      expr cond = BoolOf(op.operands[0]);
      auto saved_pc = pc_;
      std::vector<Val> before = vals_;
      auto wait0 = wait_;
      auto acc0 = acc_group_;
      expr cov0 = *wg_covered_;
      pc_ = *saved_pc && cond;
      ctx_keep_.push_back(*pc_);
      ctx_.push_back(pc_->id());
      RETURN_IF_ERROR(Walk(op.regions[0]));
      ctx_.pop_back();
      std::vector<Val> then_vals = vals_;
      auto wait1 = wait_;
      auto acc1 = acc_group_;
      expr cov1 = *wg_covered_;
      vals_ = before;
      wait_ = wait0;
      acc_group_ = acc0;
      wg_covered_ = cov0;
      if (op.regions.size() > 1) {
        pc_ = *saved_pc && !cond;
        ctx_keep_.push_back(*pc_);
        ctx_.push_back(pc_->id());
        RETURN_IF_ERROR(Walk(op.regions[1]));
        ctx_.pop_back();
      }
      pc_ = saved_pc;
      for (auto& [a, g] : acc1) acc_group_.emplace(a, I(-1));
      for (auto& [a, g] : acc_group_) {
        auto t = acc1.find(a);
        expr gt = t == acc1.end() ? I(-1) : t->second;
        if (!z3::eq(gt, g)) g = z3::ite(cond, gt, g);
      }
      if (!z3::eq(cov1, *wg_covered_)) wg_covered_ = z3::ite(cond, cov1, *wg_covered_);
      bool waits_differ = (wait1.has_value() != wait_.has_value()) ||
                          (wait1 && wait_ && !z3::eq(wait1->commit, wait_->commit));
      if (waits_differ) wait_.reset();
      MergeFragTags(cond, then_vals);
      for (size_t v = 0; v < vals_.size(); ++v) {
        Val& a = then_vals[v];
        Val& b = vals_[v];
        if (a.k == b.k && (a.k == Val::kInt || a.k == Val::kBool) && a.e && b.e) {
          if (!z3::eq(*a.e, *b.e)) b.e = z3::ite(cond, *a.e, *b.e);
          if (a.tensor != b.tensor) b.tensor = -1;
        } else if (a.k == Val::kFrag || a.k == Val::kView) {
          if (b.k == Val::kNone) b = a;
        } else if (a.k != b.k) {
          Havoc(static_cast<int>(v));
        }
      }
      return absl::OkStatus();
    }
    case OpCode::kFragEw:
    case OpCode::kFragRowReduce:
    case OpCode::kFragCoord:
    case OpCode::kFragRowFill:
    case OpCode::kToOperand:
      return DoFragMath(op);
    case OpCode::kWhile: {
      std::set<int> as;
      for (const Block& r : op.regions) Assigned(r, &as);
      for (int v : as) Havoc(v);
      bool in_if = false, dyn = false;
      bool sync = false;
      for (const Block& r : op.regions) {
        sync |= CountOps(r, OpCode::kBarrier, &in_if, &dyn) > 0 ||
                CountOps(r, OpCode::kCommitGroup, &in_if, &dyn) > 0 ||
                CountOps(r, OpCode::kWgmmaCommit, &in_if, &dyn) > 0;
      }
      if (sync) counts_ok_ = false;
      // fragments carried around the loop (an id no `for` loop has)
      const int wid = -2 - pos_;
      std::map<int, FragTags> carried;
      for (const Block& r : op.regions) CarryBegin(wid, r, &carried);
      ++in_while_;
      RETURN_IF_ERROR(Walk(op.regions[0]));
      expr cond = BoolOf(op.operands[0]);
      auto saved_pc = pc_;
      pc_ = *pc_ && cond;
      ctx_keep_.push_back(*pc_);
      ctx_.push_back(pc_->id());
      RETURN_IF_ERROR(Walk(op.regions[1]));
      ctx_.pop_back();
      --in_while_;
      pc_ = saved_pc;
      CarryEnd(wid, carried);
      for (int v : as) Havoc(v);
      return absl::OkStatus();
    }
  }
  return absl::OkStatus();
}

absl::Status Engine::Run() {
  vals_.assign(f_.vars.size(), Val{});
  for (size_t d = 0; d < f_.dims.size(); ++d) {
    auto it = opt_.dims.find(f_.dims[d]);
    expr v = c_.int_const(("dim:" + f_.dims[d]).c_str());
    if (it != opt_.dims.end()) {
      facts_.push_back(v == I(it->second));
      fixed_dims_.from.push_back(v);
      fixed_dims_.to.push_back(I(it->second));
    } else {
      facts_.push_back(v >= 1 && v <= I(opt_.max_dim));
    }
    // A fixed dim is its value in every term (constant folding keeps the
    // queries linear, e.g. tile loops over cdiv(K, BK) iterations).
    expr dv = it != opt_.dims.end() ? I(it->second) : v;
    dim_.push_back(dv);
    SetScalar(f_.dim_vars[d], dv);
  }
  for (size_t t = 0; t < f_.tensors.size(); ++t) {
    Val v;
    v.k = Val::kView;
    v.view = BaseView(f_.tensors[t], static_cast<int>(t));
    vals_[f_.tensors[t].var] = v;
  }
  FindWrittenTensors();
  for (const auto& s : f_.scalars) Havoc(s.var);
  tid_base_ = Fresh("tid");
  fi_ = c_.int_const("frag:i");
  fj_ = c_.int_const("frag:j");
  tid_ = tid_base_;
  pc_ = tid_base_ >= 0 && tid_base_ < I(f_.threads);
  bar_ = I(0);
  commit_ = I(0);
  wg_commit_ = I(0);
  wg_covered_ = I(0);
  ctx_keep_.push_back(*pc_);
  ctx_ = {pc_->id()};
  std::function<void(const Block&)> scan = [&](const Block& b) {
    for (const Op& o : b) {
      if (o.code == OpCode::kTmaLoad) has_tma_ = true;
      if (o.code == OpCode::kToOperand && o.result >= 0) reg_vars_.insert(o.result);
      for (const Block& r : o.regions) scan(r);
    }
  };
  scan(f_.body);
  // launch: the grid, uniform
  for (const Op& op : f_.launch) RETURN_IF_ERROR(Step(op));
  for (size_t d = 0; d < f_.grid.size(); ++d) {
    expr g = IntOf(f_.grid[d]);
    expr b = c_.int_const(absl::StrCat("block", d).c_str());
    facts_.push_back(b >= 0 && b < g);
    blk_.push_back(b);
    grid_.push_back(g);
  }
  // A stopped walk (deadline, unsupported construct) has said why in its
  // finding; the checks after the walk would rest on a partial kernel.
  if (absl::Status w = Walk(f_.body); !w.ok() && !stopped_) return w;
  post_ = true;
  if (!stopped_) CheckMbarriers();
  if (!stopped_) CheckEpilogue();
  if (!stopped_) CheckNamedBarriers();
  for (int id : deferred_reads_) {
    if (stopped_) break;
    loop_stack_ = events_[id].loops;
    CheckRead(events_[id]);
  }
  loop_stack_.clear();
  if (!stopped_) CheckRaces();
  // Findings that rest on the mbarrier model are only as good as that model:
  // with an mbarrier operation it cannot follow they are unknowns, not
  // violations (the `unsupported` findings say why).
  bool mb_unsupported = false;
  for (const MbOp& m : mbops_) mb_unsupported |= m.state < 0;
  if (mb_unsupported) {
    static const std::set<std::string> kDependent = {
        "tag_assert",         "tag_assert_eq",    "read_before_wait", "stage_overwrite",
        "uninitialized_read", "mbarrier_overrun", "mbarrier_hang",    "mbarrier_tx",
        "mbarrier_count",     "mbarrier_parity",  "shared_race",      "mma_k_mismatch"};
    for (Finding& f : rep_->findings) {
      if (f.severity != Severity::kViolation || !kDependent.count(f.check)) continue;
      f.severity = Severity::kUnknown;
      f.message = absl::StrCat(
          "unknown (rests on an mbarrier operation the verifier cannot follow): ", f.message);
    }
  }
  if (!counts_ok_) {
    Finding f;
    f.severity = Severity::kUnknown;
    f.check = "unsupported";
    f.message =
        "unsupported: barriers or commit_group under a conditional, or inside a loop of run-time "
        "trip count nested in "
        "another loop; races and async waits cannot be proved";
    f.loc = f_.loc;
    rep_->findings.push_back(f);
  }
  return absl::OkStatus();
}

}  // namespace engine

namespace {

using dsl::ir::Function;
using engine::Engine;

std::mutex cache_mu;
std::map<std::string, Report>& Cache() {
  static auto* c = new std::map<std::string, Report>();
  return *c;
}

}  // namespace

absl::StatusOr<Report> Verify(const dsl::ir::Module& module, const VerifyOptions& options) {
  auto start = std::chrono::steady_clock::now();
  std::string key =
      absl::StrCat(std::hash<std::string>()(dsl::ir::Dump(module)), "|", options.max_dim, "|",
                   options.solver_timeout_ms, "|", options.window);
  for (const auto& [k, v] : options.dims) absl::StrAppend(&key, "|", k, "=", v);
  absl::StrAppend(&key, "|kernel=", options.kernel);
  if (options.use_cache) {
    std::lock_guard<std::mutex> l(cache_mu);
    auto it = Cache().find(key);
    if (it != Cache().end()) {
      Report r = it->second;
      r.cached = true;
      return r;
    }
  }
  // One deadline for the whole request: every kernel, every rerun.
  const int64_t deadline_at = Engine::NowMs() + options.deadline_ms;
  Report rep;
  rep.file = module.source ? module.source->name() : "";
  std::vector<std::string> names;
  for (const Function& f : module.functions) {
    if (!f.is_kernel || (!options.kernel.empty() && f.name != options.kernel)) continue;
    names.push_back(f.name);
    try {
      // Widen the exact window while a refutation rests on older values.
      VerifyOptions o = options;
      for (;;) {
        Report kr;
        Engine e(module, f, o, &kr);
        if (options.deadline_ms > 0) e.set_deadline_at(deadline_at);
        RETURN_IF_ERROR(e.Run());
        if (e.needs_window && o.window < 16) {
          o.window = std::max(1, o.window) * 2;
          continue;
        }
        rep.obligations += kr.obligations;
        rep.proved += kr.proved;
        rep.findings.insert(rep.findings.end(), kr.findings.begin(), kr.findings.end());
        break;
      }
    } catch (const z3::exception& ex) {
      Finding fd;
      fd.severity = Severity::kUnknown;
      fd.check = "solver";
      fd.message = absl::StrCat("unknown: z3 error: ", ex.msg());
      fd.loc = f.loc;
      rep.findings.push_back(fd);
    }
  }
  if (names.empty() && !options.kernel.empty())
    return absl::InvalidArgumentError(
        absl::StrCat("no kernel named '", options.kernel, "' in ", rep.file));
  rep.kernel = absl::StrJoin(names, ",");
  rep.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  bool complete = true;
  for (const Finding& f : rep.findings) complete &= f.check != "deadline";
  if (options.use_cache && complete) {
    std::lock_guard<std::mutex> l(cache_mu);
    Cache()[key] = rep;
  }
  return rep;
}

absl::StatusOr<Report> VerifySource(const std::string& file_name, const std::string& text,
                                    const dsl::CheckOptions& check, const VerifyOptions& options) {
  auto src = std::make_shared<const dsl::SourceFile>(file_name, text);
  ASSIGN_OR_RETURN(dsl::ir::Module m, dsl::Compile(src, check));
  return Verify(m, options);
}

}  // namespace argus::verifier
