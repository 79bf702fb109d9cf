// verifier/domain.h: the abstract domain the walker computes and the analyses
// read — tags, views, symbolic values, shared-memory events, loops, and the
// writers a read may see (internal to argus_verifier; verify.h is the
// interface).
//
// Everything here is a Z3 term over one symbolic thread: its thread id, block
// ids, loop iterations and element indexes are integer constants with their
// ranges, so one term stands for every thread, iteration and element.
//
// Thread safety: plain data; terms belong to one walker's Z3 context, so a
// value is used by the thread that runs that walker.
#ifndef ARGUS_VERIFIER_DOMAIN_H_
#define ARGUS_VERIFIER_DOMAIN_H_

#include <z3++.h>

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "dsl/ir.h"

namespace argus::verifier::engine {

using dsl::Loc;
using dsl::ir::Block;
using dsl::ir::Function;
using dsl::ir::Op;
using dsl::ir::OpCode;
using z3::expr;

constexpr int kMaxRank = 4;

struct Tag {  // kind: 0 opaque, 1 data (tensor + coords), 2 custom value (c[0])
  int kind = 0;
  int tensor = -1;
  std::vector<expr> c;
};

// Fragment math (analysis/fragment_tags.cc): what an accumulator element's value is
// made of. A contribution's tag (a row tag from an A operand, a column tag
// from a B operand), valid where `cond` holds; every alternative whose
// condition holds is a contribution (checks must hold for each).
struct TagAlt {
  expr cond;
  Tag tag;
  const Op* src = nullptr;                          // the write it comes from
  const Op* via = nullptr;                          // accumulators: the mma that brought it in
  bool exact = true;                                // from a window candidate (see Candidates)
  std::vector<std::pair<std::string, expr>> iters;  // the writer's loop variables
};
struct TagSet {
  std::vector<TagAlt> alts;
  std::optional<expr> known;  // every contribution has a known tag (unset: true)
  // Contributions of earlier iterations of loop `first` that flowed in
  // through loop-carried variable `second` (unknown until the loop ends).
  std::set<std::pair<int, int>> carried;
};
// Tags of a fragment value over the walker's canonical element variables
// (fi, fj): rows from the A operands of the MMAs that produced it, columns
// from their B operands. Row vectors have rows only.
struct FragTags {
  TagSet rows, cols;
};

struct DimMap {
  bool fixed = true;
  int vdim = -1;  // view dim when !fixed
  std::optional<expr> off;
};

struct View {
  dsl::Space space = dsl::Space::kGlobal;
  int base = -1;  // tensor index / alloc index / -1 local
  std::vector<DimMap> map;
  std::vector<int64_t> ext;  // static extents (-1 dynamic)
  bool ok = false;
};

struct Val {
  enum K { kNone, kInt, kBool, kView, kFrag, kBar } k = kNone;
  int bar = -1;  // kBar: the mbarrier array's index, in allocation order
  std::optional<expr> e;
  // data tag of a scalar loaded from global
  int tensor = -1;
  std::vector<expr> coords;
  View view;
  int read_event = -1;  // fragments: the read of their source
  std::optional<dsl::FragGeom> geom;
  bool frag_global = false;
  std::optional<FragTags> ft;  // accumulators, row vectors, to_operand results
};

struct Event {
  int id = 0, alloc = -1;
  bool write = false, async = false, is_virtual = false;
  std::string field;  // "" data, "*" reset
  const Op* op = nullptr;
  int pos = 0;
  std::vector<int> loops;
  std::optional<expr> guard, thread, bar, commit;
  std::vector<expr> coords;
  std::vector<expr> elem;
  std::vector<int64_t> elem_ext;
  std::vector<int> elem_dim;  // alloc dim that elem j maps to (-1: none)
  std::vector<expr> elem_off;
  Tag value;
  bool has_wait = false;
  std::optional<expr> wait_commit, wait_bar;
  int64_t wait_n = 0;
  std::optional<dsl::FragGeom> geom;  // fragment reads
  // Hopper: a TMA write, a wgmma operand read (the wgmma group that
  // reads it asynchronously), the control context (ids of the path conditions
  // enclosing it) and, for ordinary shared writes, the barrier count at the
  // first fence_proxy_async after it in the same context.
  bool tma = false, wgmma_read = false;
  std::optional<expr> wg_group, fence_bar;
  std::vector<unsigned> ctx;
};

struct LoopInfo {
  const Op* op;
  std::string name;
  std::optional<expr> var, lo, trip, range;
  int64_t step = 1;
  int pos_begin = 0, pos_end = 0;
};

struct Cand {
  const Event* w;
  expr body, excl;  // body: free writer vars; excl: closed (exists) form
  bool qf;
  Tag tag;
  std::optional<expr> commit, thread;
  std::vector<std::pair<std::string, expr>> iters;  // writer loop vars for the report
  bool window;
  std::optional<expr> fence_bar;  // the writer's fence_proxy_async (barrier count)
};

// Terms of one instance of the per-thread variables (renamed apart, some
// pinned): another thread, or another iteration, of the same program point.
struct Inst {
  z3::expr_vector from, to;
  explicit Inst(z3::context& c) : from(c), to(c) {}
};
inline expr Sub(const Inst& in, const expr& e) {
  return const_cast<expr&>(e).substitute(in.from, in.to);
}

// A substitution applied to another op's terms (its loop vars, its thread).
struct Subst {
  z3::expr_vector from, to;
  explicit Subst(z3::context& c) : from(c), to(c) {}
  expr operator()(const expr& e) const {
    if (from.empty()) return e;
    return const_cast<expr&>(e).substitute(from, to);
  }
};

// One memory access the walker executed: the view, the base coordinates of
// its element `elem` (element variables with their ranges in `guard`, or
// none for a single element), and the condition under which it happens.
struct Access {
  const Op& op;
  const View& view;
  const std::vector<expr>& coords;
  const expr& guard;
  const std::vector<expr>& elem;
};

// A loop the walker enters or leaves: its id (an index into the loops, or a
// negative id for a while loop), the op, and for a `for` loop the iteration
// term n = (k - lo) / step, the trip count and the wgmma_commit ops per
// iteration.
struct LoopFrame {
  int id = -1;
  const Op* op = nullptr;
  std::optional<expr> n, trip, k, lo;
  int64_t step = 1;
  int wgmma_commits = 0;
};

}  // namespace argus::verifier::engine

#endif  // ARGUS_VERIFIER_DOMAIN_H_
