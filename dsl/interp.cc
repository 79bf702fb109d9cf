#include "dsl/interp.h"

#include <array>
#include <chrono>
#include <cmath>
#include <cstring>
#include <deque>
#include <random>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status.h"

namespace argus::dsl {

int64_t HostTensor::Cosize() const {
  int64_t m = 0;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == 0) return 0;
    m += (shape[i] - 1) * stride[i];
  }
  return m + 1;
}

double& HostTensor::At(std::initializer_list<int64_t> idx) {
  int64_t o = 0;
  size_t d = 0;
  for (int64_t i : idx) o += i * stride[d++];
  return data[o];
}
double HostTensor::At(std::initializer_list<int64_t> idx) const {
  return const_cast<HostTensor*>(this)->At(idx);
}

namespace {

using ir::OpCode;

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

struct View {
  Buffer* buf = nullptr;
  int64_t off = 0;
  int rank = 0;
  int64_t shape[4] = {0, 0, 0, 0};
  int64_t stride[4] = {0, 0, 0, 0};
};

enum class I : uint8_t {
  kConst,
  kMov,
  kMovView,
  kMovFrag,
  kBinI,
  kBinF,
  kNeg,
  kNot,
  kBitNot,
  kCmpI,
  kCmpF,
  kSelect,
  kCast,
  kMath,
  kSpecial,
  kJmp,
  kJz,
  kForTest,
  kForStep,
  kCall,
  kRet,
  kHalt,
  kAllocShared,
  kAllocLocal,
  kTile,
  kIndex,
  kSlice,
  kTranspose,
  kReshape,
  kExtent,
  kLoad,
  kStore,
  kBufferLoad,
  kCopy,
  kCommit,
  kWait,
  kFragment,
  kLoadFrag,
  kStoreFrag,
  kShfl,
  kWarpReduce,
  kBlockReduce,
  kBarrier,
  kMma,  // synchronising
  kFragEw,
  kFragCoord,
  kFragRowFill,
  kToOperand,
  kFragRowReduce,  // synchronising (warp)
  kNop,
  // Hopper.
  kMbarInit,  // block-synchronising
  kMbarArrive,
  kMbarArriveTx,
  kMbarWait,  // may block the thread
  kTmaLoad,
  kWgmmaOperand,
  kWgmma,  // warp-group synchronising (with commit and wait)
  kWgmmaCommit,
  kWgmmaWait,
  kTmaStore,
  kTmaStoreCommit,
  kTmaStoreWait,
  kWgBarrier,  // warp-group synchronising
  kNamedBar,   // named_barrier_sync (may block the thread) / named_barrier_arrive
};

bool IsWarpSync(I c) {
  return c == I::kShfl || c == I::kWarpReduce || c == I::kMma || c == I::kFragRowReduce;
}
bool IsBlockSync(I c) { return c == I::kBarrier || c == I::kBlockReduce || c == I::kMbarInit; }
bool IsGroupSync(I c) {
  return c == I::kWgmma || c == I::kWgmmaCommit || c == I::kWgmmaWait || c == I::kWgBarrier;
}

struct Insn {
  I code;
  uint8_t sub = 0;
  DType dt = DType::kI32;   // result type
  DType dt2 = DType::kI32;  // operand type (casts, compares)
  int32_t dst = -1, a = -1, b = -1, c = -1;
  int64_t imm = 0;
  Slot k{0};
  const ir::Op* op = nullptr;
};

struct FnCode {
  int entry = 0;
  int frame = 0;  // slots
  const ir::Function* fn = nullptr;
};

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
struct GroupState {
  std::vector<PendingMma> open;
  std::deque<std::vector<PendingMma>> groups;
};

struct Thread {
  int tid = 0, warp = 0, lane = 0;
  int pc = 0;
  enum St : uint8_t { kReady, kSync, kBlocked, kDone } st = kReady;
  int base = 0;
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
  std::vector<Pending> open;
  std::deque<std::vector<Pending>> groups;
  std::vector<BulkRead> bulk_open;  // tma_stores since the last tma_store_commit
  std::deque<std::vector<BulkRead>> bulk_groups;
  int64_t named_gen = 0;  // blocked in named_barrier_sync: the generation it waits out
};

class Machine {
 public:
  Machine(const ir::Module& m, const ir::Function& k, const LaunchArgs& args)
      : m_(m), k_(k), args_(args) {}

  absl::Status Launch(std::vector<HostTensor>* tensors, RunStats* stats);

 private:
  // ---- compile
  void CompileFn(int index);
  void CompileBlock(const ir::Block& b, int fn);
  int Extra(int fn) { return code_fns_[fn].frame++; }
  void Add(Insn i) { code_.push_back(i); }

  // ---- run
  absl::Status RunThread(Thread& t);
  absl::Status ExecWarp(std::vector<Thread*>& lanes, const Insn& in);
  absl::Status ExecBlockSync(const Insn& in);
  absl::Status Err(const Thread& t, const ir::Op* op, const std::string& msg) const;
  absl::Status Access(const Thread& t, const ir::Op* op, const View& v, const int64_t* idx, int n,
                      int64_t* phys, bool soft = false, bool* oob = nullptr) const;
  absl::Status SubviewCheck(const Thread& t, const ir::Op* op, const View& parent, int d,
                            int64_t lo, int64_t ext) const;
  Slot Convert(Slot v, DType from, DType to) const;
  absl::Status Copy(Thread& t, const Insn& in);
  // Hopper.
  absl::Status ExecGroup(std::vector<Thread*>& lanes, const Insn& in);
  absl::Status RunWgmma(std::vector<Thread*>& lanes, const PendingMma& pm);
  absl::Status MbarArrive(const Thread& t, const ir::Op* op, Mbar& b, int64_t tx_add,
                          int64_t tx_done);
  absl::StatusOr<Mbar*> MbarOf(const Thread& t, const ir::Op* op, int64_t bars, int64_t idx);
  absl::Status TmaLoad(Thread& t, const Insn& in);
  // The TMA store epilogue (docs/dsl.md "TMA store epilogue").
  absl::Status CheckTmaGlobal(const Thread& t, const ir::Op* op, const View& g) const;
  absl::Status CheckTmaShared(const Thread& t, const ir::Op* op, const View& v,
                              const char* what) const;
  absl::Status TmaStore(Thread& t, const Insn& in);
  void TmaStoreWait(Thread& t, int64_t n);
  // Error when shared element `p` of `b` is written while a tma_store may
  // still read it.
  absl::Status CheckBulkFree(const Thread& t, const ir::Op* op, const Buffer& b, int64_t p) const;
  absl::Status CheckWgmmaView(const Thread& t, const ir::Op* op, const View& v, bool is_a) const;
  absl::Status CheckAccFree(const Thread& t, const ir::Op* op, int frag) const;
  // Fragment math (thread-local ops and the warp's row reductions).
  absl::Status FragLocal(Thread& t, const Insn& in);
  absl::Status FragRowReduce(std::vector<Thread*>& lanes, const Insn& in);
  void MarkReads(const View& v, int delta);
  bool WaitPasses(const Thread& t) const;
  std::string DescribeWait(const Thread& t) const;

