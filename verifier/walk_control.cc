// verifier/walk_control.cc: structured control flow — a `for` body is walked
// once at a symbolic iteration k (barrier and commit counts linear in k, the
// variables it assigns havoced), branches under their path conditions (the
// scalars merged with ite), a `while` body once with its condition.
#include <algorithm>
#include <functional>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "base/status.h"
#include "verifier/walker.h"

namespace argus::verifier::engine {

absl::Status Walker::StepControl(const Op& op) {
  switch (op.code) {
    case OpCode::kFor:
      return StepFor(op);
    case OpCode::kIf:
      return StepIf(op);
    case OpCode::kWhile:
      return StepWhile(op);
    default:  // not a control op
      return absl::OkStatus();
  }
}

absl::Status Walker::StepFor(const Op& op) {
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
  loops_.push_back(li);
  LoopFrame frame;
  frame.id = id;
  frame.op = &op;
  frame.n = n;
  frame.trip = trip;
  frame.k = k;
  frame.lo = lo;
  frame.step = step;
  frame.wgmma_commits = nwc;
  for (Analysis* a : analyses_) a->EnterLoop(frame);
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
  loop_stack_.push_back(id);
  RETURN_IF_ERROR(Walk(op.regions[0]));
  loop_stack_.pop_back();
  for (Analysis* a : analyses_) a->ExitLoopBody(frame);
  ctx_.pop_back();
  loops_[id].pos_end = pos_;
  CheckLoopCarriedWrites(id);
  pc_ = saved_pc;
  bar_ = bar0 + trip * I(nb);
  commit_ = com0 + trip * I(nc);
  for (Analysis* a : analyses_) a->ExitLoop(frame);
  if (has_wait)
    wait_.reset();
  else
    wait_ = saved_wait;
  for (int v : as) Havoc(v);
  for (Analysis* a : analyses_) a->LeaveLoop(frame);
  return absl::OkStatus();
}

absl::Status Walker::StepIf(const Op& op) {
  expr cond = BoolOf(op.operands[0]);
  auto saved_pc = pc_;
  std::vector<Val> before = vals_;
  auto wait0 = wait_;
  for (Analysis* a : analyses_) a->EnterIf(cond);
  pc_ = *saved_pc && cond;
  ctx_keep_.push_back(*pc_);
  ctx_.push_back(pc_->id());
  RETURN_IF_ERROR(Walk(op.regions[0]));
  ctx_.pop_back();
  std::vector<Val> then_vals = vals_;
  auto wait1 = wait_;
  vals_ = before;
  wait_ = wait0;
  for (Analysis* a : analyses_) a->EnterElse(cond);
  if (op.regions.size() > 1) {
    pc_ = *saved_pc && !cond;
    ctx_keep_.push_back(*pc_);
    ctx_.push_back(pc_->id());
    RETURN_IF_ERROR(Walk(op.regions[1]));
    ctx_.pop_back();
  }
  pc_ = saved_pc;
  for (Analysis* a : analyses_) a->ExitIf(cond, then_vals);
  bool waits_differ = (wait1.has_value() != wait_.has_value()) ||
                      (wait1 && wait_ && !z3::eq(wait1->commit, wait_->commit));
  if (waits_differ) wait_.reset();
  MergeScalars(cond, then_vals);
  for (Analysis* a : analyses_) a->LeaveIf();
  return absl::OkStatus();
}

void Walker::MergeScalars(const expr& cond, std::vector<Val>& then_vals) {
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
}

absl::Status Walker::StepWhile(const Op& op) {
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
  LoopFrame frame;
  frame.id = -2 - pos_;  // an id no `for` loop has
  frame.op = &op;
  for (Analysis* a : analyses_) a->EnterLoop(frame);
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
  for (Analysis* a : analyses_) a->ExitLoopBody(frame);
  for (Analysis* a : analyses_) a->ExitLoop(frame);
  for (int v : as) Havoc(v);
  for (Analysis* a : analyses_) a->LeaveLoop(frame);
  return absl::OkStatus();
}

void Walker::Assigned(const Block& b, std::set<int>* out) {
  for (const Op& op : b) {
    if (op.result >= 0) out->insert(op.result);
    for (const Block& r : op.regions) Assigned(r, out);
  }
}

int Walker::CountOps(const Block& b, OpCode code, bool* in_if, bool* dynamic, bool under_if) {
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
std::optional<int64_t> Walker::ConstIn(const Block& b, int var) {
  for (const Op& o : b) {
    if (o.result == var && o.code == OpCode::kConst && !o.ints.empty()) return o.ints[0];
  }
  return ConstOf(var);
}

std::optional<int64_t> Walker::ConstOf(int var) {
  Val& v = vals_[var];
  if (v.k != Val::kInt || !v.e) return std::nullopt;
  expr s = v.e->simplify();
  int64_t x;
  if (s.is_numeral_i64(x)) return x;
  return std::nullopt;
}

}  // namespace argus::verifier::engine
