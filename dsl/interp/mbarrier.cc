// The mbarrier family: Hopper transaction barriers. A phase completes when
// all its expected arrivals and transaction bytes are in; the TMA writes it
// carries land then. mbarrier_wait blocks its thread while the phase of the
// awaited parity runs.
#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status.h"
#include "dsl/interp/machine.h"

namespace argus::dsl::interp {

absl::Status Machine::ExecMbarrier(Thread& t, const Insn& in) {
  if (in.sync != ir::OpScope::kThread) return Park(t);  // initialization: MbarInit
  const Slot* s = t.slots.data() + t.base;
  ASSIGN_OR_RETURN(Mbar * b, MbarOf(t, in.op, s[in.a].i, s[in.b].i));
  if (in.code != Bc::kMbarWait) {
    int64_t tx = in.code == Bc::kMbarArriveTx ? s[in.c].i : 0;
    if (tx < 0) return Err(t, in.op, absl::StrCat("negative transaction bytes ", tx));
    return MbarArrive(t, in.op, *b, tx, 0);
  }
  int64_t parity = s[in.c].i;
  if (parity != 0 && parity != 1)
    return Err(t, in.op, absl::StrCat("mbarrier_wait parity must be 0 or 1, got ", parity));
  if ((b->phase & 1) == parity) {  // the phase of this parity is still running
    t.st = Thread::kBlocked;
    return absl::OkStatus();
  }
  t.seen[b->id] = std::max(t.seen[b->id], b->phase);
  return absl::OkStatus();
}

// mbarrier(count, arrivals): every thread of the block is here; the array
// starts in phase 0 and each thread's var holds its index.
absl::Status Machine::MbarInit(Lanes& lanes, const Insn& in) {
  std::vector<Mbar>& bars = mbars_[in.imm];
  int id = mbar_base_[in.imm];
  for (Mbar& b : bars) {
    b = Mbar{};
    b.id = id++;
    b.arrivals = b.pending = in.op->ints[1];
  }
  for (Thread* t : lanes) t->slots[t->base + in.dst].i = in.imm;
  return absl::OkStatus();
}

absl::StatusOr<Mbar*> Machine::MbarOf(const Thread& t, const ir::Op* op, int64_t bars,
                                      int64_t idx) {
  if (bars < 0 || bars >= static_cast<int64_t>(mbars_.size()))
    return Err(t, op, "mbarrier used before its mbarrier() initialization");
  std::vector<Mbar>& v = mbars_[bars];
  if (idx < 0 || idx >= static_cast<int64_t>(v.size())) {
    return Err(t, op,
               absl::StrCat("barrier index ", idx, " outside ", mbar_names_[bars], " (", v.size(),
                            " barriers)"));
  }
  return &v[idx];
}

// One arrival (when tx_done == 0) plus `tx_add` expected bytes, or `tx_done`
// landed bytes; completes the phase when nothing is missing.
absl::Status Machine::MbarArrive(const Thread& t, const ir::Op* op, Mbar& b, int64_t tx_add,
                                 int64_t tx_done) {
  b.tx += tx_add - tx_done;
  if (tx_done == 0) {
    if (b.pending == 0) {
      return Err(t, op,
                 absl::StrCat("arrival on an mbarrier whose phase ", b.phase,
                              " already has all its arrivals (it waits for ", b.tx, " bytes)"));
    }
    --b.pending;
  }
  if (b.pending != 0 || b.tx != 0) return absl::OkStatus();
  for (const Pending& p : b.writes) {
    if (!p.buf->wgmma_readers.empty() && p.buf->wgmma_readers[p.phys] > 0) {
      return Err(t, op,
                 absl::StrCat("this TMA load lands in ", p.buf->name, " (element ", p.phys,
                              ") while a queued wgmma still reads it: the stage was refilled "
                              "before the wgmma_wait that covers its readers (release a stage "
                              "only after that wait)"));
    }
    p.buf->data[p.phys] = p.val;
    if (p.buf->tma_bar.empty()) {
      p.buf->tma_bar.assign(p.buf->data.size(), -1);
      p.buf->tma_phase.assign(p.buf->data.size(), 0);
    }
    p.buf->tma_bar[p.phys] = b.id;
    p.buf->tma_phase[p.phys] = b.phase + 1;
  }
  b.writes.clear();
  ++b.phase;
  b.pending = b.arrivals;
  return absl::OkStatus();
}

bool Machine::MbarWaitPasses(const Thread& t, const Insn& in) const {
  const Slot* s = t.slots.data() + t.base;
  const Mbar& b = mbars_[s[in.a].i][s[in.b].i];
  return (b.phase & 1) != s[in.c].i;
}

std::string Machine::DescribeMbarWait(const Thread& t, const Insn& in) const {
  const Slot* s = t.slots.data() + t.base;
  int64_t bars = s[in.a].i, idx = s[in.b].i;
  const Mbar& b = mbars_[bars][idx];
  int blocked = 0, done = 0, sync = 0;
  for (const Thread& o : threads_) {
    blocked += o.st == Thread::kBlocked;
    done += o.st == Thread::kDone;
    sync += o.st == Thread::kSync;
  }
  return absl::StrCat("mbarrier_wait(", mbar_names_[bars], "[", idx, "], parity ", s[in.c].i,
                      ") never returns: the barrier is in phase ", b.phase, " (parity ",
                      b.phase & 1, ") missing ", b.pending, " of ", b.arrivals, " arrival(s)",
                      b.tx ? absl::StrCat(" and ", b.tx, " transaction byte(s)") : "",
                      "; threads: ", blocked, " blocked on mbarriers, ", sync, " at collectives, ",
                      done, " finished");
}

}  // namespace argus::dsl::interp
