// A launch: the kernel compiled, its dims, scalars and tensors bound, the
// grid computed by the launch block, then every block run in order with
// fresh shared memory, barriers and thread state, and the tensors copied
// back once all blocks succeeded.
#include <algorithm>
#include <chrono>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status.h"
#include "dsl/interp/machine.h"
#include "dsl/interp/scalar.h"

namespace argus::dsl::interp {
namespace {

// Fresh shared memory and local arrays hold garbage, not zeros.
void Garbage(Buffer* b) {
  for (Slot& s : b->data) {
    if (IsFloat(b->dt))
      s.f = NAN;
    else
      s.i = WrapInt(b->dt, 0x5A5A5A5A);
  }
}

std::string NameOr(const std::string& name, const char* fallback) {
  return name.empty() ? fallback : name;
}

}  // namespace

absl::StatusOr<std::vector<int64_t>> ResolveDims(const ir::Function& k, const LaunchArgs& args) {
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
  return dims;
}

int64_t EvalSym(const ir::SymInt& s, const std::vector<int64_t>& dims) {
  int64_t v = s.coeff;
  for (int d : s.syms) v *= dims[d];
  return v;
}

absl::Status Machine::Launch(std::vector<HostTensor>* tensors, RunStats* stats) {
  auto t0 = std::chrono::steady_clock::now();
  budget_ = args_.max_instructions;
  ASSIGN_OR_RETURN(std::vector<int64_t> dims, ResolveDims(k_, args_));
  for (const auto& [name, v] : args_.dims) {
    if (std::find(k_.dims.begin(), k_.dims.end(), name) == k_.dims.end())
      return absl::InvalidArgumentError(absl::StrCat("kernel ", k_.name, " has no dim ", name));
  }
  if (tensors->size() != k_.tensors.size()) {
    return absl::InvalidArgumentError(absl::StrCat("kernel ", k_.name, " takes ", k_.tensors.size(),
                                                   " tensors, got ", tensors->size()));
  }
  RETURN_IF_ERROR(CompileKernel());
  RETURN_IF_ERROR(BindScalars(dims));
  RETURN_IF_ERROR(BindTensors(dims, *tensors));
  RETURN_IF_ERROR(ComputeGrid());
  AllocateBlockState();
  for (block_[2] = 0; block_[2] < grid_[2]; ++block_[2]) {
    for (block_[1] = 0; block_[1] < grid_[1]; ++block_[1]) {
      for (block_[0] = 0; block_[0] < grid_[0]; ++block_[0]) {
        if (stats) stats->blocks++;
        ResetBlock();
        RETURN_IF_ERROR(RunBlock());
        RETURN_IF_ERROR(CheckBlockEnd());
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

absl::Status Machine::CompileKernel() {
  kernel_fn_ = -1;
  for (size_t i = 0; i < m_.functions.size(); ++i) {
    if (&m_.functions[i] == &k_) kernel_fn_ = static_cast<int>(i);
  }
  if (kernel_fn_ < 0) return absl::InvalidArgumentError("kernel is not part of the module");
  slots_ = AssignSlots(k_);
  prog_ = Compile(m_, kernel_fn_, slots_);
  return absl::OkStatus();
}

// The entry frame: dims and scalar arguments in their vars.
absl::Status Machine::BindScalars(const std::vector<int64_t>& dims) {
  entry_slots_.assign(prog_.fns[kernel_fn_].frame, Slot{0});
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
  return absl::OkStatus();
}

// Global buffers holding the tensors' values (rounded to their dtypes), and
// the entry views onto them.
absl::Status Machine::BindTensors(const std::vector<int64_t>& dims,
                                  const std::vector<HostTensor>& tensors) {
  globals_.resize(k_.tensors.size());
  entry_views_.assign(slots_.nviews, View{});
  for (size_t i = 0; i < k_.tensors.size(); ++i) {
    const ir::TensorParam& tp = k_.tensors[i];
    const HostTensor& ht = tensors[i];
    View v;
    v.rank = static_cast<int>(tp.shape.size());
    for (int d = 0; d < v.rank; ++d) {
      v.shape[d] = EvalSym(tp.shape[d], dims);
      v.stride[d] = EvalSym(tp.stride[d], dims);
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
    entry_views_[slots_.view_slot[tp.var]] = v;
  }
  return absl::OkStatus();
}

// Runs the launch block on a host thread and reads the grid it computed.
absl::Status Machine::ComputeGrid() {
  Thread host;
  host.slots = entry_slots_;
  host.slots.resize(prog_.stack_size);
  host.views = entry_views_;
  host.pc = prog_.launch_entry;
  host.fn = kernel_fn_;
  RETURN_IF_ERROR(RunThread(host));
  for (size_t d = 0; d < 3; ++d) grid_[d] = d < k_.grid.size() ? host.slots[k_.grid[d]].i : 1;
  for (size_t d = 0; d < 3; ++d) {
    if (grid_[d] < 0 || grid_[d] > (int64_t{1} << 31))
      return absl::InvalidArgumentError(
          absl::StrCat("grid dim ", d, " = ", grid_[d], " out of range"));
  }
  return absl::OkStatus();
}

// Shared buffers, mbarrier arrays and threads, sized once for every block.
void Machine::AllocateBlockState() {
  const std::vector<const ir::Op*>& sh = slots_.shared;
  shared_.resize(sh.size());
  for (size_t i = 0; i < sh.size(); ++i) {
    const ir::Var& var = k_.vars[sh[i]->result];
    shared_[i].dt = var.type.dtype;
    shared_[i].swz = sh[i]->layout.swizzle;
    shared_[i].space = Space::kShared;
    shared_[i].name = NameOr(var.name, "shared buffer");
    shared_[i].data.resize(sh[i]->layout.Cosize());
  }
  const std::vector<const ir::Op*>& mb = slots_.mbars;
  mbars_.resize(mb.size());
  for (size_t i = 0; i < mb.size(); ++i) {
    mbars_[i].resize(mb[i]->ints[0]);
    mbar_base_.push_back(nmbars_);
    nmbars_ += static_cast<int>(mb[i]->ints[0]);
    mbar_names_.push_back(NameOr(k_.vars[mb[i]->result].name, "mbarrier"));
  }
  const std::vector<const ir::Op*>& lo = slots_.local;
  threads_.resize(k_.threads);
  for (int i = 0; i < k_.threads; ++i) {
    Thread& t = threads_[i];
    t.tid = i;
    t.warp = i / k_.warp_size;
    t.lane = i % k_.warp_size;
    t.slots.assign(prog_.stack_size, Slot{0});
    t.frags.resize(slots_.nfrags);
    t.frag_pending.assign(slots_.nfrags, 0);
    t.frag_pending_op.assign(slots_.nfrags, nullptr);
    t.locals.resize(lo.size());
    for (size_t j = 0; j < lo.size(); ++j) {
      const ir::Var& var = k_.vars[lo[j]->result];
      t.locals[j].dt = var.type.dtype;
      t.locals[j].space = Space::kLocal;
      t.locals[j].name = NameOr(var.name, "local array");
      t.locals[j].data.resize(lo[j]->layout.Cosize());
    }
    all_.push_back(&t);
  }
}

void Machine::ResetBlock() {
  for (Buffer& b : shared_) {
    Garbage(&b);
    b.tma_bar.clear();
    b.tma_phase.clear();
    b.wgmma_readers.clear();
  }
  for (Thread& t : threads_) {
    t.pc = prog_.fns[kernel_fn_].entry;
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
}

// Asynchronous work may not outlive its block: tma_stores still reading
// shared memory, TMA loads still landing.
absl::Status Machine::CheckBlockEnd() const {
  for (const Thread& t : threads_) {
    if (t.bulk_open.empty() && t.bulk_groups.empty()) continue;
    const ir::Op* last = !t.bulk_open.empty()           ? t.bulk_open.back().op
                         : t.bulk_groups.back().empty() ? nullptr
                                                        : t.bulk_groups.back().back().op;
    return Err(
        t, last,
        absl::StrCat("the block ended with ", t.bulk_groups.size() + (t.bulk_open.empty() ? 0 : 1),
                     " tma_store group(s) of this thread not waited for (its shared "
                     "memory would be released while the copy engine reads it): "
                     "tma_store_commit() and tma_store_wait(0) before the end"));
  }
  for (size_t i = 0; i < mbars_.size(); ++i) {
    for (size_t j = 0; j < mbars_[i].size(); ++j) {
      const Mbar& b = mbars_[i][j];
      if (b.writes.empty()) continue;
      return Err(threads_[0], nullptr,
                 absl::StrCat("the block ended with a TMA load in flight on ", mbar_names_[i], "[",
                              j, "] (its phase ", b.phase, " still misses ", b.pending,
                              " arrival(s) and ", b.tx, " byte(s))"));
    }
  }
  return absl::OkStatus();
}

}  // namespace argus::dsl::interp
