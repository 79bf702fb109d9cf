// dsl/interp/memory.h: the memory family's handler — scalar loads and
// stores through views, block copies and cp.async groups (async copies land
// only at the wait_group that covers their group).
//
// Inline: loads and stores are, after scalar ops, what the thread loop runs
// most; element access, copies and the groups are in memory.cc.
//
// Thread safety: touches its thread and the memory it addresses.
#ifndef ARGUS_DSL_INTERP_MEMORY_H_
#define ARGUS_DSL_INTERP_MEMORY_H_

#include <cstdint>

#include "absl/base/attributes.h"
#include "base/status.h"
#include "dsl/interp/machine.h"

namespace argus::dsl::interp {

// The common case inline; anything outside the view or the buffer goes to
// AccessSlow, which decides between an error and a soft miss.
ABSL_ATTRIBUTE_ALWAYS_INLINE inline absl::Status Machine::Access(const Thread& t, const ir::Op* op,
                                                                 const View& v, const int64_t* idx,
                                                                 int n, int64_t* phys, bool soft,
                                                                 bool* oob) const {
  int64_t lin = v.off;
  for (int d = 0; d < n; ++d) {
    if (idx[d] < 0 || idx[d] >= v.shape[d]) return AccessSlow(t, op, v, idx, n, phys, soft, oob);
    lin += idx[d] * v.stride[d];
  }
  const auto size = static_cast<int64_t>(v.buf->data.size());
  const int64_t p = lin >= 0 && lin < size ? v.buf->swz.Apply(lin) : -1;
  if (p < 0 || p >= size) return AccessSlow(t, op, v, idx, n, phys, soft, oob);
  if (oob) *oob = false;
  *phys = p;
  return absl::OkStatus();
}

// load: [view, idx...]; store: [view, value, idx...]; buffer_load reads 0
// outside the view (AMD buffer_load).
ABSL_ATTRIBUTE_ALWAYS_INLINE inline absl::Status Machine::LoadStore(Thread& t, const Insn& in,
                                                                    Slot* s) {
  const ir::Op& op = *in.op;
  const View& v = t.views[in.a];
  const bool store = in.code == Bc::kStore;
  const int first = store ? 2 : 1;
  const int n = static_cast<int>(op.operands.size()) - first;
  int64_t idx[4];
  for (int d = 0; d < n; ++d) idx[d] = s[op.operands[first + d]].i;
  int64_t p = 0;
  bool oob = false;
  RETURN_IF_ERROR(Access(t, &op, v, idx, n, &p, in.code == Bc::kBufferLoad, &oob));
  if (store) {
    if (!v.buf->bulk_readers.empty()) RETURN_IF_ERROR(CheckBulkFree(t, &op, *v.buf, p));
    v.buf->data[p] = s[op.operands[1]];
  } else if (oob) {
    s[in.dst].i = 0;
  } else {
    s[in.dst] = v.buf->data[p];
  }
  return absl::OkStatus();
}

ABSL_ATTRIBUTE_ALWAYS_INLINE inline absl::Status Machine::ExecMemory(Thread& t, const Insn& in,
                                                                     Slot* s) {
  if (in.code == Bc::kLoad || in.code == Bc::kStore || in.code == Bc::kBufferLoad)
    return LoadStore(t, in, s);
  switch (in.code) {
    case Bc::kCopy:
    case Bc::kThreadCopy:
      return Copy(t, in);
    case Bc::kCommitGroup:
      CommitGroup(t);
      break;
    case Bc::kWaitGroup:
      WaitGroup(t, in.imm);
      break;
    default:
      break;
  }
  return absl::OkStatus();
}

}  // namespace argus::dsl::interp

#endif  // ARGUS_DSL_INTERP_MEMORY_H_
