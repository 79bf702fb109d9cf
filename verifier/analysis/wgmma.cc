// verifier/analysis/wgmma.cc: wgmma groups and the accumulator and
// warp-group checks (see wgmma.h).
#include "verifier/analysis/wgmma.h"

#include <functional>

#include "absl/strings/str_cat.h"

namespace argus::verifier::engine {

using dsl::ir::OpFamily;

FamilySet Wgmma::Families() const {
  return {OpFamily::kScalar, OpFamily::kFragment, OpFamily::kFragmentMath, OpFamily::kWgmma,
          OpFamily::kBarrier};
}

void Wgmma::Start() {
  wg_commit_ = I(0);
  wg_covered_ = I(0);
  std::function<void(const Block&)> scan = [&](const Block& b) {
    for (const Op& o : b) {
      if (o.code == OpCode::kToOperand && o.result >= 0) reg_vars_.insert(o.result);
      for (const Block& r : o.regions) scan(r);
    }
  };
  scan(f_.body);
}

void Wgmma::Before(const Op& op) {
  switch (op.code) {
    case OpCode::kMov:
      if (reg_vars_.count(op.result)) CheckAccRead(op, op.result, /*write=*/true);
      if (acc_group_.count(op.operands[0])) {  // copying an accumulator reads it
        CheckAccRead(op, op.operands[0]);
        acc_group_.insert_or_assign(op.result, acc_group_.at(op.operands[0]));
      }
      return;
    case OpCode::kFragment:
      if (acc_group_.count(op.result)) {  // re-zeroing while a wgmma may write it
        CheckAccRead(op, op.result);
        acc_group_.insert_or_assign(op.result, I(-1));
      }
      return;
    case OpCode::kStoreFragment:
      CheckAccRead(op, op.operands[0]);
      if (const auto& at = f_.vars[op.operands[0]].type;
          at.is_frag() && at.frag.mma && at.frag.mma->wgmma) {
        dsl::FragGeom g = at.frag.Geom();
        CheckWarpgroupUniform(op, "store of a wgmma accumulator", &g, /*uniform=*/false);
      }
      return;
    case OpCode::kSetMaxNReg:
      return CheckWarpgroupUniform(op, "setmaxnreg", nullptr);
    case OpCode::kWgmma:
      return DoWgmma(op);
    case OpCode::kWgmmaCommit:
      CheckWarpgroupUniform(op, "wgmma_commit", nullptr);
      wg_commit_ = *wg_commit_ + 1;
      return;
    case OpCode::kWgmmaWait: {
      CheckWarpgroupUniform(op, "wgmma_wait", nullptr);
      expr cov = *wg_commit_ - I(op.ints.empty() ? 0 : op.ints[0]);
      wg_covered_ = z3::ite(cov > *wg_covered_, cov, *wg_covered_);
      wg_waits_.push_back(WaitPoint{w_.pos(), w_.loop_stack(), w_.bar(), *wg_covered_});
      return;
    }
    case OpCode::kWarpgroupBarrier:
      return CheckWarpgroupUniform(op, "warpgroup_barrier", nullptr);
    case OpCode::kNamedBarrier:
      // Ping-pong turn order between warp groups. It orders no access for the
      // checks here (they take no ordering from it), so ignoring it can only
      // add reported races, never hide one; executed by whole warp groups.
      return CheckWarpgroupUniform(op, "named_barrier_sync/arrive", nullptr);
    default:
      if (dsl::ir::Info(op.code).family == OpFamily::kFragmentMath) DoFragmentMath(op);
      return;
  }
}

void Wgmma::DoFragmentMath(const Op& op) {
  if (reg_vars_.count(op.result)) CheckAccRead(op, op.result, /*write=*/true);
  // Fragment math reads its data operands: a wgmma accumulator only after
  // the wgmma_wait that covers its last wgmma (col_index / row_fill read
  // only the geometry; to_operand's second operand names the target).
  if (op.code == OpCode::kFragEw || op.code == OpCode::kFragRowReduce ||
      op.code == OpCode::kToOperand) {
    for (size_t x = 0; x < op.operands.size(); ++x) {
      if (op.code != OpCode::kFragEw && x > 0) break;
      if (acc_group_.count(op.operands[x])) CheckAccRead(op, op.operands[x]);
    }
  }
}

void Wgmma::EnterLoop(const LoopFrame& l) {
  if (!l.n) return;  // a while loop: its commits make the counts unsupported
  const Op& op = *l.op;
  const expr& n = *l.n;
  bool body_wg = false;
  std::set<int> body_accs;
  std::function<void(const Block&)> scan = [&](const Block& b) {
    for (const Op& o : b) {
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
  // wgmma groups: committed linearly in the iteration; what is pending at
  // the start of an iteration is bounded by the commits so far.
  expr wc0 = *wg_commit_;
  wg_commit_ = wc0 + n * I(l.wgmma_commits);
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
  loop_states_.push_back(LoopState{wc0, cov_before, std::move(acc_before), body_wg});
}

void Wgmma::ExitLoop(const LoopFrame& l) {
  if (!l.n) return;
  const LoopState& st = loop_states_.back();
  const expr& k = *l.k;
  const expr& lo = *l.lo;
  const expr& trip = *l.trip;
  const int64_t step = l.step;
  const expr& wc0 = st.wc0;
  const expr& cov_before = st.cov_before;
  const auto& acc_before = st.acc_before;
  wg_commit_ = wc0 + trip * I(l.wgmma_commits);
  if (st.body_wg) {
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
}

void Wgmma::LeaveLoop(const LoopFrame& l) {
  if (l.n) loop_states_.pop_back();
}

void Wgmma::EnterIf(const expr& cond) {
  if_states_.push_back(IfState{acc_group_, {}, *wg_covered_, *wg_covered_});
}

void Wgmma::EnterElse(const expr& cond) {
  IfState& st = if_states_.back();
  st.acc1 = acc_group_;
  st.cov1 = *wg_covered_;
  acc_group_ = st.acc0;
  wg_covered_ = st.cov0;
}

void Wgmma::ExitIf(const expr& cond, const std::vector<Val>& then_vals) {
  const IfState& st = if_states_.back();
  const auto& acc1 = st.acc1;
  const expr& cov1 = st.cov1;
  for (auto& [a, g] : acc1) acc_group_.emplace(a, I(-1));
  for (auto& [a, g] : acc_group_) {
    auto t = acc1.find(a);
    expr gt = t == acc1.end() ? I(-1) : t->second;
    if (!z3::eq(gt, g)) g = z3::ite(cond, gt, g);
  }
  if (!z3::eq(cov1, *wg_covered_)) wg_covered_ = z3::ite(cond, cov1, *wg_covered_);
}

void Wgmma::LeaveIf() { if_states_.pop_back(); }

void Wgmma::DoWgmma(const Op& op) {
  const dsl::ir::Type& at = f_.vars[op.operands[0]].type;
  std::optional<dsl::FragGeom> g;
  if (at.is_frag()) g = at.frag.Geom();
  CheckWarpgroupUniform(op, "wgmma", g ? &*g : nullptr);
  for (int k = 1; k <= 2; ++k) {
    Val& x = w_.vals()[op.operands[k]];
    if (x.k == Val::kFrag && x.read_event >= 0) w_.events()[x.read_event].wg_group = *wg_commit_;
  }
  acc_group_.insert_or_assign(op.operands[0], *wg_commit_);
  if (reg_vars_.count(op.operands[1])) acc_group_.insert_or_assign(op.operands[1], *wg_commit_);
  // (Tags flow as through mma: fragment_tags.)
}

void Wgmma::CheckAccRead(const Op& op, int acc, bool write) {
  auto it = acc_group_.find(acc);
  if (it == acc_group_.end()) return;
  // A register A operand (to_operand) is read by its wgmmas until they
  // complete: reading it is fine, rewriting it is not.
  const bool reg = reg_vars_.count(acc) > 0;
  if (reg != write) return;
  expr bad = w_.pc() && it->second >= *wg_covered_;
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

void Wgmma::CheckWarpgroupUniform(const Op& op, const char* what, const dsl::FragGeom* g,
                                  bool uniform) {
  std::map<unsigned, expr> pins;
  for (int l : w_.loop_stack()) pins.emplace(w_.loops()[l].var->id(), *w_.loops()[l].var);
  Inst in = MakeInst(pins);
  expr t2 = Sub(in, w_.tid_base());
  expr wg = w_.tid_base() / I(128);
  expr bad =
      uniform ? w_.pc() && t2 >= 0 && t2 < I(f_.threads) && t2 / I(128) == wg && !Sub(in, w_.pc())
              : c_.bool_val(false);
  expr outside = c_.bool_val(false);
  if (g) outside = w_.pc() && (wg < I(g->first) || wg >= I(g->first + g->wm * g->wn));
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

}  // namespace argus::verifier::engine
