// dsl/interp/state.h: the interpreter's run-time state — register slots,
// memory buffers and views onto them, the per-thread contexts, and the
// block-wide synchronisation objects (mbarriers, named barriers, wgmma
// queues).
//
// Thread safety: plain data owned by one Machine, which one caller drives.
#ifndef ARGUS_DSL_INTERP_STATE_H_
#define ARGUS_DSL_INTERP_STATE_H_

#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "dsl/ir.h"

namespace argus::dsl::interp {

// A scalar register: integers (and bools) in `i`, floats in `f`.
union Slot {
  int64_t i;
  double f;
};

struct Buffer {
  std::vector<Slot> data;
  DType dt = DType::kF32;
  Swizzle swz;
  Space space = Space::kGlobal;
  std::string name;
  // Shared buffers written by TMA: per element, the barrier (flat id) and the
  // phase whose completion delivered it (empty until the first TMA write).
  std::vector<int32_t> tma_bar;
  std::vector<int64_t> tma_phase;
  // Per element: queued wgmmas that will read it (empty until the first).
  std::vector<int32_t> wgmma_readers;
  // Per element: tma_stores that may still read it (not yet covered by a
  // tma_store_wait of their thread; empty until the first), and the line of
  // the latest of them.
  std::vector<int32_t> bulk_readers;
  std::vector<int32_t> bulk_line;
};

// A window onto a buffer: rank <= 4, element offset and strides before the
// buffer's swizzle.
struct View {
  Buffer* buf = nullptr;
  int64_t off = 0;
  int rank = 0;
  int64_t shape[4] = {0, 0, 0, 0};
  int64_t stride[4] = {0, 0, 0, 0};
  // A TMA's tile of a tensor may reach past the tensor's edge (the copy
  // engine fills those elements with zeros on a load and drops them on a
  // store): per dim, the elements inside it; -1: the whole extent.
  int64_t inside[2] = {-1, -1};
  bool Inside(int64_t i, int64_t j) const {
    return (inside[0] < 0 || i < inside[0]) && (inside[1] < 0 || j < inside[1]);
  }
};

// A write that lands later (cp.async until its wait_group, TMA until its
// mbarrier phase completes).
struct Pending {
  Buffer* buf;
  int64_t phys;
  Slot val;
};

// One mbarrier: phases complete when every expected arrival and every
// expected transaction byte is in; TMA writes land then.
struct Mbar {
  int id = 0;            // flat index over all barrier arrays
  int64_t arrivals = 1;  // per phase
  int64_t pending = 1;   // arrivals still missing in the current phase
  int64_t tx = 0;        // expected minus landed transaction bytes
  int64_t phase = 0;     // completed phases
  std::vector<Pending> writes;
};

// A hardware named barrier (bar.sync / bar.arrive id, threads) of the block: it
// completes a generation once `threads` threads arrived or synced on it.
struct NamedBar {
  int64_t threads = 0;  // the count of the generation in progress (0: none)
  int64_t arrived = 0;
  int64_t gen = 0;                // completed generations
  const ir::Op* first = nullptr;  // the op that started the generation in progress
};

// A wgmma issued by a warp group, executed when a wgmma_wait covers it.
struct PendingMma {
  const ir::Op* op;
  View a, b;
  // A from registers (to_operand): each lane's A fragment, read at issue.
  std::vector<std::vector<float>> a_regs;
};
// The shared elements one tma_store reads until a tma_store_wait covers it.
struct BulkRead {
  Buffer* buf;
  std::vector<int64_t> phys;
  const ir::Op* op;  // the tma_store
};
// A warp group's wgmma queue: issued since the last commit, and committed groups.
struct GroupState {
  std::vector<PendingMma> open;
  std::deque<std::vector<PendingMma>> groups;
};

struct Thread {
  int tid = 0, warp = 0, lane = 0;
  int pc = 0;
  // kSync: parked at a synchronising op until its whole scope is there;
  // kBlocked: waiting on an mbarrier phase or a named barrier.
  enum St : uint8_t { kReady, kSync, kBlocked, kDone } st = kReady;
  int base = 0;  // the current frame's first slot
  struct Frame {
    int ret_pc, base, dst, fn;
  };
  std::vector<Frame> frames;
  int fn = 0;
  std::vector<Slot> slots;
  std::vector<View> views;
  std::vector<std::vector<float>> frags;
  std::vector<int> frag_pending;               // wgmmas in flight on each fragment
  std::vector<const ir::Op*> frag_pending_op;  // the latest of them
  std::vector<int64_t> seen;                   // per barrier: completed phases observed
  std::vector<Buffer> locals;
  std::vector<Pending> open;  // cp.async writes since the last commit_group
  std::deque<std::vector<Pending>> groups;
  std::vector<BulkRead> bulk_open;  // tma_stores since the last tma_store_commit
  std::deque<std::vector<BulkRead>> bulk_groups;
  int64_t named_gen = 0;  // blocked in named_barrier_sync: the generation it waits out
};

}  // namespace argus::dsl::interp

#endif  // ARGUS_DSL_INTERP_STATE_H_
