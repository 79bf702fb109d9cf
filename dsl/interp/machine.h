// dsl/interp/machine.h: the reference interpreter's machine — one kernel
// launch, run block by block on the CPU.
//
// A Machine compiles the kernel to bytecode (bytecode.h), binds the launch's
// arguments, runs the launch block for the grid, then runs every block: each
// of its threads runs (RunThread) until it parks at a synchronising op, blocks
// on a barrier or finishes, and the scheduler (schedule.cc) executes a parked
// op once every thread of its scope is there, wakes blocked threads whose
// wait passes, and reports deadlocks and divergence.
//
// Execution dispatches on the instruction's op family (ops.def): each
// family's handlers live in the file named for it — scalar.h, view.cc,
// memory.h/.cc, fragment.cc, fragment_math.cc, collectives.cc, barrier.cc,
// mbarrier.cc, tma.cc, wgmma.cc; control flow and calls are the thread loop
// itself (machine.cc). Errors are Status values naming the op's source
// location, the block and the thread (Err).
//
// Thread safety: a Machine is used by one caller for one launch; it mutates
// only its own state and the tensors handed to Launch.
#ifndef ARGUS_DSL_INTERP_MACHINE_H_
#define ARGUS_DSL_INTERP_MACHINE_H_

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "dsl/interp.h"
#include "dsl/interp/bytecode.h"
#include "dsl/interp/state.h"
#include "dsl/ir.h"

namespace argus::dsl::interp {

// The launch's value of each of the kernel's dims, in order.
absl::StatusOr<std::vector<int64_t>> ResolveDims(const ir::Function& k, const LaunchArgs& args);
// A tensor extent or stride at the given dims.
int64_t EvalSym(const ir::SymInt& s, const std::vector<int64_t>& dims);

class Machine {
 public:
  Machine(const ir::Module& m, const ir::Function& k, const LaunchArgs& args)
      : m_(m), k_(k), args_(args) {}

  absl::Status Launch(std::vector<HostTensor>* tensors, RunStats* stats);

 private:
  using Lanes = std::vector<Thread*>;

  // ---- launch.cc: arguments, the grid, per-block state.
  absl::Status CompileKernel();
  absl::Status BindScalars(const std::vector<int64_t>& dims);
  absl::Status BindTensors(const std::vector<int64_t>& dims,
                           const std::vector<HostTensor>& tensors);
  absl::Status ComputeGrid();
  void AllocateBlockState();
  void ResetBlock();
  absl::Status CheckBlockEnd() const;

  // ---- schedule.cc: one block's threads, run to the end.
  absl::Status RunBlock();
  absl::StatusOr<bool> StepWarps(Lanes& lanes);
  absl::StatusOr<bool> StepGroups(Lanes& lanes);
  bool WakeBlocked();
  // Runs the op the whole block is parked at, or describes why it is stuck.
  absl::Status StepBlock();
  // Runs a synchronising op (Insn::sync) for the threads of its scope.
  absl::Status ExecSync(Lanes& lanes, const Insn& in);

  // ---- machine.cc: one thread, until it parks, blocks or finishes. The
  // families' handlers park the thread (Park) at an op that synchronises its
  // scope, for ExecSync to run, or block it (t.st = kBlocked) at a wait.
  absl::Status RunThread(Thread& t);
  absl::Status ExecOp(Thread& t, const Insn& in);
  static absl::Status Park(Thread& t) {
    t.st = Thread::kSync;
    return absl::OkStatus();
  }
  absl::Status Err(const Thread& t, const ir::Op* op, const std::string& msg) const;
  int Call(Thread& t, const Insn& in, int pc);
  int Return(Thread& t, const Insn& in);

  // ---- scalar.h (inline: the thread loop's hot path).
  absl::Status ExecScalar(Thread& t, const Insn& in, Slot* s);
  int64_t Special(const Thread& t, ir::SpecialOp op, int64_t dim) const;

  // ---- view.cc
  absl::Status ExecView(Thread& t, const Insn& in);
  absl::Status SubviewCheck(const Thread& t, const ir::Op* op, const View& parent, int d,
                            int64_t lo, int64_t ext) const;

  // ---- memory.h (inline: loads and stores are hot) and memory.cc
  absl::Status ExecMemory(Thread& t, const Insn& in, Slot* s);
  absl::Status LoadStore(Thread& t, const Insn& in, Slot* s);
  // The physical element of v[idx]; an error when outside the view or its
  // buffer, or (soft) *oob = true instead.
  absl::Status Access(const Thread& t, const ir::Op* op, const View& v, const int64_t* idx, int n,
                      int64_t* phys, bool soft = false, bool* oob = nullptr) const;
  absl::Status AccessSlow(const Thread& t, const ir::Op* op, const View& v, const int64_t* idx,
                          int n, int64_t* phys, bool soft, bool* oob) const;
  absl::Status Copy(Thread& t, const Insn& in);
  void CommitGroup(Thread& t);
  void WaitGroup(Thread& t, int64_t n);