  const ir::Module& m_;
  const ir::Function& k_;
  const LaunchArgs& args_;
  std::vector<Insn> code_;
  std::vector<FnCode> code_fns_;    // by module function index
  std::vector<int> pending_calls_;  // insn indices whose target is a function index
  std::vector<int> view_slot_;      // kernel var -> view index (-1)
  std::vector<int> frag_slot_;      // kernel var -> frag index (-1)
  int nviews_ = 0, nfrags_ = 0;
  std::map<const ir::Op*, int> shared_index_, local_index_;
  std::vector<Buffer> globals_;
  std::vector<Buffer> shared_;
  std::vector<std::vector<Mbar>> mbars_;  // by kMbarrier op, per block
  std::vector<std::string> mbar_names_;
  std::map<const ir::Op*, int> mbar_index_;
  std::vector<int> mbar_base_;  // flat id of each array's first barrier
  int nmbars_ = 0;
  std::vector<GroupState> groups_;  // per warp group, per block
  std::array<NamedBar, 16> named_;  // per block
  bool uses_wg_barrier_ = false;    // warpgroup_barrier() takes ids 1..warp groups
  absl::Status NamedBarrier(Thread& t, const Insn& in, bool* blocked);
  std::vector<Thread> threads_;
  std::vector<Slot> entry_slots_;
  std::vector<View> entry_views_;
  int kernel_fn_ = 0;
  int64_t block_[3] = {0, 0, 0}, grid_[3] = {1, 1, 1};
  int64_t budget_ = 0, executed_ = 0;
  int stack_size_ = 0;
};

// ---- compilation -------------------------------------------------------------------

void Machine::CompileFn(int index) {
  const ir::Function& f = m_.functions[index];
  code_fns_[index].entry = static_cast<int>(code_.size());
  code_fns_[index].fn = &f;
  code_fns_[index].frame = static_cast<int>(f.vars.size());
  CompileBlock(f.body, index);
  Insn end;
  end.code = f.is_kernel ? I::kHalt : I::kRet;
  Add(end);
}

void Machine::CompileBlock(const ir::Block& b, int fn) {
  const ir::Function& f = m_.functions[fn];
  auto ty = [&](int v) -> const ir::Type& { return f.vars[v].type; };
  for (const ir::Op& op : b) {
    Insn in;
    in.op = &op;
    in.dst = op.result;
    if (!op.operands.empty()) in.a = op.operands[0];
    if (op.operands.size() > 1) in.b = op.operands[1];
    if (op.operands.size() > 2) in.c = op.operands[2];
    in.sub = op.sub;
    if (op.result >= 0) in.dt = ty(op.result).dtype;
    switch (op.code) {
      case OpCode::kConst:
        in.code = I::kConst;
        if (IsFloat(in.dt))
          in.k.f = op.fval;
        else
          in.k.i = op.ints.empty() ? 0 : op.ints[0];
        break;
      case OpCode::kMov:
        in.code = view_slot_[op.result] >= 0 ? I::kMovView
                  : ty(op.result).is_frag()  ? I::kMovFrag
                                             : I::kMov;
        if (in.code == I::kMovView) {
          in.dst = view_slot_[op.result];
          in.a = view_slot_[in.a];
        }
        if (in.code == I::kMovFrag) {
          in.dst = frag_slot_[op.result];
          in.a = frag_slot_[in.a];
        }
        break;
      case OpCode::kBinary:
        in.code = IsFloat(in.dt) ? I::kBinF : I::kBinI;
        break;
      case OpCode::kUnary:
        in.code = op.sub == static_cast<uint8_t>(ir::UnaryOp::kNeg)   ? I::kNeg
                  : op.sub == static_cast<uint8_t>(ir::UnaryOp::kNot) ? I::kNot
                                                                      : I::kBitNot;
        break;
      case OpCode::kCompare:
        in.dt2 = ty(in.a).dtype;
        in.code = IsFloat(in.dt2) ? I::kCmpF : I::kCmpI;
        break;
      case OpCode::kSelect:
        in.code = I::kSelect;
        break;
      case OpCode::kCast:
        in.code = I::kCast;
        in.dt2 = ty(in.a).dtype;
        break;
      case OpCode::kMath:
        in.code = I::kMath;
        break;
      case OpCode::kSpecial:
        in.code = I::kSpecial;
        in.imm = op.ints.empty() ? 0 : op.ints[0];
        break;
      case OpCode::kAllocShared:
        in.code = I::kAllocShared;
        in.dst = view_slot_[op.result];
        in.imm = shared_index_[&op];
        break;
      case OpCode::kAllocLocal:
        in.code = I::kAllocLocal;
        in.dst = view_slot_[op.result];
        in.imm = local_index_[&op];
        break;
      case OpCode::kTile:
        in.code = I::kTile;
        break;
      case OpCode::kIndex:
        in.code = I::kIndex;
        break;
      case OpCode::kSlice:
        in.code = I::kSlice;
        break;
      case OpCode::kTranspose:
        in.code = I::kTranspose;
        break;
      case OpCode::kReshape:
        in.code = I::kReshape;
        break;
      case OpCode::kExtent:
        in.code = I::kExtent;
        in.a = view_slot_[in.a];
        break;
      case OpCode::kLoad:
        in.code = I::kLoad;
        in.a = view_slot_[in.a];
        break;
      case OpCode::kBufferLoad:
        in.code = I::kBufferLoad;
        in.a = view_slot_[in.a];
        break;
      case OpCode::kStore:
        in.code = I::kStore;
        in.a = view_slot_[in.a];
        break;
      case OpCode::kCopy:
        in.code = I::kCopy;
        break;
      case OpCode::kCommitGroup:
        in.code = I::kCommit;
        break;
      case OpCode::kWaitGroup:
        in.code = I::kWait;
        in.imm = op.ints[0];
        break;
      case OpCode::kFragment:
        in.code = I::kFragment;
        in.dst = frag_slot_[op.result];
        break;
      case OpCode::kLoadFragment:
        in.code = I::kLoadFrag;
        break;
      case OpCode::kStoreFragment:
        in.code = I::kStoreFrag;
        break;
      case OpCode::kMma:
        in.code = I::kMma;
        break;
      case OpCode::kFragEw:
        in.code = I::kFragEw;
        break;
      case OpCode::kFragCoord:
        in.code = I::kFragCoord;
        break;
      case OpCode::kFragRowFill:
        in.code = I::kFragRowFill;
        break;
      case OpCode::kToOperand:
        in.code = I::kToOperand;
        break;
      case OpCode::kFragRowReduce:
        in.code = I::kFragRowReduce;
        break;
      case OpCode::kShfl:
        in.code = I::kShfl;
        break;
      case OpCode::kWarpReduce:
        in.code = I::kWarpReduce;
        break;
      case OpCode::kBlockReduce:
        in.code = I::kBlockReduce;
        break;
      case OpCode::kBarrier:
        in.code = I::kBarrier;
        break;
      case OpCode::kMbarrier:
        in.code = I::kMbarInit;
        in.imm = mbar_index_[&op];
        break;
      case OpCode::kMbarArrive:
        in.code = I::kMbarArrive;
        break;
      case OpCode::kMbarArriveTx:
        in.code = I::kMbarArriveTx;
        break;
      case OpCode::kMbarWait:
        in.code = I::kMbarWait;
        break;
      case OpCode::kTmaLoad:
        in.code = I::kTmaLoad;
        break;
      case OpCode::kWgmmaOperand:
        in.code = I::kWgmmaOperand;
        break;
      case OpCode::kWgmma:
        in.code = I::kWgmma;
        break;
      case OpCode::kWgmmaCommit:
        in.code = I::kWgmmaCommit;
        break;
      case OpCode::kWgmmaWait:
        in.code = I::kWgmmaWait;
        in.imm = op.ints[0];
        break;
      case OpCode::kTmaStore:
        in.code = I::kTmaStore;
        break;
      case OpCode::kTmaStoreCommit:
        in.code = I::kTmaStoreCommit;
        break;
      case OpCode::kTmaStoreWait:
        in.code = I::kTmaStoreWait;
        in.imm = op.ints[0];
        break;
      case OpCode::kWarpgroupBarrier:
        in.code = I::kWgBarrier;
        uses_wg_barrier_ = true;
        break;
      case OpCode::kNamedBarrier:
        in.code = I::kNamedBar;
        in.imm = op.ints[0];
        in.sub = static_cast<uint8_t>(op.ints[1]);
        break;
      case OpCode::kFenceProxyAsync:
      case OpCode::kSetMaxNReg:
      case OpCode::kHint:
      case OpCode::kTag:
      case OpCode::kAssertTag:
      case OpCode::kAssertTagEq:
      case OpCode::kResetTags:
      case OpCode::kYield:
        continue;  // verifier-only / scheduling hints
      case OpCode::kCall:
        in.code = I::kCall;
        in.imm = op.ints[0];
        break;
      case OpCode::kReturn:
        in.code = I::kRet;
        break;
      case OpCode::kFor: {
        int hi = Extra(fn);
        Insn mv;
        mv.code = I::kMov;
        mv.dst = op.result;
        mv.a = op.operands[0];
        mv.op = &op;
        Add(mv);
        Insn mh = mv;
        mh.dst = hi;
        mh.a = op.operands[1];
        Add(mh);
        int test = static_cast<int>(code_.size());
        Insn t;
        t.code = I::kForTest;
        t.op = &op;
        t.a = op.result;
        t.b = hi;
        t.imm = op.ints[0];
        Add(t);
        CompileBlock(op.regions[0], fn);
        Insn st;
        st.code = I::kForStep;
        st.op = &op;
        st.dst = op.result;
        st.imm = op.ints[0];
        st.dt = ty(op.result).dtype;
        Add(st);
        Insn j;
        j.code = I::kJmp;
        j.imm = test;
        j.op = &op;
        Add(j);
        code_[test].c = static_cast<int>(code_.size());
        continue;
      }
      case OpCode::kIf: {
        int jz = static_cast<int>(code_.size());
        Insn z;
        z.code = I::kJz;
        z.a = op.operands[0];
        z.op = &op;
        Add(z);
        CompileBlock(op.regions[0], fn);
        if (op.regions[1].empty()) {
          code_[jz].imm = static_cast<int>(code_.size());
        } else {
          int jmp = static_cast<int>(code_.size());
          Insn j;
          j.code = I::kJmp;
          j.op = &op;
          Add(j);
          code_[jz].imm = static_cast<int>(code_.size());
          CompileBlock(op.regions[1], fn);
          code_[jmp].imm = static_cast<int>(code_.size());
        }
        continue;
      }
      case OpCode::kWhile: {
        int top = static_cast<int>(code_.size());
        CompileBlock(op.regions[0], fn);
        int jz = static_cast<int>(code_.size());
        Insn z;
        z.code = I::kJz;
        z.a = op.operands[0];
        z.op = &op;
        Add(z);
        CompileBlock(op.regions[1], fn);
        Insn j;
        j.code = I::kJmp;
        j.imm = top;
        j.op = &op;
        Add(j);
        code_[jz].imm = static_cast<int>(code_.size());
        continue;
      }
    }
    Add(in);
  }
}

// ---- helpers -------------------------------------------------------------------------

absl::Status Machine::Err(const Thread& t, const ir::Op* op, const std::string& msg) const {
  Diagnostic d;
  d.loc = op ? op->loc : Loc{};
  d.message = absl::StrCat(msg, " (block (", block_[0], ",", block_[1], ",", block_[2],
                           "), thread ", t.tid, ", warp ", t.warp, ", lane ", t.lane, ")");
  d.hint = "run `argus-dsl run` on small shapes to reproduce";
  if (m_.source) return absl::FailedPreconditionError(FormatDiagnostic(*m_.source, d));
  return absl::FailedPreconditionError(d.message);
}

absl::Status Machine::Access(const Thread& t, const ir::Op* op, const View& v, const int64_t* idx,
                             int n, int64_t* phys, bool soft, bool* oob) const {
  int64_t lin = v.off;
  for (int d = 0; d < n; ++d) {
    if (idx[d] < 0 || idx[d] >= v.shape[d]) {
      if (soft) {
        *oob = true;
        return absl::OkStatus();
      }
      std::vector<int64_t> ix(idx, idx + n), sh(v.shape, v.shape + v.rank);
      return Err(t, op,
                 absl::StrCat("out-of-bounds access to ", v.buf->name, ": index [",
                              absl::StrJoin(ix, ", "), "] outside shape [", absl::StrJoin(sh, ", "),
                              "] (dim ", d, ")"));
    }
    lin += idx[d] * v.stride[d];
  }
  int64_t size = static_cast<int64_t>(v.buf->data.size());
  if (lin < 0 || lin >= size) {
    if (soft) {
      *oob = true;
      return absl::OkStatus();
    }
    return Err(t, op,
               absl::StrCat("out-of-bounds access to ", v.buf->name, ": element offset ", lin,
                            " outside 0..", size - 1));
  }
  int64_t p = v.buf->swz.Apply(lin);
  if (p < 0 || p >= size) {
    return Err(
        t, op,
        absl::StrCat("swizzled offset ", p, " outside ", v.buf->name, " (", size, " elements)"));
  }
  if (oob) *oob = false;
  *phys = p;
  return absl::OkStatus();
}

absl::Status Machine::SubviewCheck(const Thread& t, const ir::Op* op, const View& parent, int d,
                                   int64_t lo, int64_t ext) const {
  if (lo < 0 || ext < 0 || lo + ext > parent.shape[d]) {
    return Err(t, op,
               absl::StrCat("sub-view of ", parent.buf->name, " out of bounds: dim ", d, " range [",
                            lo, ", ", lo + ext, ") outside extent ", parent.shape[d]));
  }
  return absl::OkStatus();
}

Slot Machine::Convert(Slot v, DType from, DType to) const {
  Slot r;
  bool ff = IsFloat(from), ft = IsFloat(to);
  if (ff && ft)
    r.f = from == to ? v.f : RoundTo(to, v.f);
  else if (!ff && ft)
    r.f = RoundTo(to, static_cast<double>(v.i));
  else if (ff && !ft)
    r.i = ConvertToInt(to, v.f);
  else
    r.i = WrapInt(to, v.i);
  return r;
}

inline double FloatBin(uint8_t sub, double x, double y) {
  switch (static_cast<ir::BinOp>(sub)) {
    case ir::BinOp::kAdd:
      return x + y;
    case ir::BinOp::kSub:
      return x - y;
    case ir::BinOp::kMul:
      return x * y;
    case ir::BinOp::kDiv:
      return x / y;
    case ir::BinOp::kMin:
      return std::fmin(x, y);
    case ir::BinOp::kMax:
      return std::fmax(x, y);
    default:
      return 0;
  }
}

inline double Round(DType t, double x) {
  return t == DType::kF32 ? static_cast<double>(static_cast<float>(x)) : RoundTo(t, x);
}

int Bits(DType t) { return t == DType::kI64 ? 64 : 32; }

absl::Status Machine::Copy(Thread& t, const Insn& in) {
  const ir::Op& op = *in.op;
  const View& s = t.views[view_slot_[op.operands[0]]];
  const View& d = t.views[view_slot_[op.operands[1]]];
  const ir::Layout& tl = op.layout;
  DType sdt = s.buf->dt, ddt = d.buf->dt;
  bool async = op.ints[0] != 0;
  int rank = s.rank;
  for (int i = 0; i < rank; ++i) {
    if (s.shape[i] != d.shape[i]) {
      return Err(
          t, &op,
          absl::StrCat("copy shapes differ in dim ", i, ": ", s.shape[i], " vs ", d.shape[i]));
    }
    int64_t per = tl.shape[i] * (i == rank - 1 ? tl.vec : 1);
    if (s.shape[i] % per != 0) {
      return Err(t, &op,
                 absl::StrCat("copy extent ", s.shape[i], " of dim ", i,
                              " is not a multiple of the thread layout's ", per));
    }
  }
  if (t.tid >= tl.Size()) return absl::OkStatus();
  int64_t idx[2];
  auto one = [&](int64_t i, int64_t j) -> absl::Status {
    idx[0] = i;
    idx[1] = j;
    const int64_t* ix = rank == 1 ? &idx[1] : idx;
    int64_t ps, pd;
    RETURN_IF_ERROR(Access(t, &op, s, ix, rank, &ps));
    RETURN_IF_ERROR(Access(t, &op, d, ix, rank, &pd));
    Slot v = Convert(s.buf->data[ps], sdt, ddt);
    if (!d.buf->bulk_readers.empty()) RETURN_IF_ERROR(CheckBulkFree(t, &op, *d.buf, pd));
    if (async)
      t.open.push_back(Pending{d.buf, pd, v});
    else
      d.buf->data[pd] = v;
    return absl::OkStatus();
  };
  int64_t vec = tl.vec;
  if (rank == 1) {
    int64_t tc = t.tid;
    for (int64_t jb = tc * vec; jb < s.shape[0]; jb += tl.shape[0] * vec) {
      for (int64_t v = 0; v < vec; ++v) RETURN_IF_ERROR(one(0, jb + v));
    }
    return absl::OkStatus();
  }
  int64_t tr = t.tid / tl.shape[1], tc = t.tid % tl.shape[1];
  for (int64_t i = tr; i < s.shape[0]; i += tl.shape[0]) {
    for (int64_t jb = tc * vec; jb < s.shape[1]; jb += tl.shape[1] * vec) {
      for (int64_t v = 0; v < vec; ++v) RETURN_IF_ERROR(one(i, jb + v));
    }
  }
  return absl::OkStatus();
}

// ---- execution -------------------------------------------------------------------------

absl::Status Machine::RunThread(Thread& t) {
  Slot* s = t.slots.data() + t.base;
  const Insn* code = code_.data();
  int pc = t.pc;
  int64_t steps = 0;
  auto fail = [&](absl::Status st) {
    t.pc = pc;
    executed_ += steps;
    return st;
  };
  while (true) {
    const Insn& in = code[pc];
    ++steps;
    switch (in.code) {
      case I::kConst:
        s[in.dst] = in.k;
        break;
      case I::kMov:
        s[in.dst] = s[in.a];
        break;
      case I::kMovView:
        t.views[in.dst] = t.views[in.a];
        break;
      case I::kMovFrag:
        if (t.frag_pending[in.a] > 0) return fail(CheckAccFree(t, in.op, in.a));
        t.frags[in.dst] = t.frags[in.a];
        break;
      case I::kBinF:
        s[in.dst].f = Round(in.dt, FloatBin(in.sub, s[in.a].f, s[in.b].f));
        break;
      case I::kBinI: {
        int64_t x = s[in.a].i, y = s[in.b].i, r = 0;
        switch (static_cast<ir::BinOp>(in.sub)) {
          case ir::BinOp::kAdd:
            r = static_cast<int64_t>(static_cast<uint64_t>(x) + static_cast<uint64_t>(y));
            break;
          case ir::BinOp::kSub:
            r = static_cast<int64_t>(static_cast<uint64_t>(x) - static_cast<uint64_t>(y));
            break;
          case ir::BinOp::kMul:
            r = static_cast<int64_t>(static_cast<uint64_t>(x) * static_cast<uint64_t>(y));
            break;
          case ir::BinOp::kFloorDiv:
          case ir::BinOp::kMod: {
            if (y == 0) return fail(Err(t, in.op, "integer division by zero"));
            ir::FloorDivMod d = ir::FloorDivide(x, y);
            r = in.sub == static_cast<uint8_t>(ir::BinOp::kFloorDiv) ? d.quot : d.rem;
            break;
          }
          case ir::BinOp::kShl:
            r = (y < 0 || y >= Bits(in.dt)) ? 0
                                            : static_cast<int64_t>(static_cast<uint64_t>(x) << y);
            break;
          case ir::BinOp::kShr:
            r = (y < 0 || y >= Bits(in.dt)) ? (x < 0 ? -1 : 0) : (x >> y);
            break;
          case ir::BinOp::kAnd:
            r = x & y;
            break;
          case ir::BinOp::kOr:
            r = x | y;
            break;
          case ir::BinOp::kXor:
            r = x ^ y;
            break;
          case ir::BinOp::kMin:
            r = std::min(x, y);
            break;
          case ir::BinOp::kMax:
            r = std::max(x, y);
            break;
          case ir::BinOp::kDiv:
            r = 0;
            break;
        }
        s[in.dst].i = WrapInt(in.dt, r);
        break;
      }
      case I::kNeg:
        if (IsFloat(in.dt))
          s[in.dst].f = -s[in.a].f;
        else
          s[in.dst].i = WrapInt(in.dt, -s[in.a].i);
        break;
      case I::kNot:
        s[in.dst].i = !s[in.a].i;
        break;
      case I::kBitNot:
        s[in.dst].i = WrapInt(in.dt, ~s[in.a].i);
        break;
      case I::kCmpI:
      case I::kCmpF: {
        bool r = false;
        if (in.code == I::kCmpF) {
          double x = s[in.a].f, y = s[in.b].f;
          r = ir::ApplyCmp(static_cast<ir::CmpOp>(in.sub), x, y);
        } else {
          int64_t x = s[in.a].i, y = s[in.b].i;
          r = ir::ApplyCmp(static_cast<ir::CmpOp>(in.sub), x, y);
        }
        s[in.dst].i = r;
        break;
      }
      case I::kSelect:
        s[in.dst] = s[in.a].i ? s[in.b] : s[in.c];
        break;
      case I::kCast:
        s[in.dst] = Convert(s[in.a], in.dt2, in.dt);
        break;
      case I::kMath: {
        if (!IsFloat(in.dt)) {
          int64_t x = s[in.a].i;
          s[in.dst].i = WrapInt(in.dt, x < 0 ? -x : x);
          break;
        }
        double x = s[in.a].f, r = 0;
        switch (static_cast<ir::MathOp>(in.sub)) {
          case ir::MathOp::kExp:
            r = std::exp(x);
            break;
          case ir::MathOp::kExp2:
            r = std::exp2(x);
            break;
          case ir::MathOp::kLog:
            r = std::log(x);
            break;
          case ir::MathOp::kSqrt:
            r = std::sqrt(x);
            break;
          case ir::MathOp::kRsqrt:
            r = 1.0 / std::sqrt(x);
            break;
          case ir::MathOp::kAbs:
            r = std::fabs(x);
            break;
        }
        if (in.dt != DType::kF32) r = static_cast<float>(r);  // narrow types compute in f32
        s[in.dst].f = Round(in.dt, r);
        break;
      }
      case I::kSpecial: {
        int64_t r = 0;
        switch (static_cast<ir::SpecialOp>(in.sub)) {
          case ir::SpecialOp::kThreadId:
            r = t.tid;
            break;
          case ir::SpecialOp::kBlockId:
            r = block_[in.imm];
            break;
          case ir::SpecialOp::kGridDim:
            r = grid_[in.imm];
            break;
          case ir::SpecialOp::kWarpId:
            r = t.warp;
            break;
          case ir::SpecialOp::kLaneId:
            r = t.lane;
            break;
          case ir::SpecialOp::kWarpSize:
            r = k_.warp_size;
            break;
          case ir::SpecialOp::kWarpGroupId:
            r = t.tid / 128;
            break;
        }
        s[in.dst].i = r;
        break;
      }
      case I::kJmp:
        if (in.imm <= pc && executed_ + steps > budget_) {
          return fail(
              Err(t, in.op,
                  absl::StrCat("instruction budget of ", budget_, " exceeded (runaway loop?)")));
        }
        pc = static_cast<int>(in.imm);
        continue;
      case I::kJz:
        if (!s[in.a].i) {
          pc = static_cast<int>(in.imm);
          continue;
        }
        break;
      case I::kForTest: {
        bool go = in.imm > 0 ? s[in.a].i < s[in.b].i : s[in.a].i > s[in.b].i;
        if (!go) {
          pc = in.c;
          continue;
        }
        if (executed_ + steps > budget_) {
          return fail(
              Err(t, in.op,
                  absl::StrCat("instruction budget of ", budget_, " exceeded (runaway loop?)")));
        }
        break;
      }
      case I::kForStep:
        s[in.dst].i = WrapInt(in.dt, s[in.dst].i + in.imm);
        break;
      case I::kCall: {
        const FnCode& fc = code_fns_[in.imm];
        int nb = t.base + code_fns_[t.fn].frame;
        for (size_t i = 0; i < in.op->operands.size(); ++i) {
          t.slots[nb + fc.fn->params[i]] = s[in.op->operands[i]];
        }
        t.frames.push_back(Thread::Frame{pc + 1, t.base, in.dst, t.fn});
        t.base = nb;
        t.fn = static_cast<int>(in.imm);
        s = t.slots.data() + t.base;
        pc = fc.entry;
        continue;
      }
      case I::kRet: {
        Slot v{0};
        if (in.a >= 0) v = s[in.a];
        Thread::Frame fr = t.frames.back();
        t.frames.pop_back();
        t.base = fr.base;
        t.fn = fr.fn;
        s = t.slots.data() + t.base;
        if (fr.dst >= 0) s[fr.dst] = v;
        pc = fr.ret_pc;
        continue;
      }
      case I::kHalt:
        t.st = Thread::kDone;
        t.pc = pc;
        executed_ += steps;
        return absl::OkStatus();
      case I::kAllocShared:
        t.views[in.dst] = View{};
        {
          View& v = t.views[in.dst];
          v.buf = &shared_[in.imm];
          const ir::Layout& l = in.op->layout;
          v.rank = static_cast<int>(l.shape.size());
          for (int d = 0; d < v.rank; ++d) {
            v.shape[d] = l.shape[d];
            v.stride[d] = l.stride[d];
          }
        }
        break;
      case I::kAllocLocal: {
        Buffer& b = t.locals[in.imm];
        const ir::Layout& l = in.op->layout;
        View& v = t.views[in.dst];
        v = View{};
        v.buf = &b;
        v.rank = static_cast<int>(l.shape.size());
        for (int d = 0; d < v.rank; ++d) {
          v.shape[d] = l.shape[d];
          v.stride[d] = l.stride[d];
        }
        break;
      }
      case I::kTile: {
        const ir::Op& op = *in.op;
        View v = t.views[view_slot_[op.operands[0]]];
        for (int d = 0; d < v.rank; ++d) {
          int64_t lo = s[op.operands[1 + d]].i * op.ints[d];
          absl::Status st = SubviewCheck(t, &op, v, d, lo, op.ints[d]);
          if (!st.ok()) return fail(st);
          v.off += lo * v.stride[d];
          v.shape[d] = op.ints[d];
        }
        t.views[view_slot_[op.result]] = v;
        break;
      }
      case I::kIndex: {
        const ir::Op& op = *in.op;
        View v = t.views[view_slot_[op.operands[0]]];
        int d = static_cast<int>(op.ints[0]);
        int64_t i = s[op.operands[1]].i;
        absl::Status st = SubviewCheck(t, &op, v, d, i, 1);
        if (!st.ok()) return fail(st);
        v.off += i * v.stride[d];
        for (int e = d; e + 1 < v.rank; ++e) {
          v.shape[e] = v.shape[e + 1];
          v.stride[e] = v.stride[e + 1];
        }
        --v.rank;
        t.views[view_slot_[op.result]] = v;
        break;
      }
      case I::kSlice: {
        const ir::Op& op = *in.op;
        View v = t.views[view_slot_[op.operands[0]]];
        int d = static_cast<int>(op.ints[0]);
        int64_t step = op.ints[1];
        int64_t lo = s[op.operands[1]].i, hi = s[op.operands[2]].i;
        if (hi < lo) hi = lo;
        absl::Status st = SubviewCheck(t, &op, v, d, lo, hi - lo);
        if (!st.ok()) return fail(st);
        v.off += lo * v.stride[d];
        v.shape[d] = (hi - lo + step - 1) / step;
        v.stride[d] *= step;
        t.views[view_slot_[op.result]] = v;
        break;
      }
      case I::kTranspose: {
        View v = t.views[view_slot_[in.op->operands[0]]];
        std::swap(v.shape[0], v.shape[1]);
        std::swap(v.stride[0], v.stride[1]);
        t.views[view_slot_[in.op->result]] = v;
        break;
      }
      case I::kReshape: {
        const ir::Op& op = *in.op;
        View v = t.views[view_slot_[op.operands[0]]];
        int64_t expect = 1;
        for (int d = v.rank - 1; d >= 0; --d) {
          if (v.shape[d] != 1 && v.stride[d] != expect) {
            return fail(Err(t, &op, "reshape of a view that is not contiguous row-major"));
          }
          expect *= v.shape[d];
        }
        v.rank = static_cast<int>(op.ints.size());
        int64_t st = 1;
        for (int d = v.rank - 1; d >= 0; --d) {
          v.shape[d] = op.ints[d];
          v.stride[d] = st;
          st *= op.ints[d];
        }
        t.views[view_slot_[op.result]] = v;
        break;
      }
      case I::kExtent:
        s[in.dst].i = t.views[in.a].shape[in.op->ints[0]];
        break;
      case I::kLoad:
      case I::kBufferLoad:
      case I::kStore: {
        const ir::Op& op = *in.op;
        const View& v = t.views[in.a];
        int first = in.code == I::kStore ? 2 : 1;
        int n = static_cast<int>(op.operands.size()) - first;
        int64_t idx[4];
        for (int d = 0; d < n; ++d) idx[d] = s[op.operands[first + d]].i;
        int64_t p = 0;
        bool oob = false;
        absl::Status st = Access(t, &op, v, idx, n, &p, in.code == I::kBufferLoad, &oob);
        if (!st.ok()) return fail(st);
        if (in.code == I::kStore && !v.buf->bulk_readers.empty()) {
          st = CheckBulkFree(t, &op, *v.buf, p);
          if (!st.ok()) return fail(st);
        }
        if (in.code == I::kStore)
          v.buf->data[p] = s[op.operands[1]];
        else if (oob)
          s[in.dst].i = 0;
        else
          s[in.dst] = v.buf->data[p];
        break;
      }
      case I::kCopy: {
        absl::Status st = Copy(t, in);
        if (!st.ok()) return fail(st);
        break;
      }
      case I::kCommit:
        t.groups.push_back(std::move(t.open));
        t.open.clear();
        break;
      case I::kWait:
        while (static_cast<int64_t>(t.groups.size()) > in.imm) {
          for (const Pending& p : t.groups.front()) p.buf->data[p.phys] = p.val;
          t.groups.pop_front();
        }
        break;
      case I::kFragment: {
        const ir::FragType& ft = k_.vars[in.op->result].type.frag;
        if (t.frag_pending[in.dst] > 0) return fail(CheckAccFree(t, in.op, in.dst));
        t.frags[in.dst].assign(ft.Geom().PerLane(), 0.0f);
        break;
      }
      case I::kLoadFrag: {
        const ir::Op& op = *in.op;
        const View& v = t.views[view_slot_[op.operands[0]]];
        FragGeom g = k_.vars[op.result].type.frag.Geom();
        std::vector<float>& fr = t.frags[frag_slot_[op.result]];
        int n = g.PerLane();
        fr.resize(n);
        int unit, ul;
        if (!g.Locate(t.tid, &unit, &ul)) n = 0;
        for (int e = 0; e < n; ++e) {
          int r, c;
          g.Coord(unit, ul, e, &r, &c);
          int64_t idx[2] = {r, c}, p;
          absl::Status st = Access(t, &op, v, idx, 2, &p);
          if (!st.ok()) return fail(st);
          fr[e] = static_cast<float>(v.buf->data[p].f);
        }
        break;
      }
      case I::kFragEw:
      case I::kFragCoord:
      case I::kFragRowFill:
      case I::kToOperand: {
        absl::Status st = FragLocal(t, in);
        if (!st.ok()) return fail(st);
        break;
      }
      case I::kStoreFrag: {
        const ir::Op& op = *in.op;
        const View& v = t.views[view_slot_[op.operands[1]]];
        FragGeom g = k_.vars[op.operands[0]].type.frag.Geom();
        int fs = frag_slot_[op.operands[0]];
        if (t.frag_pending[fs] > 0) return fail(CheckAccFree(t, &op, fs));
        const std::vector<float>& fr = t.frags[fs];
        bool part = op.operands.size() == 4;
        int unit, ul;
        if (!g.Locate(t.tid, &unit, &ul)) {
          if (part) break;  // holds none of the sub-tile
          return fail(Err(t, &op,
                          absl::StrCat("this thread holds no part of the accumulator (its ",
                                       g.mma->wgmma ? "warp groups are " : "warps are ", g.first,
                                       "..", g.first + g.wm * g.wn - 1, ")")));
        }
        // store(acc, dst, at=(i, j)): the elements in rows [i*h, i*h+h) and
        // columns [j*w, j*w+w), written relative to the sub-tile.
        int64_t r0 = 0, c0 = 0, h = g.bm, w = g.bn;
        if (part) {
          h = v.shape[0];
          w = v.shape[1];
          r0 = s[op.operands[2]].i * h;
          c0 = s[op.operands[3]].i * w;
          if (r0 < 0 || r0 >= g.bm || c0 < 0 || c0 >= g.bn)
            return fail(
                Err(t, &op,
                    absl::StrCat("sub-tile (", s[op.operands[2]].i, ", ", s[op.operands[3]].i,
                                 ") is outside the ", g.bm, "x", g.bn, " accumulator")));
        }
        for (int e = 0; e < g.PerLane(); ++e) {
          int r, c;
          g.Coord(unit, ul, e, &r, &c);
          if (r < r0 || r >= r0 + h || c < c0 || c >= c0 + w) continue;
          int64_t idx[2] = {r - r0, c - c0}, p;
          absl::Status st = Access(t, &op, v, idx, 2, &p);
          if (!st.ok()) return fail(st);
          if (!v.buf->bulk_readers.empty()) {
            st = CheckBulkFree(t, &op, *v.buf, p);
            if (!st.ok()) return fail(st);
          }
          Slot x;
          x.f = fr[e];
          v.buf->data[p] = Convert(x, DType::kF32, v.buf->dt);
        }
        break;
      }
      case I::kMbarArrive:
      case I::kMbarArriveTx: {
        auto b = MbarOf(t, in.op, s[in.a].i, s[in.b].i);
        if (!b.ok()) return fail(b.status());
        int64_t tx = in.code == I::kMbarArriveTx ? s[in.c].i : 0;
        if (tx < 0) return fail(Err(t, in.op, absl::StrCat("negative transaction bytes ", tx)));
        absl::Status st = MbarArrive(t, in.op, **b, tx, 0);
        if (!st.ok()) return fail(st);
        break;
      }
      case I::kMbarWait: {
        auto b = MbarOf(t, in.op, s[in.a].i, s[in.b].i);
        if (!b.ok()) return fail(b.status());
        int64_t parity = s[in.c].i;
        if (parity != 0 && parity != 1)
          return fail(
              Err(t, in.op, absl::StrCat("mbarrier_wait parity must be 0 or 1, got ", parity)));
        if (((*b)->phase & 1) == parity) {  // the phase of this parity is still running
          t.st = Thread::kBlocked;
          t.pc = pc;
          executed_ += steps;
          return absl::OkStatus();
        }
        t.seen[(*b)->id] = std::max(t.seen[(*b)->id], (*b)->phase);
        break;
      }
      case I::kNamedBar: {
        bool blocked = false;
        absl::Status st = NamedBarrier(t, in, &blocked);
        if (!st.ok()) return fail(st);
        if (blocked) {
          t.st = Thread::kBlocked;
          t.pc = pc;
          executed_ += steps;
          return absl::OkStatus();
        }
        break;
      }
      case I::kTmaLoad: {
        absl::Status st = TmaLoad(t, in);
        if (!st.ok()) return fail(st);
        break;
      }
      case I::kTmaStore: {
        absl::Status st = TmaStore(t, in);
        if (!st.ok()) return fail(st);
        break;
      }
      case I::kTmaStoreCommit:
        t.bulk_groups.push_back(std::move(t.bulk_open));
        t.bulk_open.clear();
        break;
      case I::kTmaStoreWait:
        TmaStoreWait(t, in.imm);
        break;
      case I::kWgmmaOperand: {
        const ir::Op& op = *in.op;
        const View& v = t.views[view_slot_[op.operands[0]]];
        absl::Status st = CheckWgmmaView(t, &op, v, op.name == "A");
        if (!st.ok()) return fail(st);
        t.views[view_slot_[op.result]] = v;
        break;
      }
      case I::kMbarInit:
      case I::kWgmma:
      case I::kWgmmaCommit:
      case I::kWgmmaWait:
      case I::kWgBarrier:
      case I::kShfl:
      case I::kWarpReduce:
      case I::kBlockReduce:
      case I::kBarrier:
      case I::kMma:
      case I::kFragRowReduce:
        t.st = Thread::kSync;
        t.pc = pc;
        executed_ += steps;
        return absl::OkStatus();
      case I::kNop:
        break;
    }
    ++pc;
  }
}

// ---- collectives -------------------------------------------------------------------------

Slot Combine(uint8_t kind, DType dt, Slot a, Slot b) {
  Slot r;
  bool is_max = kind == static_cast<uint8_t>(ir::ReduceKind::kMax);
  if (IsFloat(dt))
    r.f = is_max ? std::fmax(a.f, b.f) : Round(dt, a.f + b.f);
  else
    r.i = is_max ? std::max(a.i, b.i) : WrapInt(dt, a.i + b.i);
  return r;
}

// Butterfly (shfl_xor) reduction over `v` as codegen lowers it.
void Butterfly(uint8_t kind, DType dt, int ws, std::vector<Slot>* v) {
  int n = static_cast<int>(v->size());
  std::vector<Slot> nv(n);
  for (int off = ws / 2; off >= 1; off /= 2) {
    for (int l = 0; l < n; ++l) {
      int o = l ^ off;
      nv[l] = o < n ? Combine(kind, dt, (*v)[l], (*v)[o]) : (*v)[l];
    }
    v->swap(nv);
  }
}

absl::Status Machine::ExecWarp(std::vector<Thread*>& lanes, const Insn& in) {
  int n = static_cast<int>(lanes.size());
  auto slot = [&](int l, int idx) -> Slot& { return lanes[l]->slots[lanes[l]->base + idx]; };
  if (in.code == I::kShfl) {
    std::vector<Slot> vals(n);
    for (int l = 0; l < n; ++l) vals[l] = slot(l, in.a);
    int ws = k_.warp_size;
    for (int l = 0; l < n; ++l) {
      int64_t arg = slot(l, in.b).i;
      int64_t src = l;
      switch (static_cast<ir::ShflKind>(in.sub)) {
        case ir::ShflKind::kXor:
          src = l ^ (arg & (ws - 1));
          break;
        case ir::ShflKind::kDown:
          src = l + arg;
          if (arg < 0 || src >= ws) src = l;
          break;
        case ir::ShflKind::kIdx:
          src = ((arg % ws) + ws) % ws;
          break;
      }
      if (src >= n) src = l;
      slot(l, in.dst) = vals[src];
    }
    return absl::OkStatus();
  }
  if (in.code == I::kWarpReduce) {
    std::vector<Slot> v(n);
    for (int l = 0; l < n; ++l) v[l] = slot(l, in.a);
    Butterfly(in.sub, in.dt, k_.warp_size, &v);
    for (int l = 0; l < n; ++l) slot(l, in.dst) = v[l];
    return absl::OkStatus();
  }
  if (in.code == I::kFragRowReduce) return FragRowReduce(lanes, in);
  // kMma: acc += a @ b for every instruction tile of this warp.
  const ir::Op& op = *in.op;
  if (n != k_.warp_size) return Err(*lanes[0], &op, "mma needs a full warp");
  FragGeom gc = k_.vars[op.operands[0]].type.frag.Geom();
  FragGeom ga = k_.vars[op.operands[1]].type.frag.Geom();
  const MmaInfo& mi = *gc.mma;
  int ic = frag_slot_[op.operands[0]], ia = frag_slot_[op.operands[1]],
      ib = frag_slot_[op.operands[2]];
  for (Thread* t : lanes) {
    if (t->frag_pending[ic] > 0) return CheckAccFree(*t, &op, ic);
  }
  int TM = gc.TilesM(), TN = gc.TilesN(), TK = ga.TilesK();
  std::vector<double> A(mi.m * mi.k), B(mi.k * mi.n), C(mi.m * mi.n);
  for (int tm = 0; tm < TM; ++tm) {
    for (int tn = 0; tn < TN; ++tn) {
      for (int l = 0; l < n; ++l) {
        const std::vector<float>& acc = lanes[l]->frags[ic];
        for (int r = 0; r < mi.regs_c; ++r) {
          int row, col;
          mi.c_coord(l, r, &row, &col);
          C[row * mi.n + col] = acc[(tm * TN + tn) * mi.regs_c + r];
        }
      }
      for (int tk = 0; tk < TK; ++tk) {
        for (int l = 0; l < n; ++l) {
          const std::vector<float>& fa = lanes[l]->frags[ia];
          const std::vector<float>& fb = lanes[l]->frags[ib];
          for (int r = 0; r < mi.regs_a; ++r) {
            int row, col;
            mi.a_coord(l, r, &row, &col);
            A[row * mi.k + col] = fa[(tm * TK + tk) * mi.regs_a + r];
          }
          for (int r = 0; r < mi.regs_b; ++r) {
            int row, col;
            mi.b_coord(l, r, &row, &col);
            B[row * mi.n + col] = fb[(tk * TN + tn) * mi.regs_b + r];
          }
        }
        for (int i = 0; i < mi.m; ++i) {
          for (int j = 0; j < mi.n; ++j) {
            double sum = C[i * mi.n + j];
            for (int kk = 0; kk < mi.k; ++kk) sum += A[i * mi.k + kk] * B[kk * mi.n + j];
            C[i * mi.n + j] = static_cast<float>(sum);
          }
        }
      }
      for (int l = 0; l < n; ++l) {
        std::vector<float>& acc = lanes[l]->frags[ic];
        for (int r = 0; r < mi.regs_c; ++r) {
          int row, col;
          mi.c_coord(l, r, &row, &col);
          acc[(tm * TN + tn) * mi.regs_c + r] = static_cast<float>(C[row * mi.n + col]);
        }
      }
    }
  }
  return absl::OkStatus();
}

// ---- fragment math -------------------------------------------------------------------------

absl::Status Machine::FragLocal(Thread& t, const Insn& in) {
  const ir::Op& op = *in.op;
  const Slot* s = t.slots.data() + t.base;
  const ir::Type& rt = k_.vars[op.result].type;
  FragGeom g = rt.frag.Geom();
  int n = g.PerLane();
  std::vector<float> out(n);
  int unit = 0, lane = 0;
  if (!g.Locate(t.tid, &unit, &lane)) n = 0;
  // wgmma in flight: its accumulator may not be read, its register A not overwritten.
  for (int v : op.operands) {
    const ir::Type& vt = k_.vars[v].type;
    if (vt.is_frag() && vt.frag.role == FragRole::kAcc && t.frag_pending[frag_slot_[v]] > 0)
      return CheckAccFree(t, &op, frag_slot_[v]);
  }
  if (t.frag_pending[frag_slot_[op.result]] > 0) return CheckAccFree(t, &op, frag_slot_[op.result]);
  switch (op.code) {
    case OpCode::kFragEw: {
      // Operand j's value at result element e.
      struct Src {
        const std::vector<float>* f = nullptr;
        bool row_in_acc = false;
        float k = 0;
      };
      std::vector<Src> src(op.operands.size());
      for (size_t j = 0; j < op.operands.size(); ++j) {
        int v = op.operands[j];
        const ir::Type& vt = k_.vars[v].type;
        if (vt.is_frag()) {
          src[j].f = &t.frags[frag_slot_[v]];
          src[j].row_in_acc = vt.frag.role == FragRole::kRow && rt.frag.role == FragRole::kAcc;
        } else {
          src[j].k = IsFloat(vt.dtype) ? static_cast<float>(s[v].f) : static_cast<float>(s[v].i);
        }
      }
      auto at = [&](size_t j, int e) -> float {
        if (!src[j].f) return src[j].k;
        return (*src[j].f)[src[j].row_in_acc ? g.RowSlot(e) : e];
      };
      auto fop = static_cast<ir::FragEwOp>(op.sub);
      for (int e = 0; e < n; ++e) {
        float x = at(0, e), y = src.size() > 1 ? at(1, e) : 0.0f, r = 0;
        switch (fop) {
          case ir::FragEwOp::kAdd:
            r = x + y;
            break;
          case ir::FragEwOp::kSub:
            r = x - y;
            break;
          case ir::FragEwOp::kMul:
            r = x * y;
            break;
          case ir::FragEwOp::kDiv:
            r = x / y;
            break;
          case ir::FragEwOp::kMax:
            r = std::fmax(x, y);
            break;
          case ir::FragEwOp::kMin:
            r = std::fmin(x, y);
            break;
          case ir::FragEwOp::kExp2:
            r = static_cast<float>(std::exp2(static_cast<double>(x)));
            break;
          case ir::FragEwOp::kLt:
          case ir::FragEwOp::kLe:
          case ir::FragEwOp::kGt:
          case ir::FragEwOp::kGe:
          case ir::FragEwOp::kEq:
          case ir::FragEwOp::kNe: {
            auto c =
                static_cast<ir::CmpOp>(static_cast<int>(fop) - static_cast<int>(ir::FragEwOp::kLt));
            r = ir::ApplyCmp(c, x, y) ? 1.0f : 0.0f;
            break;
          }
          case ir::FragEwOp::kSelect:
            r = x != 0.0f ? y : at(2, e);
            break;
          case ir::FragEwOp::kFma:
            r = std::fma(x, y, at(2, e));
            break;
        }
        out[e] = r;
      }
      break;
    }
    case OpCode::kFragCoord:
      for (int e = 0; e < n; ++e) {
        int r, c;
        g.Coord(unit, lane, e, &r, &c);
        out[e] = static_cast<float>(op.ints[0] == 0 ? r : c);
      }
      break;
    case OpCode::kFragRowFill:
      for (int e = 0; e < n; ++e) out[e] = static_cast<float>(s[op.operands[1]].f);
      break;
    case OpCode::kToOperand: {
      FragGeom gc = k_.vars[op.operands[0]].type.frag.Geom();
      const std::vector<float>& acc = t.frags[frag_slot_[op.operands[0]]];
      for (int e = 0; e < n; ++e) {
        int r0, c0, q = 0;
        g.Coord(unit, lane, e, &r0, &c0);
        for (; q < gc.PerLane(); ++q) {
          int r1, c1;
          gc.Coord(unit, lane, q, &r1, &c1);
          if (r1 == r0 && c1 == c0) break;
        }
        if (q == gc.PerLane()) return Err(t, &op, "to_operand: element not held by this lane");
        out[e] = static_cast<float>(Round(rt.dtype, acc[q]));
      }
      break;
    }
    default:
      return Err(t, &op, "not a fragment math op");
  }
  t.frags[frag_slot_[op.result]] = std::move(out);
  return absl::OkStatus();
}

// row_max / row_sum: in each lane, its elements of a row combined in element
// order; then x = x op shfl_xor(x, b) for each column lane bit b, ascending
// (docs/dsl.md) -- the order codegen emits, so the f32 sums agree bit for bit.
absl::Status Machine::FragRowReduce(std::vector<Thread*>& lanes, const Insn& in) {
  const ir::Op& op = *in.op;
  int n = static_cast<int>(lanes.size());
  if (n != k_.warp_size) return Err(*lanes[0], &op, "row reductions need a full warp");
  FragGeom g = k_.vars[op.operands[0]].type.frag.Geom();
  FragGeom gr = k_.vars[op.result].type.frag.Geom();
  bool is_max = op.sub == static_cast<uint8_t>(ir::ReduceKind::kMax);
  auto comb = [&](float a, float b) { return is_max ? std::fmax(a, b) : a + b; };
  int ic = frag_slot_[op.operands[0]], ir_ = frag_slot_[op.result];
  for (Thread* t : lanes) {
    if (t->frag_pending[ic] > 0) return CheckAccFree(*t, &op, ic);
  }
  int R = gr.PerLane();
  std::vector<std::vector<float>> p(n, std::vector<float>(R, 0.0f));
  for (int l = 0; l < n; ++l) {
    const std::vector<float>& acc = lanes[l]->frags[ic];
    std::vector<bool> seen(R, false);
    for (int e = 0; e < g.PerLane(); ++e) {
      int slot = g.RowSlot(e);
      p[l][slot] = seen[slot] ? comb(p[l][slot], acc[e]) : acc[e];
      seen[slot] = true;
    }
  }
  int bits = AccColumnLaneBits(*g.mma);
  for (int b = 1; b < n; b <<= 1) {
    if (!(bits & b)) continue;
    std::vector<std::vector<float>> q = p;
    for (int l = 0; l < n; ++l) {
      for (int j = 0; j < R; ++j) q[l][j] = comb(p[l][j], p[l ^ b][j]);
    }
    p.swap(q);
  }
  for (int l = 0; l < n; ++l) lanes[l]->frags[ir_] = p[l];
  return absl::OkStatus();
}

// ---- Hopper: mbarriers, TMA, wgmma --------------------------------------------------

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
  if (b.pending == 0 && b.tx == 0) {
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
  }
  return absl::OkStatus();
}

