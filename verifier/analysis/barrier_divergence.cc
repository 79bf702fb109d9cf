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
    default:  // not block-wide
      return;
  }
}

void BarrierDivergence::Check(const Op& op, const char* what) {
  std::map<unsigned, expr> pins;
  for (int l : w_.loop_stack()) pins.emplace(w_.loops()[l].var->id(), *w_.loops()[l].var);
  Inst in = MakeInst(pins);
  expr t2 = Sub(in, w_.tid_base());
  expr bad = w_.pc() && t2 >= 0 && t2 < I(f_.threads) && !Sub(in, w_.pc());
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

}  // namespace argus::verifier::engine
