#include "dsl/interp/machine.h"

#include "absl/strings/str_cat.h"
#include "dsl/interp/memory.h"
#include "dsl/interp/scalar.h"
#include "dsl/source.h"

namespace argus::dsl::interp {

using ir::OpFamily;

absl::Status Machine::Err(const Thread& t, const ir::Op* op, const std::string& msg) const {
  Diagnostic d;
  d.loc = op ? op->loc : Loc{};
  d.message = absl::StrCat(msg, " (block (", block_[0], ",", block_[1], ",", block_[2],
                           "), thread ", t.tid, ", warp ", t.warp, ", lane ", t.lane, ")");
  d.hint = "run `argus-dsl run` on small shapes to reproduce";
  if (m_.source) return absl::FailedPreconditionError(FormatDiagnostic(*m_.source, d));
  return absl::FailedPreconditionError(d.message);
}

// The loop keeps pc, the frame's slots and the step count in locals and
// writes them back when the thread leaves it: parked at a synchronising op
// (kSync), blocked (kBlocked), finished (kDone) or failed. Scalar ops, loads
// and stores, control flow and calls run inline; the other families through
// ExecOp.
absl::Status Machine::RunThread(Thread& t) {
  Slot* s = t.slots.data() + t.base;
  const Insn* code = prog_.code.data();
  int pc = t.pc;
  int64_t steps = 0;
  auto leave = [&](Thread::St st) {
    t.st = st;
    t.pc = pc;
    executed_ += steps;
    return absl::OkStatus();
  };
  auto fail = [&](absl::Status st) {
    t.pc = pc;
    executed_ += steps;
    return st;
  };
  auto over_budget = [&](const Insn& in) {
    return fail(Err(t, in.op,
                    absl::StrCat("instruction budget of ", budget_, " exceeded (runaway loop?)")));
  };
  while (true) {
    const Insn& in = code[pc];
    ++steps;
    switch (in.fam) {
      case OpFamily::kScalar:
        if (absl::Status st = ExecScalar(t, in, s); !st.ok()) return fail(std::move(st));
        break;
      case OpFamily::kMemory:
        if (absl::Status st = ExecMemory(t, in, s); !st.ok()) return fail(std::move(st));
        break;
      case OpFamily::kControl:
        switch (in.code) {
          case Bc::kJmp:
            if (in.imm <= pc && executed_ + steps > budget_) return over_budget(in);
            pc = static_cast<int>(in.imm);
            continue;
          case Bc::kJz:
            if (!s[in.a].i) {
              pc = static_cast<int>(in.imm);
              continue;
            }
            break;
          case Bc::kForTest:
            if (in.imm > 0 ? s[in.a].i >= s[in.b].i : s[in.a].i <= s[in.b].i) {
              pc = in.c;
              continue;
            }
            if (executed_ + steps > budget_) return over_budget(in);
            break;
          case Bc::kForStep:
            s[in.dst].i = WrapInt(in.dt, s[in.dst].i + in.imm);
            break;
          default:
            break;
        }
        break;
      case OpFamily::kCall:
        if (in.code == Bc::kHalt) return leave(Thread::kDone);
        pc = in.code == Bc::kCall ? Call(t, in, pc) : Return(t, in);
        s = t.slots.data() + t.base;
        continue;
      case OpFamily::kView:
      case OpFamily::kFragment:
      case OpFamily::kFragmentMath:
      case OpFamily::kMbarrier:
      case OpFamily::kTma:
      case OpFamily::kWgmma:
      case OpFamily::kBarrier:
      case OpFamily::kCollective:
      case OpFamily::kHint:
      case OpFamily::kTag:
        if (absl::Status st = ExecOp(t, in); !st.ok()) return fail(std::move(st));
        if (t.st != Thread::kReady) return leave(t.st);
        break;
    }
    ++pc;
  }
}

// One instruction of a family the thread loop does not run inline. A
// handler may park the thread at an op that synchronises its scope, or
// block it.
absl::Status Machine::ExecOp(Thread& t, const Insn& in) {
  switch (in.fam) {
    case OpFamily::kScalar:
      return ExecScalar(t, in, t.slots.data() + t.base);
    case OpFamily::kMemory:
      return ExecMemory(t, in, t.slots.data() + t.base);
    case OpFamily::kView:
      return ExecView(t, in);
    case OpFamily::kFragment:
      return ExecFragment(t, in);
    case OpFamily::kFragmentMath:
      return ExecFragMath(t, in);
    case OpFamily::kMbarrier:
      return ExecMbarrier(t, in);
    case OpFamily::kTma:
      return ExecTma(t, in);
    case OpFamily::kWgmma:
      return ExecWgmma(t, in);
    case OpFamily::kBarrier:
      return ExecBarrier(t, in);
    case OpFamily::kCollective:  // no per-thread part: every one synchronises
      return Park(t);
    case OpFamily::kHint:  // compiled to nothing
    case OpFamily::kTag:
    case OpFamily::kControl:  // the thread loop's own
    case OpFamily::kCall:
      break;
  }
  return absl::OkStatus();
}

// Enters device function in.imm with the call's arguments in its params;
// returns its entry.
int Machine::Call(Thread& t, const Insn& in, int pc) {
  const FnCode& fc = prog_.fns[in.imm];
  const Slot* s = t.slots.data() + t.base;
  int nb = t.base + prog_.fns[t.fn].frame;
  for (size_t i = 0; i < in.op->operands.size(); ++i) {
    t.slots[nb + fc.fn->params[i]] = s[in.op->operands[i]];
  }
  t.frames.push_back(Thread::Frame{pc + 1, t.base, in.dst, t.fn});
  t.base = nb;
  t.fn = static_cast<int>(in.imm);
  return fc.entry;
}

// Leaves the device function with its value (if any) in the call's result;
// returns the pc after the call.
int Machine::Return(Thread& t, const Insn& in) {
  Slot v{0};
  if (in.a >= 0) v = t.slots[t.base + in.a];
  Thread::Frame fr = t.frames.back();
  t.frames.pop_back();
  t.base = fr.base;
  t.fn = fr.fn;
  if (fr.dst >= 0) t.slots[t.base + fr.dst] = v;
  return fr.ret_pc;
}

}  // namespace argus::dsl::interp