absl::Status Machine::NamedBarrier(Thread& t, const Insn& in, bool* blocked) {
  const Slot* s = t.slots.data() + t.base;
  int64_t id = s[in.a].i, n = in.imm;
  int64_t groups = (k_.threads + 127) / 128;
  const char* what = in.sub ? "named_barrier_sync" : "named_barrier_arrive";
  if (id < 1 || id > 15)
    return Err(t, in.op, absl::StrCat(what, ": barrier id ", id, " is outside 1..15"));
  if (uses_wg_barrier_ && id <= groups)
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
  *blocked = in.sub != 0;
  return absl::OkStatus();
}

bool Machine::WaitPasses(const Thread& t) const {
  const Insn& in = code_[t.pc];
  const Slot* s = t.slots.data() + t.base;
  if (in.code == I::kNamedBar) return named_[s[in.a].i].gen != t.named_gen;
  const Mbar& b = mbars_[s[in.a].i][s[in.b].i];
  return (b.phase & 1) != s[in.c].i;
}

std::string Machine::DescribeWait(const Thread& t) const {
  const Insn& in = code_[t.pc];
  const Slot* s = t.slots.data() + t.base;
  if (in.code == I::kNamedBar) {
    const NamedBar& nb = named_[s[in.a].i];
    return absl::StrCat("named_barrier_sync(", s[in.a].i, ", ", in.imm,
                        ") never returns: ", nb.arrived, " of ", nb.threads,
                        " threads arrived or synced on it");
  }
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

absl::Status Machine::TmaLoad(Thread& t, const Insn& in) {
  const ir::Op& op = *in.op;
  const Slot* s = t.slots.data() + t.base;
  const View& src = t.views[view_slot_[op.operands[0]]];
  const View& dst = t.views[view_slot_[op.operands[1]]];
  ASSIGN_OR_RETURN(Mbar * b, MbarOf(t, &op, s[op.operands[2]].i, s[op.operands[3]].i));
  int64_t bytes = DTypeBytes(dst.buf->dt);
  RETURN_IF_ERROR(CheckTmaGlobal(t, &op, src));
  RETURN_IF_ERROR(CheckTmaShared(t, &op, dst, "destination"));
  int64_t n = 0;
  for (int64_t i = 0; i < src.shape[0]; ++i) {
    for (int64_t j = 0; j < src.shape[1]; ++j) {
      int64_t idx[2] = {i, j}, ps, pd;
      RETURN_IF_ERROR(Access(t, &op, src, idx, 2, &ps));
      RETURN_IF_ERROR(Access(t, &op, dst, idx, 2, &pd));
      b->writes.push_back(Pending{dst.buf, pd, src.buf->data[ps]});
      ++n;
    }
  }
  return MbarArrive(t, &op, *b, 0, n * bytes);
}

// What the copy engine needs (and codegen assumes): row-major global tiles
// with a 16-byte row pitch.
absl::Status Machine::CheckTmaGlobal(const Thread& t, const ir::Op* op, const View& g) const {
  int64_t bytes = DTypeBytes(g.buf->dt);
  if (g.stride[1] != 1 || (g.stride[0] * bytes) % 16 != 0) {
    return Err(
        t, op,
        absl::StrCat("TMA needs a row-major global tile with a row pitch of a multiple of 16 "
                     "bytes; ",
                     g.buf->name, " has strides (", g.stride[0], ", ", g.stride[1], ")"));
  }
  return absl::OkStatus();
}

// The shared side: a layout the tensor map's swizzle produces (the 128-byte
// swizzle is Swizzle(3, 3, 3) for 2-byte and Swizzle(3, 2, 3) for 4-byte
// elements: 16-byte chunks XOR the row within 8 rows of 128 bytes).
absl::Status Machine::CheckTmaShared(const Thread& t, const ir::Op* op, const View& v,
                                     const char* what) const {
  int64_t bytes = DTypeBytes(v.buf->dt);
  const Swizzle& z = v.buf->swz;
  bool sw128 = z.b == 3 && z.s == 3 && (bytes == 2 ? z.m == 3 : bytes == 4 && z.m == 2);
  if (v.stride[1] != 1 || v.stride[0] != v.shape[1] ||
      (z.active() ? !sw128 || v.shape[1] * bytes != 128 || (v.off * bytes) % 1024 != 0
                  : (v.shape[1] * bytes) % 16 != 0 || (v.off * bytes) % 128 != 0)) {
    return Err(t, op,
               absl::StrCat("TMA ", what, " ", v.buf->name,
                            " must be a contiguous row-major tile with either the 128-byte swizzle "
                            "(Swizzle(3, 3, 3) for 2-byte, Swizzle(3, 2, 3) for 4-byte elements), "
                            "128-byte rows and a 1024-byte aligned start, or no swizzle, rows "
                            "of a multiple of 16 bytes and a 128-byte aligned start (rows of ",
                            v.shape[1] * bytes, " bytes at byte offset ", v.off * bytes, ")"));
  }
  return absl::OkStatus();
}

// The copy engine reads the shared tile some time before the tma_store_wait
// that covers it: the interpreter reads it at the issue (a tile not yet fully
// written — a missing warpgroup_barrier — stores stale data) and reports any
// write to it until that wait (a buffer reused too early). reduce="add"
// (f32, the checker's rule) adds each element into the destination, rounded to
// f32 once, as the copy engine's reduction does.
absl::Status Machine::TmaStore(Thread& t, const Insn& in) {
  const ir::Op& op = *in.op;
  const View& src = t.views[view_slot_[op.operands[0]]];
  const View& dst = t.views[view_slot_[op.operands[1]]];
  RETURN_IF_ERROR(CheckTmaGlobal(t, &op, dst));
  RETURN_IF_ERROR(CheckTmaShared(t, &op, src, "source"));
  Buffer& b = *src.buf;
  if (b.bulk_readers.empty()) {
    b.bulk_readers.assign(b.data.size(), 0);
    b.bulk_line.assign(b.data.size(), 0);
  }
  BulkRead br{&b, {}, &op};
  for (int64_t i = 0; i < src.shape[0]; ++i) {
    for (int64_t j = 0; j < src.shape[1]; ++j) {
      int64_t idx[2] = {i, j}, ps, pd;
      RETURN_IF_ERROR(Access(t, &op, src, idx, 2, &ps));
      RETURN_IF_ERROR(Access(t, &op, dst, idx, 2, &pd));
      Slot v = Convert(b.data[ps], b.dt, dst.buf->dt);
      if (op.sub) v.f = ConvertToFloat(DType::kF32, dst.buf->data[pd].f + v.f);  // reduce="add"
      dst.buf->data[pd] = v;
      b.bulk_readers[ps]++;
      b.bulk_line[ps] = op.loc.line;
      br.phys.push_back(ps);
    }
  }
  t.bulk_open.push_back(std::move(br));
  return absl::OkStatus();
}

void Machine::TmaStoreWait(Thread& t, int64_t n) {
  while (static_cast<int64_t>(t.bulk_groups.size()) > n) {
    for (const BulkRead& br : t.bulk_groups.front()) {
      for (int64_t p : br.phys) br.buf->bulk_readers[p]--;
    }
    t.bulk_groups.pop_front();
  }
}

absl::Status Machine::CheckBulkFree(const Thread& t, const ir::Op* op, const Buffer& b,
                                    int64_t p) const {
  if (b.bulk_readers[p] == 0) return absl::OkStatus();
  return Err(t, op,
             absl::StrCat("shared memory ", b.name, " written while the tma_store at line ",
                          b.bulk_line[p],
                          " may still read it: tma_store_wait() for that store's group first "
                          "(and a warpgroup_barrier() to tell the other writers)"));
}

absl::Status Machine::CheckWgmmaView(const Thread& t, const ir::Op* op, const View& v,
                                     bool is_a) const {
  const Swizzle& z = v.buf->swz;
  int64_t bytes = DTypeBytes(v.buf->dt);
  int r = v.rank;
  bool n_major = v.stride[r - 1] == 1 && v.stride[r - 2] == 64;
  // B also K-major: the (64, BN) transpose of a (BN, 64) tile.
  bool k_major = !is_a && r == 2 && v.stride[0] == 1 && v.stride[1] == 64 && v.shape[0] == 64;
  bool ok = z.b == 3 && z.m == 3 && z.s == 3 && bytes == 2 && (n_major || k_major) &&
            (v.off * bytes) % 1024 == 0;
  if (r == 3) ok = ok && v.stride[0] == v.shape[1] * 64;
  if (!ok) {
    return Err(t, op,
               absl::StrCat("wgmma operand ", is_a ? "A" : "B", " in ", v.buf->name,
                            " must use the 128-byte swizzle (Swizzle(3, 3, 3), 2-byte elements), "
                            "rows of 64 contiguous elements",
                            r == 3 ? ", blocks of (BK, 64) back to back" : "",
                            is_a ? "" : " (N-major, or K-major as the .T of a (BN, 64) tile)",
                            " and start 1024-byte aligned (byte offset ", v.off * bytes, ")"));
  }
  return absl::OkStatus();
}

absl::Status Machine::CheckAccFree(const Thread& t, const ir::Op* op, int frag) const {
  const ir::Op* w = t.frag_pending_op[frag];
  return Err(t, op,
             absl::StrCat("accumulator read or overwritten while ", t.frag_pending[frag],
                          " wgmma(s) on it are in flight (the last at line ", w ? w->loc.line : 0,
                          "); wgmma_commit() and wgmma_wait() first"));
}

absl::Status Machine::ExecGroup(std::vector<Thread*>& lanes, const Insn& in) {
  GroupState& gs = groups_[lanes[0]->tid / 128];
  const ir::Op& op = *in.op;
  if (in.code == I::kWgmma) {
    FragGeom g = k_.vars[op.operands[0]].type.frag.Geom();
    int unit, lane;
    if (!g.Locate(lanes[0]->tid, &unit, &lane)) {
      return Err(*lanes[0], &op,
                 absl::StrCat("wgmma by a warp group that holds no part of the accumulator (its "
                              "warp groups are ",
                              g.first, "..", g.first + g.wm * g.wn - 1, ")"));
    }
    const bool regs_a = k_.vars[op.operands[1]].type.frag.regs;
    PendingMma pm{&op, regs_a ? View{} : lanes[0]->views[view_slot_[op.operands[1]]],
                  lanes[0]->views[view_slot_[op.operands[2]]]};
    for (Thread* t : lanes) {
      const View& b = t->views[view_slot_[op.operands[2]]];
      bool same_a = true;
      if (regs_a) {
        // The registers are read asynchronously: they may not change before the wait.
        int fa = frag_slot_[op.operands[1]];
        pm.a_regs.push_back(t->frags[fa]);
        t->frag_pending[fa]++;
        t->frag_pending_op[fa] = &op;
      } else {
        const View& a = t->views[view_slot_[op.operands[1]]];
        same_a = a.buf == pm.a.buf && a.off == pm.a.off;
      }
      if (!same_a || b.buf != pm.b.buf || b.off != pm.b.off)
        return Err(*t, &op, "wgmma operands differ across the warp group");
      int f = frag_slot_[op.operands[0]];
      t->frag_pending[f]++;
      t->frag_pending_op[f] = &op;
    }
    gs.open.push_back(pm);
    if (!regs_a) MarkReads(pm.a, 1);
    MarkReads(pm.b, 1);
    return absl::OkStatus();
  }
  if (in.code == I::kWgBarrier) return absl::OkStatus();  // all 128 threads are here
  if (in.code == I::kWgmmaCommit) {
    gs.groups.push_back(std::move(gs.open));
    gs.open.clear();
    return absl::OkStatus();
  }
  while (static_cast<int64_t>(gs.groups.size()) > in.imm) {
    for (const PendingMma& pm : gs.groups.front()) RETURN_IF_ERROR(RunWgmma(lanes, pm));
    gs.groups.pop_front();
  }
  return absl::OkStatus();
}

// acc += A @ B for the warp group's part of the accumulator, reading shared
// memory now; each 64xNx16 instruction sums its 16 products and the
// accumulator in double and rounds once to f32.
absl::Status Machine::RunWgmma(std::vector<Thread*>& lanes, const PendingMma& pm) {
  const ir::Op& op = *pm.op;
  const ir::FragType& ft = k_.vars[op.operands[0]].type.frag;
  const ir::FragType& fa = k_.vars[op.operands[1]].type.frag;
  FragGeom g = ft.Geom();
  int unit, lane;
  g.Locate(lanes[0]->tid, &unit, &lane);
  int K = fa.cols;
  int sm = g.bm / g.wm, sn = g.bn / g.wn;
  int r0 = (unit / g.wn) * sm, c0 = (unit % g.wn) * sn;
  std::vector<double> A(static_cast<size_t>(sm) * K), B(static_cast<size_t>(K) * sn);
  const Thread& t0 = *lanes[0];
  // Data a TMA load delivered may only be read after waiting for its phase.
  auto observed = [&](const Buffer* buf, int64_t p) -> absl::Status {
    if (buf->tma_bar.empty() || buf->tma_bar[p] < 0) return absl::OkStatus();
    for (const Thread* t : lanes) {
      if (t->seen[buf->tma_bar[p]] < buf->tma_phase[p]) {
        int bar = buf->tma_bar[p], arr = 0;
        while (arr + 1 < static_cast<int>(mbar_base_.size()) && mbar_base_[arr + 1] <= bar) ++arr;
        return Err(*t, &op,
                   absl::StrCat("wgmma reads ", buf->name, " (element ", p,
                                ") that a TMA load delivered with phase ", buf->tma_phase[p] - 1,
                                " of ", mbar_names_[arr], "[", bar - mbar_base_[arr],
                                "], which this thread has not waited for (mbarrier_wait first; "
                                "a parity wait for a phase two or more ahead of the barrier "
                                "passes at once)"));
      }
    }
    return absl::OkStatus();
  };
  if (fa.regs) {
    // Each lane's A fragment elements at their (row, col) of the warp group's tile.
    FragGeom ga = fa.Geom();
    for (size_t l = 0; l < lanes.size(); ++l) {
      const std::vector<float>& x = pm.a_regs[l];
      for (int e = 0; e < ga.PerLane() && e < static_cast<int>(x.size()); ++e) {
        int row, col;
        ga.Coord(unit, lanes[l]->tid % 128, e, &row, &col);
        A[static_cast<size_t>(row - r0) * K + col] = x[e];
      }
    }
  } else {
    for (int i = 0; i < sm; ++i) {
      for (int k = 0; k < K; ++k) {
        int64_t idx[2] = {r0 + i, k}, p;
        RETURN_IF_ERROR(Access(t0, &op, pm.a, idx, 2, &p));
        RETURN_IF_ERROR(observed(pm.a.buf, p));
        A[static_cast<size_t>(i) * K + k] = pm.a.buf->data[p].f;
      }
    }
  }
  for (int k = 0; k < K; ++k) {
    for (int j = 0; j < sn; ++j) {
      int n = c0 + j;
      int64_t idx3[3] = {n / 64, k, n % 64}, idx2[2] = {k, n}, p;
      RETURN_IF_ERROR(Access(t0, &op, pm.b, pm.b.rank == 3 ? idx3 : idx2, pm.b.rank, &p));
      RETURN_IF_ERROR(observed(pm.b.buf, p));
      B[static_cast<size_t>(k) * sn + j] = pm.b.buf->data[p].f;
    }
  }
  int f = frag_slot_[op.operands[0]];
  for (Thread* t : lanes) {
    std::vector<float>& acc = t->frags[f];
    for (int e = 0; e < g.PerLane(); ++e) {
      int row, col;
      g.Coord(unit, t->tid % 128, e, &row, &col);
      double v = acc[e];
      const double* a = &A[static_cast<size_t>(row - r0) * K];
      for (int k0 = 0; k0 < K; k0 += 16) {
        double sum = v;
        for (int k = k0; k < k0 + 16; ++k) sum += a[k] * B[static_cast<size_t>(k) * sn + col - c0];
        v = static_cast<float>(sum);
      }
      acc[e] = static_cast<float>(v);
    }
    t->frag_pending[f]--;
    if (fa.regs) t->frag_pending[frag_slot_[op.operands[1]]]--;
  }
  if (!fa.regs) MarkReads(pm.a, -1);
  MarkReads(pm.b, -1);
  return absl::OkStatus();
}

// Counts (delta) a queued wgmma as a reader of every element of operand view v.
void Machine::MarkReads(const View& v, int delta) {
  Buffer& b = *v.buf;
  if (b.wgmma_readers.empty()) b.wgmma_readers.assign(b.data.size(), 0);
  int64_t n0 = v.rank == 3 ? v.shape[0] : 1;
  int64_t r = v.rank - 2;
  for (int64_t i = 0; i < n0; ++i) {
    for (int64_t j = 0; j < v.shape[r]; ++j) {
      for (int64_t k = 0; k < v.shape[r + 1]; ++k) {
        int64_t lin =
            v.off + (v.rank == 3 ? i * v.stride[0] : 0) + j * v.stride[r] + k * v.stride[r + 1];
        int64_t p = b.swz.Apply(lin);
        if (p >= 0 && p < static_cast<int64_t>(b.wgmma_readers.size())) b.wgmma_readers[p] += delta;
      }
    }
  }
}

absl::Status Machine::ExecBlockSync(const Insn& in) {
  if (in.code == I::kBarrier) return absl::OkStatus();
  if (in.code == I::kMbarInit) {
    std::vector<Mbar>& bars = mbars_[in.imm];
    int id = mbar_base_[in.imm];
    for (Mbar& b : bars) {
      b = Mbar{};
      b.id = id++;
      b.arrivals = b.pending = in.op->ints[1];
    }
    for (Thread& t : threads_) t.slots[t.base + in.dst].i = in.imm;
    return absl::OkStatus();
  }
  int ws = k_.warp_size;
  int nt = static_cast<int>(threads_.size());
  Slot total{0};
  bool first = true;
  for (int w0 = 0; w0 < nt; w0 += ws) {
    int n = std::min(ws, nt - w0);
    std::vector<Slot> v(n);
    for (int l = 0; l < n; ++l) v[l] = threads_[w0 + l].slots[threads_[w0 + l].base + in.a];
    Butterfly(in.sub, in.dt, ws, &v);
    total = first ? v[0] : Combine(in.sub, in.dt, total, v[0]);
    first = false;
  }
  for (Thread& t : threads_) t.slots[t.base + in.dst] = total;
  return absl::OkStatus();
}

void Garbage(Buffer* b) {
  for (Slot& s : b->data) {
    if (IsFloat(b->dt))
      s.f = NAN;
    else
      s.i = WrapInt(b->dt, 0x5A5A5A5A);
  }
}

void CollectAllocs(const ir::Block& b, std::vector<const ir::Op*>* shared,
                   std::vector<const ir::Op*>* local, std::vector<const ir::Op*>* mbars) {
  for (const ir::Op& op : b) {
    if (op.code == OpCode::kAllocShared) shared->push_back(&op);
    if (op.code == OpCode::kAllocLocal) local->push_back(&op);
    if (op.code == OpCode::kMbarrier) mbars->push_back(&op);
    for (const ir::Block& r : op.regions) CollectAllocs(r, shared, local, mbars);
  }
}

int64_t EvalSym(const ir::Function& k, const ir::SymInt& s, const std::vector<int64_t>& dims) {
  int64_t v = s.coeff;
  for (int d : s.syms) v *= dims[d];
  return v;
}

absl::Status Machine::Launch(std::vector<HostTensor>* tensors, RunStats* stats) {
  auto t0 = std::chrono::steady_clock::now();
  budget_ = args_.max_instructions;
  // Dims.
  std::vector<int64_t> dims;
  for (const std::string& d : k_.dims) {
    auto it = args_.dims.find(d);
    if (it == args_.dims.end())
      return absl::InvalidArgumentError(absl::StrCat("missing --dims ", d, "=..."));
    if (it->second < 0 || it->second > (int64_t{1} << 31) - 1) {
      return absl::InvalidArgumentError(absl::StrCat("dim ", d, "=", it->second, " out of range"));
    }
    dims.push_back(it->second);
  }
  for (const auto& [name, v] : args_.dims) {
    bool known = false;
    for (const std::string& d : k_.dims) known |= d == name;
    if (!known)
      return absl::InvalidArgumentError(absl::StrCat("kernel ", k_.name, " has no dim ", name));
  }
  if (tensors->size() != k_.tensors.size()) {
    return absl::InvalidArgumentError(absl::StrCat("kernel ", k_.name, " takes ", k_.tensors.size(),
                                                   " tensors, got ", tensors->size()));
  }
  // Compile.
  kernel_fn_ = -1;
  for (size_t i = 0; i < m_.functions.size(); ++i) {
    if (&m_.functions[i] == &k_) kernel_fn_ = static_cast<int>(i);
  }
  if (kernel_fn_ < 0) return absl::InvalidArgumentError("kernel is not part of the module");
  view_slot_.assign(k_.vars.size(), -1);
  frag_slot_.assign(k_.vars.size(), -1);
  for (size_t v = 0; v < k_.vars.size(); ++v) {
    const ir::Type& vt = k_.vars[v].type;
    if (vt.is_view() || (vt.is_frag() && vt.frag.is_desc()))
      view_slot_[v] = nviews_++;
    else if (vt.is_frag())
      frag_slot_[v] = nfrags_++;
  }
  std::vector<const ir::Op*> sh, lo, mb;
  CollectAllocs(k_.body, &sh, &lo, &mb);
  for (size_t i = 0; i < mb.size(); ++i) mbar_index_[mb[i]] = static_cast<int>(i);
  for (size_t i = 0; i < sh.size(); ++i) shared_index_[sh[i]] = static_cast<int>(i);
  for (size_t i = 0; i < lo.size(); ++i) local_index_[lo[i]] = static_cast<int>(i);
  code_fns_.resize(m_.functions.size());
  for (size_t i = 0; i < m_.functions.size(); ++i) {
    if (!m_.functions[i].is_kernel || static_cast<int>(i) == kernel_fn_)
      CompileFn(static_cast<int>(i));
  }
  int launch_entry = static_cast<int>(code_.size());
  CompileBlock(k_.launch, kernel_fn_);
  Insn halt;
  halt.code = I::kHalt;
  Add(halt);
  for (const FnCode& fc : code_fns_) stack_size_ += fc.frame;
  // Entry state.
  entry_slots_.assign(code_fns_[kernel_fn_].frame, Slot{0});
  for (size_t i = 0; i < dims.size(); ++i) entry_slots_[k_.dim_vars[i]].i = dims[i];
  for (const ir::ScalarParam& sp : k_.scalars) {
    auto it = args_.scalars.find(sp.name);
    if (it == args_.scalars.end())
      return absl::InvalidArgumentError(absl::StrCat("missing --scalars ", sp.name, "=..."));
    Slot x;
    x.f = it->second;
    entry_slots_[sp.var] = Convert(x, DType::kF32, sp.dtype);
    if (IsFloat(sp.dtype)) entry_slots_[sp.var].f = RoundTo(sp.dtype, it->second);
  }
  globals_.resize(k_.tensors.size());
  entry_views_.assign(nviews_, View{});
  for (size_t i = 0; i < k_.tensors.size(); ++i) {
    const ir::TensorParam& tp = k_.tensors[i];
    HostTensor& ht = (*tensors)[i];
    View v;
    v.rank = static_cast<int>(tp.shape.size());
    for (int d = 0; d < v.rank; ++d) {
      v.shape[d] = EvalSym(k_, tp.shape[d], dims);
      v.stride[d] = EvalSym(k_, tp.stride[d], dims);
    }
    std::vector<int64_t> shape(v.shape, v.shape + v.rank), stride(v.stride, v.stride + v.rank);
    if (ht.shape != shape || ht.stride != stride || ht.dtype != tp.dtype) {
      return absl::InvalidArgumentError(
          absl::StrCat("tensor ", tp.name, " does not match the kernel's ", DTypeName(tp.dtype),
                       " [", absl::StrJoin(shape, ","), "] layout"));
    }
    Buffer& b = globals_[i];
    b.dt = tp.dtype;
    b.name = tp.name;
    b.data.resize(ht.data.size());
    for (size_t e = 0; e < ht.data.size(); ++e) {
      if (IsFloat(b.dt))
        b.data[e].f = RoundTo(b.dt, ht.data[e]);
      else
        b.data[e].i = ConvertToInt(b.dt, ht.data[e]);
    }
    v.buf = &b;
    entry_views_[view_slot_[tp.var]] = v;
  }
  // Grid.
  Thread host;
  host.slots = entry_slots_;
  host.slots.resize(stack_size_);
  host.views = entry_views_;
  host.pc = launch_entry;
  host.fn = kernel_fn_;
  RETURN_IF_ERROR(RunThread(host));
  for (size_t d = 0; d < 3; ++d) grid_[d] = d < k_.grid.size() ? host.slots[k_.grid[d]].i : 1;
  for (size_t d = 0; d < 3; ++d) {
    if (grid_[d] < 0 || grid_[d] > (int64_t{1} << 31))
      return absl::InvalidArgumentError(
          absl::StrCat("grid dim ", d, " = ", grid_[d], " out of range"));
  }
  // Threads and shared memory.
  shared_.resize(sh.size());
  for (size_t i = 0; i < sh.size(); ++i) {
    shared_[i].dt = k_.vars[sh[i]->result].type.dtype;
    shared_[i].swz = sh[i]->layout.swizzle;
    shared_[i].space = Space::kShared;
    shared_[i].name =
        k_.vars[sh[i]->result].name.empty() ? "shared buffer" : k_.vars[sh[i]->result].name;
    shared_[i].data.resize(sh[i]->layout.Cosize());
  }
  mbars_.resize(mb.size());
  for (size_t i = 0; i < mb.size(); ++i) {
    mbars_[i].resize(mb[i]->ints[0]);
    mbar_base_.push_back(nmbars_);
    nmbars_ += static_cast<int>(mb[i]->ints[0]);
    mbar_names_.push_back(k_.vars[mb[i]->result].name.empty() ? "mbarrier"
                                                              : k_.vars[mb[i]->result].name);
  }
  threads_.resize(k_.threads);
  for (int i = 0; i < k_.threads; ++i) {
    Thread& t = threads_[i];
    t.tid = i;
    t.warp = i / k_.warp_size;
    t.lane = i % k_.warp_size;
    t.slots.assign(stack_size_, Slot{0});
    t.frags.resize(nfrags_);
    t.frag_pending.assign(nfrags_, 0);
    t.frag_pending_op.assign(nfrags_, nullptr);
    t.locals.resize(lo.size());
    for (size_t j = 0; j < lo.size(); ++j) {
      t.locals[j].dt = k_.vars[lo[j]->result].type.dtype;
      t.locals[j].space = Space::kLocal;
      t.locals[j].name =
          k_.vars[lo[j]->result].name.empty() ? "local array" : k_.vars[lo[j]->result].name;
      t.locals[j].data.resize(lo[j]->layout.Cosize());
    }
  }
  int entry = code_fns_[kernel_fn_].entry;
  int nwarps = (k_.threads + k_.warp_size - 1) / k_.warp_size;
  std::vector<Thread*> lanes;
  for (block_[2] = 0; block_[2] < grid_[2]; ++block_[2]) {
    for (block_[1] = 0; block_[1] < grid_[1]; ++block_[1]) {
      for (block_[0] = 0; block_[0] < grid_[0]; ++block_[0]) {
        if (stats) stats->blocks++;
        for (Buffer& b : shared_) {
          Garbage(&b);
          b.tma_bar.clear();
          b.tma_phase.clear();
          b.wgmma_readers.clear();
        }
        for (Thread& t : threads_) {
          t.pc = entry;
          t.st = Thread::kReady;
          t.base = 0;
          t.fn = kernel_fn_;
          t.frames.clear();
          std::copy(entry_slots_.begin(), entry_slots_.end(), t.slots.begin());
          t.views = entry_views_;
          for (Buffer& b : t.locals) Garbage(&b);
          t.open.clear();
          t.groups.clear();
          t.bulk_open.clear();
          t.bulk_groups.clear();
          std::fill(t.frag_pending.begin(), t.frag_pending.end(), 0);
          t.seen.assign(nmbars_, 0);
        }
        for (std::vector<Mbar>& bars : mbars_) {
          for (Mbar& b : bars) b = Mbar{};
        }
        named_.fill(NamedBar{});
        groups_.assign((k_.threads + 127) / 128, GroupState{});
        while (true) {
          for (Thread& t : threads_) {
            if (t.st == Thread::kReady) RETURN_IF_ERROR(RunThread(t));
          }
          bool progress = false;
          for (int w = 0; w < nwarps; ++w) {
            lanes.clear();
            int pc = -1;
            bool all = true, any_sync = false;
            for (int l = w * k_.warp_size; l < std::min(k_.threads, (w + 1) * k_.warp_size); ++l) {
              Thread& t = threads_[l];
              lanes.push_back(&t);
              if (t.st == Thread::kSync && IsWarpSync(code_[t.pc].code)) {
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
              RETURN_IF_ERROR(ExecWarp(lanes, code_[pc]));
              for (Thread* t : lanes) {
                t->st = Thread::kReady;
                t->pc++;
              }
              progress = true;
            }
          }
          // Warp-group collectives (wgmma and its commit/wait).
          for (size_t g = 0; g < groups_.size(); ++g) {
            int lo = static_cast<int>(g) * 128, hi = std::min(k_.threads, lo + 128);
            const Thread& t0 = threads_[lo];
            if (t0.st != Thread::kSync || !IsGroupSync(code_[t0.pc].code)) continue;
            bool all = hi - lo == 128;
            for (int l = lo; l < hi && all; ++l)
              all = threads_[l].st == Thread::kSync && threads_[l].pc == t0.pc;
            if (!all) continue;
            lanes.clear();
            for (int l = lo; l < hi; ++l) lanes.push_back(&threads_[l]);
            RETURN_IF_ERROR(ExecGroup(lanes, code_[t0.pc]));
            for (Thread* t : lanes) {
              t->st = Thread::kReady;
              t->pc++;
            }
            progress = true;
          }
          // Threads blocked on an mbarrier whose phase has completed.
          for (Thread& t : threads_) {
            if (t.st == Thread::kBlocked && WaitPasses(t)) {
              t.st = Thread::kReady;
              // A named barrier counted this thread when it blocked: resume after it.
              if (code_[t.pc].code == I::kNamedBar) ++t.pc;
              progress = true;
            }
          }
          if (progress) continue;
          for (const Thread& t : threads_) {
            if (t.st == Thread::kBlocked) {
              return Err(t, code_[t.pc].op, absl::StrCat("deadlock: ", DescribeWait(t)));
            }
          }
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
          if (done == k_.threads) break;
          const Thread& f = threads_[first_sync];
          const Insn& fin = code_[f.pc];
          if (done == 0 && same && IsBlockSync(fin.code)) {
            RETURN_IF_ERROR(ExecBlockSync(fin));
            for (Thread& t : threads_) {
              t.st = Thread::kReady;
              t.pc++;
            }
            continue;
          }
          // Deadlock: describe it.
          for (Thread& t : threads_) {
            if (t.st == Thread::kDone) {
              return Err(f, fin.op,
                         absl::StrCat(IsBlockSync(fin.code) ? "barrier" : "warp collective",
                                      " is never reached by thread ", t.tid,
                                      ", which finished the kernel (divergent ",
                                      IsBlockSync(fin.code) ? "barrier)" : "collective)"));
            }
          }
          for (Thread& t : threads_) {
            if (t.pc != f.pc) {
              const ir::Op* other = code_[t.pc].op;
              return Err(
                  f, fin.op,
                  absl::StrCat("divergent synchronisation: this thread waits here while thread ",
                               t.tid, " waits at line ", other ? other->loc.line : 0, ":",
                               other ? other->loc.col : 0));
            }
          }
          return Err(f, fin.op, "deadlock at a synchronising op");
        }
        for (Thread& t : threads_) {
          if (!t.bulk_open.empty() || !t.bulk_groups.empty()) {
            const ir::Op* last = !t.bulk_open.empty()           ? t.bulk_open.back().op
                                 : t.bulk_groups.back().empty() ? nullptr
                                                                : t.bulk_groups.back().back().op;
            return Err(t, last,
                       absl::StrCat("the block ended with ",
                                    t.bulk_groups.size() + (t.bulk_open.empty() ? 0 : 1),
                                    " tma_store group(s) of this thread not waited for (its shared "
                                    "memory would be released while the copy engine reads it): "
                                    "tma_store_commit() and tma_store_wait(0) before the end"));
          }
        }
        for (size_t i = 0; i < mbars_.size(); ++i) {
          for (size_t j = 0; j < mbars_[i].size(); ++j) {
            const Mbar& b = mbars_[i][j];
            if (!b.writes.empty()) {
              return Err(
                  threads_[0], nullptr,
                  absl::StrCat("the block ended with a TMA load in flight on ", mbar_names_[i], "[",
                               j, "] (its phase ", b.phase, " still misses ", b.pending,
                               " arrival(s) and ", b.tx, " byte(s))"));
            }
          }
        }
      }
    }
  }
  for (size_t i = 0; i < k_.tensors.size(); ++i) {
    HostTensor& ht = (*tensors)[i];
    const Buffer& b = globals_[i];
    for (size_t e = 0; e < ht.data.size(); ++e)
      ht.data[e] = IsFloat(b.dt) ? b.data[e].f : static_cast<double>(b.data[e].i);
  }
  if (stats) {
    stats->instructions += executed_;
    stats->seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::vector<HostTensor>> MakeTensors(const ir::Function& k, const LaunchArgs& args) {
  std::vector<int64_t> dims;
  for (const std::string& d : k.dims) {
    auto it = args.dims.find(d);
    if (it == args.dims.end())
      return absl::InvalidArgumentError(absl::StrCat("missing --dims ", d, "=..."));
    if (it->second < 0 || it->second > (int64_t{1} << 31) - 1) {
      return absl::InvalidArgumentError(absl::StrCat("dim ", d, "=", it->second, " out of range"));
    }
    dims.push_back(it->second);
  }
  std::vector<HostTensor> out;
  int64_t total = 0;
  for (const ir::TensorParam& tp : k.tensors) {
    HostTensor t;
    t.name = tp.name;
    t.dtype = tp.dtype;
    for (size_t d = 0; d < tp.shape.size(); ++d) {
      t.shape.push_back(EvalSym(k, tp.shape[d], dims));
      t.stride.push_back(EvalSym(k, tp.stride[d], dims));
    }
    int64_t n = t.Cosize();
    total += n;
    if (n < 0 || total > (int64_t{1} << 28)) {
      return absl::InvalidArgumentError(
          "tensors too large for the interpreter (2^28 elements in all)");
    }
    t.data.assign(n, 0.0);
    out.push_back(std::move(t));
  }
  return out;
}

void FillRandom(std::vector<HostTensor>* tensors, uint64_t seed) {
  std::mt19937_64 rng(seed);
  for (HostTensor& t : *tensors) {
    for (double& x : t.data) {
      uint64_t r = rng();
      if (IsFloat(t.dtype)) {
        x = RoundTo(t.dtype, static_cast<double>(r >> 11) * 0x1.0p-52 - 1.0);
      } else {
        x = static_cast<double>(r % (t.dtype == DType::kBool ? 2 : 16));
      }
    }
  }
}

absl::Status Run(const ir::Module& module, const ir::Function& kernel, const LaunchArgs& args,
                 std::vector<HostTensor>* tensors, RunStats* stats) {
  if (!kernel.is_kernel)
    return absl::InvalidArgumentError(absl::StrCat(kernel.name, " is not a kernel"));
  Machine m(module, kernel, args);
  return m.Launch(tensors, stats);
}

}  // namespace argus::dsl
