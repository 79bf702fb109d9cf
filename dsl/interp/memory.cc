// The memory family's element access, block copies and cp.async groups
// (memory.h holds the family's handler and its loads and stores).
#include "dsl/interp/memory.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status.h"
#include "dsl/interp/machine.h"
#include "dsl/interp/scalar.h"

namespace argus::dsl::interp {

absl::Status Machine::AccessSlow(const Thread& t, const ir::Op* op, const View& v,
                                 const int64_t* idx, int n, int64_t* phys, bool soft,
                                 bool* oob) const {
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

// Commits the cp.async writes issued since the last commit as one group.
void Machine::CommitGroup(Thread& t) {
  t.groups.push_back(std::move(t.open));
  t.open.clear();
}

// Lands the oldest groups until at most n are in flight.
void Machine::WaitGroup(Thread& t, int64_t n) {
  while (static_cast<int64_t>(t.groups.size()) > n) {
    for (const Pending& p : t.groups.front()) p.buf->data[p.phys] = p.val;
    t.groups.pop_front();
  }
}

// Each thread of the thread layout copies its elements: in rank 1, runs of
// `vec` strided by the layout; in rank 2, rows by the layout's rows and runs
// of `vec` columns by its columns. Threads outside the layout copy nothing.
absl::Status Machine::Copy(Thread& t, const Insn& in) {
  const ir::Op& op = *in.op;
  const View& s = t.views[slots_.view_slot[op.operands[0]]];
  const View& d = t.views[slots_.view_slot[op.operands[1]]];
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
  // A block copy spreads the tile over the layout's threads; a thread copy
  // gives each thread all of it (its layout: one thread, vec = the extent).
  const int64_t tid = op.code == ir::OpCode::kThreadCopy ? 0 : t.tid;
  if (tid >= tl.Size()) return absl::OkStatus();
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
    int64_t tc = tid;
    for (int64_t jb = tc * vec; jb < s.shape[0]; jb += tl.shape[0] * vec) {
      for (int64_t v = 0; v < vec; ++v) RETURN_IF_ERROR(one(0, jb + v));
    }
    return absl::OkStatus();
  }
  int64_t tr = tid / tl.shape[1], tc = tid % tl.shape[1];
  for (int64_t i = tr; i < s.shape[0]; i += tl.shape[0]) {
    for (int64_t jb = tc * vec; jb < s.shape[1]; jb += tl.shape[1] * vec) {
      for (int64_t v = 0; v < vec; ++v) RETURN_IF_ERROR(one(i, jb + v));
    }
  }
  return absl::OkStatus();
}

}  // namespace argus::dsl::interp
