// The TMA family: tensor memory accelerator loads (landing at their
// mbarrier phase) and the TMA store epilogue (docs/dsl.md "TMA store
// epilogue"): bulk stores that read their shared tile until a
// tma_store_wait covers them.
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status.h"
#include "dsl/interp/machine.h"
#include "dsl/interp/memory.h"
#include "dsl/interp/scalar.h"

namespace argus::dsl::interp {

absl::Status Machine::ExecTma(Thread& t, const Insn& in) {
  switch (in.code) {
    case Bc::kTmaLoad:
      return TmaLoad(t, in);
    case Bc::kTmaStore:
      return TmaStore(t, in);
    case Bc::kTmaStoreCommit:
      t.bulk_groups.push_back(std::move(t.bulk_open));
      t.bulk_open.clear();
      break;
    case Bc::kTmaStoreWait:
      TmaStoreWait(t, in.imm);
      break;
    default:
      break;
  }
  return absl::OkStatus();
}

absl::Status Machine::TmaLoad(Thread& t, const Insn& in) {
  const ir::Op& op = *in.op;
  const Slot* s = t.slots.data() + t.base;
  const View& src = t.views[slots_.view_slot[op.operands[0]]];
  const View& dst = t.views[slots_.view_slot[op.operands[1]]];
  ASSIGN_OR_RETURN(Mbar * b, MbarOf(t, &op, s[op.operands[2]].i, s[op.operands[3]].i));
  int64_t bytes = DTypeBytes(dst.buf->dt);
  RETURN_IF_ERROR(CheckTmaGlobal(t, &op, src));
  RETURN_IF_ERROR(CheckTmaShared(t, &op, dst, "destination"));
  int64_t n = 0;
  for (int64_t i = 0; i < src.shape[0]; ++i) {
    for (int64_t j = 0; j < src.shape[1]; ++j) {
      int64_t idx[2] = {i, j}, ps, pd;
      RETURN_IF_ERROR(Access(t, &op, dst, idx, 2, &pd));
      Slot v{0};  // past the tensor's edge: the copy engine's zero fill
      if (src.Inside(i, j)) {
        RETURN_IF_ERROR(Access(t, &op, src, idx, 2, &ps));
        v = src.buf->data[ps];
      }
      b->writes.push_back(Pending{dst.buf, pd, v});
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
  const View& src = t.views[slots_.view_slot[op.operands[0]]];
  const View& dst = t.views[slots_.view_slot[op.operands[1]]];
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
      b.bulk_readers[ps]++;
      b.bulk_line[ps] = op.loc.line;
      br.phys.push_back(ps);
      if (!dst.Inside(i, j)) continue;  // past the tensor's edge: clipped
      RETURN_IF_ERROR(Access(t, &op, dst, idx, 2, &pd));
      Slot v = Convert(b.data[ps], b.dt, dst.buf->dt);
      if (op.sub) v.f = ConvertToFloat(DType::kF32, dst.buf->data[pd].f + v.f);  // reduce="add"
      dst.buf->data[pd] = v;
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

}  // namespace argus::dsl::interp
