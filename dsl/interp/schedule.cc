// The block scheduler: runs a block's threads until all finish. Each round
// runs every ready thread until it parks or blocks, then executes the
// synchronising ops whose whole scope (warp, warp group, block) is parked at
// the same instruction, and wakes blocked threads whose wait passes. A round
// without progress is a deadlock or a divergent synchronisation, reported at
// the op a thread is stuck at.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "base/status.h"
#include "dsl/interp/machine.h"

namespace argus::dsl::interp {

using ir::OpFamily;
using ir::OpScope;

namespace {

// Lets the threads past the op they were parked at.
void Release(const std::vector<Thread*>& lanes) {
  for (Thread* t : lanes) {
    t->st = Thread::kReady;
    t->pc++;
  }
}

}  // namespace

absl::Status Machine::RunBlock() {
  Lanes lanes;
  while (true) {
    for (Thread& t : threads_) {
      if (t.st == Thread::kReady) RETURN_IF_ERROR(RunThread(t));
    }
    ASSIGN_OR_RETURN(bool warps, StepWarps(lanes));
    ASSIGN_OR_RETURN(bool groups, StepGroups(lanes));
    bool woken = WakeBlocked();
    if (warps || groups || woken) continue;
    for (const Thread& t : threads_) {
      if (t.st != Thread::kBlocked) continue;
      const Insn& in = prog_.code[t.pc];
      return Err(
          t, in.op,
          absl::StrCat("deadlock: ", in.code == Bc::kNamedBarrier ? DescribeNamedWait(t, in)
                                                                  : DescribeMbarWait(t, in)));
    }
    int done = 0;
    for (const Thread& t : threads_) done += t.st == Thread::kDone;
    if (done == k_.threads) return absl::OkStatus();
    RETURN_IF_ERROR(StepBlock());
  }
}

// Warps whose every lane is parked at the same warp-synchronising op.
absl::StatusOr<bool> Machine::StepWarps(Lanes& lanes) {
  bool progress = false;
  int nwarps = (k_.threads + k_.warp_size - 1) / k_.warp_size;
  for (int w = 0; w < nwarps; ++w) {
    lanes.clear();
    int pc = -1;
    bool all = true, any_sync = false;
    for (int l = w * k_.warp_size; l < std::min(k_.threads, (w + 1) * k_.warp_size); ++l) {
      Thread& t = threads_[l];
      lanes.push_back(&t);
      if (t.st == Thread::kSync && prog_.code[t.pc].sync == OpScope::kWarp) {
        any_sync = true;
        if (pc < 0)
          pc = t.pc;
        else if (pc != t.pc)
          all = false;
      } else {
        all = false;
      }
    }
    if (any_sync && all) {
      RETURN_IF_ERROR(ExecSync(lanes, prog_.code[pc]));
      Release(lanes);
      progress = true;
    }
  }
  return progress;
}

// Full warp groups (128 threads) parked at the same warp-group op.
absl::StatusOr<bool> Machine::StepGroups(Lanes& lanes) {
  bool progress = false;
  for (size_t g = 0; g < groups_.size(); ++g) {
    int lo = static_cast<int>(g) * 128, hi = std::min(k_.threads, lo + 128);
    const Thread& t0 = threads_[lo];
    if (t0.st != Thread::kSync || prog_.code[t0.pc].sync != OpScope::kWarpGroup) continue;
    bool all = hi - lo == 128;
    for (int l = lo; l < hi && all; ++l)
      all = threads_[l].st == Thread::kSync && threads_[l].pc == t0.pc;
    if (!all) continue;
    lanes.clear();
    for (int l = lo; l < hi; ++l) lanes.push_back(&threads_[l]);
    RETURN_IF_ERROR(ExecSync(lanes, prog_.code[t0.pc]));
    Release(lanes);
    progress = true;
  }
  return progress;
}

// Threads blocked on an mbarrier phase or a named barrier generation that
// has completed.
bool Machine::WakeBlocked() {
  bool progress = false;
  for (Thread& t : threads_) {
    if (t.st != Thread::kBlocked) continue;
    const Insn& in = prog_.code[t.pc];
    bool named = in.code == Bc::kNamedBarrier;
    if (!(named ? NamedBarrierPasses(t, in) : MbarWaitPasses(t, in))) continue;
    t.st = Thread::kReady;
    // A named barrier counted this thread when it blocked: resume after it.
    // An mbarrier_wait runs again and records the phase it observed.
    if (named) ++t.pc;
    progress = true;
  }
  return progress;
}

// Every unfinished thread is parked: at one block-wide op, which runs, or
// at ops that can never complete.
absl::Status Machine::StepBlock() {
  int done = 0, first_sync = -1;
  bool same = true;
  for (Thread& t : threads_) {
    if (t.st == Thread::kDone) {
      ++done;
      continue;
    }
    if (first_sync < 0)
      first_sync = t.tid;
    else if (t.pc != threads_[first_sync].pc)
      same = false;
  }
  const Thread& f = threads_[first_sync];
  const Insn& fin = prog_.code[f.pc];
  const bool block = fin.sync == OpScope::kBlock;
  if (done == 0 && same && block) {
    RETURN_IF_ERROR(ExecSync(all_, fin));
    Release(all_);
    return absl::OkStatus();
  }
  for (const Thread& t : threads_) {
    if (t.st == Thread::kDone) {
      return Err(f, fin.op,
                 absl::StrCat(block ? "barrier" : "warp collective", " is never reached by thread ",
                              t.tid, ", which finished the kernel (divergent ",
                              block ? "barrier)" : "collective)"));
    }
  }
  for (const Thread& t : threads_) {
    if (t.pc != f.pc) {
      const ir::Op* other = prog_.code[t.pc].op;
      return Err(f, fin.op,
                 absl::StrCat("divergent synchronisation: this thread waits here while thread ",
                              t.tid, " waits at line ", other ? other->loc.line : 0, ":",
                              other ? other->loc.col : 0));
    }
  }
  return Err(f, fin.op, "deadlock at a synchronising op");
}

absl::Status Machine::ExecSync(Lanes& lanes, const Insn& in) {
  switch (in.fam) {
    case OpFamily::kFragment:  // mma
      return Mma(lanes, in);
    case OpFamily::kFragmentMath:  // row reductions
      return FragRowReduce(lanes, in);
    case OpFamily::kCollective:
      return Collective(lanes, in);
    case OpFamily::kMbarrier:  // initialization
      return MbarInit(lanes, in);
    case OpFamily::kWgmma:
      return WgmmaGroup(lanes, in);
    case OpFamily::kBarrier:  // everyone is here: that is all a barrier does
      return absl::OkStatus();
    case OpFamily::kScalar:
    case OpFamily::kView:
    case OpFamily::kMemory:
    case OpFamily::kTma:
    case OpFamily::kHint:
    case OpFamily::kTag:
    case OpFamily::kCall:
    case OpFamily::kControl:
      break;
  }
  return absl::InternalError(
      absl::StrCat(ir::OpFamilyName(in.fam), " ops do not synchronise: ops.def marks none kSync"));
}

}  // namespace argus::dsl::interp
