#include "verifier/analysis/shared_reads.h"

#include "absl/strings/str_cat.h"

namespace argus::verifier::engine {

void SharedReads::Read(const Event& rd) {
  if (w_.ResolvedByFills(rd.alloc)) return;  // tma_reads'
  // read of async data before its wait_group, and reads of unwritten memory
  std::vector<expr> L = rd.coords;
  auto cands = w_.Candidates(rd, L, "");
  if (rd.wgmma_read) CheckProxyFence(rd, cands);
  expr none = *rd.guard;
  expr early = c_.bool_val(false), early_def = c_.bool_val(false);
  std::vector<std::pair<std::string, expr>> watch = BaseWatch();
  for (size_t j = 0; j < rd.elem.size(); ++j) watch.emplace_back(absl::StrCat("@e", j), rd.elem[j]);
  watch.emplace_back("@rt", *rd.thread);
  expr prior = c_.bool_val(true);
  for (size_t i = 0; i < cands.size(); ++i) {
    const Cand& c = cands[i];
    if (c.w->async) {
      expr landed = c_.bool_val(false);
      if (rd.has_wait) {
        landed = *c.commit < *rd.wait_commit - I(rd.wait_n) &&
                 (*c.thread == *rd.thread || *rd.bar > *rd.wait_bar);
      }
      expr ind = *rd.guard && prior && c.body && !landed;
      watch.emplace_back(absl::StrCat("@early", i), ind);
      early = early || ind;
      early_def = early_def || (c.window ? ind : ind && Within());
    }
    none = none && !c.excl;
    if (c.window) prior = prior && !c.excl;
  }
  const Op& op = *rd.op;
  Obligation(
      "read_before_wait", op, early_def, watch,
      [&](const ProofResult& r, Finding* f) {
        f->message =
            "shared memory read before the async copy that writes it has landed (missing or too "
            "weak "
            "wait_group, or no barrier after it)";
        for (size_t j = 0; j < rd.elem.size(); ++j)
          f->cex.coordinates.push_back(M(r, absl::StrCat("@e", j)));
        f->cex.thread = M(r, "@rt");
        f->cex.warp = f->cex.thread / f_.warp_size;
        f->cex.lane = f->cex.thread % f_.warp_size;
        for (size_t i = 0; i < cands.size(); ++i) {
          if (M(r, absl::StrCat("@early", i))) {
            f->cex.written_at = cands[i].w->op->loc;
            f->cex.written_source = Src(cands[i].w->op->loc);
            break;
          }
        }
      },
      early);
  bool all_qf = true;
  for (const Cand& c : cands) all_qf &= c.qf;
  (void)all_qf;  // quantified covers are fine here: Z3 decides them or says unknown
  {
    Obligation(
        "uninitialized_read", op, none && Within(), watch,
        [&](const ProofResult& r, Finding* f) {
          f->message = absl::StrCat("read of shared memory '", w_.alloc_names()[rd.alloc],
                                    "' that no earlier write reaches");
          for (size_t j = 0; j < rd.elem.size(); ++j)
            f->cex.coordinates.push_back(M(r, absl::StrCat("@e", j)));
          f->cex.thread = M(r, "@rt");
          f->cex.warp = f->cex.thread / f_.warp_size;
          f->cex.lane = f->cex.thread % f_.warp_size;
          f->cex.actual = "uninitialized";
        },
        none);
  }
}

void SharedReads::CheckProxyFence(const Event& rd, const std::vector<Cand>& cands) {
  expr prior = c_.bool_val(true), bad = c_.bool_val(false);
  auto watch = BaseWatch();
  for (size_t i = 0; i < cands.size(); ++i) {
    const Cand& c = cands[i];
    if (!c.w->tma && !c.w->is_virtual && c.w->field.empty()) {
      expr ok = c.fence_bar ? *c.fence_bar < *rd.bar : c_.bool_val(false);
      expr ind = *rd.guard && prior && c.body && !ok;
      watch.emplace_back(absl::StrCat("@pf", i), ind);
      bad = bad || ind;
    }
    if (c.window) prior = prior && !c.excl;
  }
  for (size_t j = 0; j < rd.elem.size(); ++j) watch.emplace_back(absl::StrCat("@e", j), rd.elem[j]);
  Obligation("proxy_fence", *rd.op, bad, watch, [&](const ProofResult& r, Finding* f) {
    f->message = absl::StrCat(
        "wgmma reads '", w_.alloc_names()[rd.alloc],
        "' (through the async proxy) after ordinary stores without fence_proxy_async() between "
        "the stores and a barrier before the read");
    for (size_t j = 0; j < rd.elem.size(); ++j)
      f->cex.coordinates.push_back(M(r, absl::StrCat("@e", j)));
    for (size_t i = 0; i < cands.size(); ++i) {
      if (!M(r, absl::StrCat("@pf", i))) continue;
      f->cex.written_at = cands[i].w->op->loc;
      f->cex.written_source = Src(cands[i].w->op->loc);
      break;
    }
    f->cex.expected = "fence_proxy_async() after the write, then a barrier";
    f->cex.actual = "no fence between the ordinary store and the wgmma read";
  });
}

}  // namespace argus::verifier::engine
