// The barrier family's per-thread part: named barriers (bar.sync /
// bar.arrive id, threads). barrier() and warpgroup_barrier() synchronise
// their scope (Insn::sync) and need nothing more once everyone is there.
#include "absl/strings/str_cat.h"
#include "dsl/interp/machine.h"

namespace argus::dsl::interp {

// Named barriers: counts the thread into the barrier's generation in
// progress; the arrival that completes it starts the next.
// named_barrier_sync blocks the thread (t.st = kBlocked) until its generation
// completes.
absl::Status Machine::ExecBarrier(Thread& t, const Insn& in) {
  if (in.sync != ir::OpScope::kThread) return Park(t);  // barrier, warpgroup_barrier
  const Slot* s = t.slots.data() + t.base;
  int64_t id = s[in.a].i, n = in.imm;
  int64_t groups = (k_.threads + 127) / 128;
  const char* what = in.sub ? "named_barrier_sync" : "named_barrier_arrive";
  if (id < 1 || id > 15)
    return Err(t, in.op, absl::StrCat(what, ": barrier id ", id, " is outside 1..15"));
  if (prog_.uses_wg_barrier && id <= groups)
    return Err(t, in.op,
               absl::StrCat(what, ": barrier id ", id, " is warpgroup_barrier()'s (ids 1..", groups,
                            " in this kernel); take one above ", groups));
  NamedBar& b = named_[id];
  if (b.arrived > 0 && b.threads != n) {
    return Err(t, in.op,
               absl::StrCat(what, "(", id, ", ", n, ") joins a generation of barrier ", id,
                            " started with ", b.threads, " threads at line ",
                            b.first ? b.first->loc.line : 0, ":", b.first ? b.first->loc.col : 0,
                            ": every arrival of one generation must give the same count"));
  }
  if (b.arrived == 0) b.first = in.op;
  b.threads = n;
  t.named_gen = b.gen;
  if (++b.arrived == n) {
    b.arrived = 0;
    ++b.gen;
    return absl::OkStatus();
  }
  if (in.sub != 0) t.st = Thread::kBlocked;
  return absl::OkStatus();
}

bool Machine::NamedBarrierPasses(const Thread& t, const Insn& in) const {
  const Slot* s = t.slots.data() + t.base;
  return named_[s[in.a].i].gen != t.named_gen;
}

std::string Machine::DescribeNamedWait(const Thread& t, const Insn& in) const {
  const Slot* s = t.slots.data() + t.base;
  const NamedBar& nb = named_[s[in.a].i];
  return absl::StrCat("named_barrier_sync(", s[in.a].i, ", ", in.imm,
                      ") never returns: ", nb.arrived, " of ", nb.threads,
                      " threads arrived or synced on it");
}

}  // namespace argus::dsl::interp
