#include "verifier/analysis/barrier_divergence.h"

#include "absl/strings/str_cat.h"

namespace argus::verifier::engine {

void BarrierDivergence::Before(const Op& op) {
  switch (op.code) {
    case OpCode::kBarrier:
      return Check(op, "barrier");
    case OpCode::kBlockReduce:
      return Check(op, "block_reduce (an implied barrier)");
    case OpCode::kMbarrier:
      return Check(op, "mbarrier() (initialization implies a barrier)");
    // Inside a `while` the lanes' loop state is havoced per thread (a
    // shuffle tree `while off > 0` would read as divergent): not checked
    // there, a limit docs/verifier.md states.
    case OpCode::kShfl:
      if (w_.in_while()) return;
      return Check(op, "a warp shuffle", /*warp=*/true);
    case OpCode::kWarpReduce:
      if (w_.in_while()) return;
      return Check(op, "a warp reduction", /*warp=*/true);
    default:  // not block-wide
      return;
  }
}

void BarrierDivergence::Check(const Op& op, const char* what, bool warp) {
  // The other thread is at the same iteration *count* of every enclosing
  // loop, not at the same loop variable: in `range(thread_id(), N, NT)` the
  // threads walk different indexes, and they stay in step when NT divides N.
  Inst in = MakeInst({});
  expr same_iteration = c_.bool_val(true);
  for (int l : w_.loop_stack()) {
    const LoopInfo& loop = w_.loops()[l];
    expr n = (*loop.var - *loop.lo) / I(loop.step);
    same_iteration = same_iteration && Sub(in, *loop.var) == Sub(in, *loop.lo) + n * I(loop.step);
  }
  expr t2 = Sub(in, w_.tid_base());
  expr peer = t2 >= 0 && t2 < I(f_.threads);
  if (warp) peer = peer && t2 / I(f_.warp_size) == w_.tid_base() / I(f_.warp_size);
  expr bad = w_.pc() && peer && same_iteration && !Sub(in, w_.pc());
  auto watch = BaseWatch();
  watch.emplace_back("@t2", t2);
  Obligation(warp ? "warp_divergence" : "barrier_divergence", op, bad, watch,
             [&](const ProofResult& r, Finding* f) {
               f->message =
                   absl::StrCat(what, " under thread-dependent control flow: some threads of the ",
                                warp ? "warp" : "block", " reach it, others do not");
               int64_t t = M(r, "@t2");
               f->cex.other = absl::StrCat("thread ", t, " (warp ", t / f_.warp_size, ", lane ",
                                           t % f_.warp_size, ") does not reach it");
             });
}

}  // namespace argus::verifier::engine
