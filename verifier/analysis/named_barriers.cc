// verifier/analysis/named_barriers.cc: named barrier ids and counts (see
// named_barriers.h).
#include "verifier/analysis/named_barriers.h"

#include <functional>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace argus::verifier::engine {

void NamedBarriers::Before(const Op& op) {
  if (op.code != OpCode::kNamedBarrier) return;
  const expr id = IntOf(op.operands[0]);
  named_.push_back(NamedBar{&op, w_.pc(), id, op.ints.empty() ? 0 : op.ints[0]});
  // warpgroup_barrier() takes ids 1 .. threads / 128.
  bool wg_bar = false;
  std::function<void(const Block&)> scan = [&](const Block& b) {
    for (const Op& o : b) {
      wg_bar |= o.code == OpCode::kWarpgroupBarrier;
      for (const Block& r : o.regions) scan(r);
    }
  };
  scan(f_.body);
  const int64_t lo = wg_bar ? f_.threads / 128 + 1 : 1;
  auto iw = BaseWatch();
  iw.emplace_back("@id", id);
  Obligation("oob", op, w_.pc() && (id < I(lo) || id > I(15)), iw,
             [&](const ProofResult& r, Finding* f) {
               f->message = absl::StrCat("named barrier id ", M(r, "@id"), " outside ", lo, "..15",
                                         wg_bar ? " (warpgroup_barrier() uses 1.." : "",
                                         wg_bar ? absl::StrCat(lo - 1, ")") : "");
               f->cex.expected = absl::StrCat("an id in ", lo, "..15");
               f->cex.actual = absl::StrCat("id ", M(r, "@id"));
             });
}

// Each id is a barrier of `n` threads: the threads that sync or arrive on it
// (enumerated: per thread, its guard and id) must be exactly n, all with the
// same count — fewer never complete a generation (deadlock), more complete it
// early. (The generations' order — which sync meets which arrive — is not
// followed: a hang is not a data-flow error, and the interpreter reports it.)
void NamedBarriers::AfterWalk() {
  if (named_.empty()) return;
  struct Use {
    std::set<int64_t> threads, counts;
    const NamedBar* first = nullptr;
  };
  std::map<int64_t, Use> ids;
  for (const NamedBar& nb : named_) {
    for (int64_t t = 0; t < f_.threads; ++t) {
      z3::expr_vector from(c_), to(c_);
      from.push_back(w_.tid_base());
      to.push_back(I(t));
      expr g = w_.fixed_dims()(const_cast<expr&>(nb.pc).substitute(from, to)).simplify();
      if (g.is_false()) continue;
      expr idt = w_.fixed_dims()(const_cast<expr&>(nb.id).substitute(from, to)).simplify();
      int64_t iv;
      if (!idt.is_numeral_i64(iv))
        return Unsupported(*nb.op, "a named barrier id that is not a constant per thread");
      Use& u = ids[iv];
      u.threads.insert(t);
      u.counts.insert(nb.n);
      if (!u.first) u.first = &nb;
    }
  }
  for (const auto& [id, u] : ids) {
    const int64_t n = *u.counts.begin();
    std::string why;
    if (u.counts.size() > 1) {
      why = absl::StrCat("named barrier ", id, " is used with different thread counts (",
                         absl::StrJoin(u.counts, ", "), ")");
    } else if (static_cast<int64_t>(u.threads.size()) != n) {
      why = absl::StrCat("named barrier ", id, " counts ", n, " threads per generation, but ",
                         u.threads.size(), " threads sync or arrive on it",
                         static_cast<int64_t>(u.threads.size()) < n
                             ? " (a generation never completes: deadlock)"
                             : " (a generation completes before all of them arrived)");
    }
    w_.Decided(why.empty());
    if (why.empty()) continue;
    Finding f;
    f.check = "named_barrier_count";
    f.message = why;
    f.loc = u.first->op->loc;
    f.source_line = Src(u.first->op->loc);
    f.has_cex = true;
    f.cex.block.assign(w_.blocks().size(), 0);
    f.cex.thread = *u.threads.begin();
    f.cex.warp = f.cex.thread / f_.warp_size;
    f.cex.lane = f.cex.thread % f_.warp_size;
    f.cex.expected = absl::StrCat(n, " threads on barrier ", id);
    f.cex.actual = absl::StrCat(u.threads.size(), " threads (", *u.threads.begin(), "..",
                                *u.threads.rbegin(), ")");
    w_.AddFinding(f);
  }
}

}  // namespace argus::verifier::engine