  // ---- fragment.cc
  absl::Status ExecFragment(Thread& t, const Insn& in);
  absl::Status LoadFragment(Thread& t, const Insn& in);
  absl::Status StoreFragment(Thread& t, const Insn& in);
  absl::Status Mma(Lanes& lanes, const Insn& in);

  // ---- fragment_math.cc (thread-local ops and the warp's row reductions).
  absl::Status ExecFragMath(Thread& t, const Insn& in);
  void FragElementwise(const Thread& t, const ir::Op& op, const FragGeom& g, int n,
                       std::vector<float>* out) const;
  absl::Status FragRowReduce(Lanes& lanes, const Insn& in);

  // ---- collectives.cc: shuffles, warp and block reductions.
  absl::Status Collective(Lanes& lanes, const Insn& in);

  // ---- barrier.cc: named barriers (barrier() and warpgroup_barrier() need
  // nothing beyond everyone's arrival).
  absl::Status ExecBarrier(Thread& t, const Insn& in);
  bool NamedBarrierPasses(const Thread& t, const Insn& in) const;
  std::string DescribeNamedWait(const Thread& t, const Insn& in) const;

  // ---- mbarrier.cc
  absl::Status ExecMbarrier(Thread& t, const Insn& in);
  absl::Status MbarInit(Lanes& lanes, const Insn& in);
  absl::StatusOr<Mbar*> MbarOf(const Thread& t, const ir::Op* op, int64_t bars, int64_t idx);
  absl::Status MbarArrive(const Thread& t, const ir::Op* op, Mbar& b, int64_t tx_add,
                          int64_t tx_done);
  bool MbarWaitPasses(const Thread& t, const Insn& in) const;
  std::string DescribeMbarWait(const Thread& t, const Insn& in) const;

  // ---- tma.cc: TMA loads and the TMA store epilogue (docs/dsl.md).
  absl::Status ExecTma(Thread& t, const Insn& in);
  absl::Status TmaLoad(Thread& t, const Insn& in);
  absl::Status TmaStore(Thread& t, const Insn& in);
  void TmaStoreWait(Thread& t, int64_t n);
  absl::Status CheckTmaGlobal(const Thread& t, const ir::Op* op, const View& g) const;
  absl::Status CheckTmaShared(const Thread& t, const ir::Op* op, const View& v,
                              const char* what) const;
  // Error when shared element `p` of `b` is written while a tma_store may
  // still read it.
  absl::Status CheckBulkFree(const Thread& t, const ir::Op* op, const Buffer& b, int64_t p) const;

  // ---- wgmma.cc
  absl::Status ExecWgmma(Thread& t, const Insn& in);
  absl::Status WgmmaGroup(Lanes& lanes, const Insn& in);
  absl::Status IssueWgmma(Lanes& lanes, GroupState& gs, const ir::Op& op);
  absl::Status RunWgmma(Lanes& lanes, const PendingMma& pm);
  absl::Status CheckTmaObserved(const Lanes& lanes, const ir::Op& op, const Buffer* buf,
                                int64_t p) const;
  void MarkReads(const View& v, int delta);
  absl::Status CheckWgmmaView(const Thread& t, const ir::Op* op, const View& v, bool is_a) const;
  // The error for fragment `frag` of t read or overwritten while t has
  // wgmmas in flight on it (frag_pending).
  absl::Status AccBusy(const Thread& t, const ir::Op* op, int frag) const;
  // AccBusy for the first lane with wgmmas in flight on `frag`, if any.
  absl::Status CheckAccFree(const Lanes& lanes, const ir::Op* op, int frag) const;

  const ir::Module& m_;
  const ir::Function& k_;
  const LaunchArgs& args_;
  int kernel_fn_ = 0;
  KernelSlots slots_;
  Program prog_;
  std::vector<Buffer> globals_;
  std::vector<Buffer> shared_;
  std::vector<std::vector<Mbar>> mbars_;  // by kMbarrier op, per block
  std::vector<std::string> mbar_names_;
  std::vector<int> mbar_base_;  // flat id of each array's first barrier
  int nmbars_ = 0;
  std::vector<GroupState> groups_;  // per warp group, per block
  std::array<NamedBar, 16> named_;  // per block
  std::vector<Thread> threads_;
  Lanes all_;  // every thread of the block
  std::vector<Slot> entry_slots_;
  std::vector<View> entry_views_;
  int64_t block_[3] = {0, 0, 0}, grid_[3] = {1, 1, 1};
  int64_t budget_ = 0, executed_ = 0;
};

}  // namespace argus::dsl::interp

#endif  // ARGUS_DSL_INTERP_MACHINE_H_
