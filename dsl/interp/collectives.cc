// The collective family: warp shuffles, and warp and block reductions in
// the butterfly order codegen emits (so float sums agree bit for bit).
#include <algorithm>
#include <cmath>
#include <vector>

#include "dsl/interp/machine.h"
#include "dsl/interp/scalar.h"

namespace argus::dsl::interp {
namespace {

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

Slot& SlotOf(Thread* t, int idx) { return t->slots[t->base + idx]; }

// Lanes past the warp's end (a partial warp) read their own value.
void Shuffle(std::vector<Thread*>& lanes, const Insn& in, int ws) {
  int n = static_cast<int>(lanes.size());
  std::vector<Slot> vals(n);
  for (int l = 0; l < n; ++l) vals[l] = SlotOf(lanes[l], in.a);
  for (int l = 0; l < n; ++l) {
    int64_t arg = SlotOf(lanes[l], in.b).i;
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
    SlotOf(lanes[l], in.dst) = vals[src];
  }
}

// Each warp reduces by butterfly; the block combines the warps' results in
// warp order.
Slot BlockReduce(std::vector<Thread*>& lanes, const Insn& in, int ws) {
  int nt = static_cast<int>(lanes.size());
  Slot total{0};
  bool first = true;
  for (int w0 = 0; w0 < nt; w0 += ws) {
    int n = std::min(ws, nt - w0);
    std::vector<Slot> v(n);
    for (int l = 0; l < n; ++l) v[l] = SlotOf(lanes[w0 + l], in.a);
    Butterfly(in.sub, in.dt, ws, &v);
    total = first ? v[0] : Combine(in.sub, in.dt, total, v[0]);
    first = false;
  }
  return total;
}

}  // namespace

absl::Status Machine::Collective(Lanes& lanes, const Insn& in) {
  int ws = k_.warp_size;
  switch (in.code) {
    case Bc::kShfl:
      Shuffle(lanes, in, ws);
      break;
    case Bc::kWarpReduce: {
      int n = static_cast<int>(lanes.size());
      std::vector<Slot> v(n);
      for (int l = 0; l < n; ++l) v[l] = SlotOf(lanes[l], in.a);
      Butterfly(in.sub, in.dt, ws, &v);
      for (int l = 0; l < n; ++l) SlotOf(lanes[l], in.dst) = v[l];
      break;
    }
    case Bc::kBlockReduce: {
      Slot total = BlockReduce(lanes, in, ws);
      for (Thread* t : lanes) SlotOf(t, in.dst) = total;
      break;
    }
    default:
      break;
  }
  return absl::OkStatus();
}

}  // namespace argus::dsl::interp
