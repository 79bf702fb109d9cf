// The wgmma family: Hopper warp-group mma. A wgmma is issued by its whole
// warp group into the group's queue and executes (reading shared memory
// then) when a wgmma_wait covers its commit group; until then its
// accumulator may not be touched and its shared operands not overwritten.
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status.h"
#include "dsl/interp/machine.h"
#include "dsl/interp/memory.h"

namespace argus::dsl::interp {

absl::Status Machine::ExecWgmma(Thread& t, const Insn& in) {
  if (in.sync != ir::OpScope::kThread) return Park(t);  // wgmma, its commit and wait
  const ir::Op& op = *in.op;
  const View& v = t.views[slots_.view_slot[op.operands[0]]];
  RETURN_IF_ERROR(CheckWgmmaView(t, &op, v, op.name == "A"));
  t.views[slots_.view_slot[op.result]] = v;
  return absl::OkStatus();
}

absl::Status Machine::WgmmaGroup(Lanes& lanes, const Insn& in) {
  GroupState& gs = groups_[lanes[0]->tid / 128];
  switch (in.code) {
    case Bc::kWgmma:
      return IssueWgmma(lanes, gs, *in.op);
    case Bc::kWgmmaCommit:
      gs.groups.push_back(std::move(gs.open));
      gs.open.clear();
      break;
    case Bc::kWgmmaWait:
      while (static_cast<int64_t>(gs.groups.size()) > in.imm) {
        for (const PendingMma& pm : gs.groups.front()) RETURN_IF_ERROR(RunWgmma(lanes, pm));
        gs.groups.pop_front();
      }
      break;
    default:
      break;
  }
  return absl::OkStatus();
}

// Queues the wgmma with the group's operand views (the same in every lane)
// and marks what it will read and write as in flight.
absl::Status Machine::IssueWgmma(Lanes& lanes, GroupState& gs, const ir::Op& op) {
  FragGeom g = k_.vars[op.operands[0]].type.frag.Geom();
  int unit, lane;
  if (!g.Locate(lanes[0]->tid, &unit, &lane)) {
    return Err(*lanes[0], &op,
               absl::StrCat("wgmma by a warp group that holds no part of the accumulator (its "
                            "warp groups are ",
                            g.first, "..", g.first + g.wm * g.wn - 1, ")"));
  }
  const std::vector<int>& vs = slots_.view_slot;
  const bool regs_a = k_.vars[op.operands[1]].type.frag.regs;
  PendingMma pm{&op, regs_a ? View{} : lanes[0]->views[vs[op.operands[1]]],
                lanes[0]->views[vs[op.operands[2]]]};
  for (Thread* t : lanes) {
    const View& b = t->views[vs[op.operands[2]]];
    bool same_a = true;
    if (regs_a) {
      // The registers are read asynchronously: they may not change before the wait.
      int fa = slots_.frag_slot[op.operands[1]];
      pm.a_regs.push_back(t->frags[fa]);
      t->frag_pending[fa]++;
      t->frag_pending_op[fa] = &op;
    } else {
      const View& a = t->views[vs[op.operands[1]]];
      same_a = a.buf == pm.a.buf && a.off == pm.a.off;
    }
    if (!same_a || b.buf != pm.b.buf || b.off != pm.b.off)
      return Err(*t, &op, "wgmma operands differ across the warp group");
    int f = slots_.frag_slot[op.operands[0]];
    t->frag_pending[f]++;
    t->frag_pending_op[f] = &op;
  }
  gs.open.push_back(pm);
  if (!regs_a) MarkReads(pm.a, 1);
  MarkReads(pm.b, 1);
  return absl::OkStatus();
}

// Data a TMA load delivered may only be read after waiting for its phase.
absl::Status Machine::CheckTmaObserved(const Lanes& lanes, const ir::Op& op, const Buffer* buf,
                                       int64_t p) const {
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
}

// acc += A @ B for the warp group's part of the accumulator, reading shared
// memory now; each 64xNx16 instruction sums its 16 products and the
// accumulator in double and rounds once to f32.
absl::Status Machine::RunWgmma(Lanes& lanes, const PendingMma& pm) {
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
        RETURN_IF_ERROR(CheckTmaObserved(lanes, op, pm.a.buf, p));
        A[static_cast<size_t>(i) * K + k] = pm.a.buf->data[p].f;
      }
    }
  }
  for (int k = 0; k < K; ++k) {
    for (int j = 0; j < sn; ++j) {
      int n = c0 + j;
      int64_t idx3[3] = {n / 64, k, n % 64}, idx2[2] = {k, n}, p;
      RETURN_IF_ERROR(Access(t0, &op, pm.b, pm.b.rank == 3 ? idx3 : idx2, pm.b.rank, &p));
      RETURN_IF_ERROR(CheckTmaObserved(lanes, op, pm.b.buf, p));
      B[static_cast<size_t>(k) * sn + j] = pm.b.buf->data[p].f;
    }
  }
  int f = slots_.frag_slot[op.operands[0]];
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
    if (fa.regs) t->frag_pending[slots_.frag_slot[op.operands[1]]]--;
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

// Warp collectives on an accumulator: no lane may have a wgmma in flight on it.
absl::Status Machine::CheckAccFree(const Lanes& lanes, const ir::Op* op, int frag) const {
  for (const Thread* t : lanes) {
    if (t->frag_pending[frag] > 0) return AccBusy(*t, op, frag);
  }
  return absl::OkStatus();
}

absl::Status Machine::AccBusy(const Thread& t, const ir::Op* op, int frag) const {
  const ir::Op* w = t.frag_pending_op[frag];
  return Err(t, op,
             absl::StrCat("accumulator read or overwritten while ", t.frag_pending[frag],
                          " wgmma(s) on it are in flight (the last at line ", w ? w->loc.line : 0,
                          "); wgmma_commit() and wgmma_wait() first"));
}

}  // namespace argus::dsl::interp
