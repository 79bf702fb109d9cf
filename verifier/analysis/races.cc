#include "verifier/analysis/races.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace argus::verifier::engine {

void Races::AfterReads() {
  if (!w_.counts_ok()) return;
  for (size_t a = 0; a < w_.events().size() && !w_.stopped(); ++a) {
    const Event& w = w_.events()[a];
    if (!w.write || w.field != "" || w.is_virtual || w.tma) continue;  // TMA: tma_reads
    for (size_t b = 0; b < w_.events().size() && !w_.stopped(); ++b) {
      const Event& x = w_.events()[b];
      if (x.alloc != w.alloc || x.is_virtual || x.tma || (x.write && x.field != "")) continue;
      if (x.write && b < a) continue;
      Inst i1 = MakeInst({}), i2 = MakeInst({});
      expr same = Sub(i1, *w.bar) == Sub(i2, *x.bar) && Sub(i1, *w.thread) != Sub(i2, *x.thread);
      if (x.wgmma_read && x.wg_group) {
        // wgmma reads shared memory until a wgmma_wait covers its group: a
        // later write must come after a barrier that follows that wait (the
        // first wait after the read in the same iteration).
        const Wgmma::WaitPoint* end = nullptr;
        for (const Wgmma::WaitPoint& ww : wgmma_.waits()) {
          if (ww.loops == x.loops && ww.pos > x.pos) {
            end = &ww;
            break;
          }
        }
        expr wb = Sub(i1, *w.bar), xb = Sub(i2, *x.bar);
        expr open =
            end ? (!(Sub(i2, end->covered) > Sub(i2, *x.wg_group)) || wb <= Sub(i2, end->bar))
                : c_.bool_val(true);
        same = same || (wb > xb && open);
      }
      expr bad = Sub(i1, *w.guard) && Sub(i2, *x.guard) && same;
      for (size_t d = 0; d < w.coords.size(); ++d)
        bad = bad && Sub(i1, w.coords[d]) == Sub(i2, x.coords[d]);
      std::vector<std::pair<std::string, expr>> watch;
      watch.emplace_back("@tid", Sub(i1, *w.thread));
      watch.emplace_back("@t2", Sub(i2, *x.thread));
      for (size_t d = 0; d < w_.blocks().size(); ++d)
        watch.emplace_back(absl::StrCat("@b", d), w_.blocks()[d]);
      for (size_t d = 0; d < w.coords.size(); ++d)
        watch.emplace_back(absl::StrCat("@c", d), Sub(i1, w.coords[d]));
      for (int l : w.loops)
        watch.emplace_back("@loop:" + w_.loops()[l].name, Sub(i1, *w_.loops()[l].var));
      for (int l : x.loops)
        watch.emplace_back("@x:" + w_.loops()[l].name, Sub(i2, *w_.loops()[l].var));
      Obligation("shared_race", *x.op, bad, watch, [&](const ProofResult& r, Finding* f) {
        std::vector<int64_t> cs;
        for (size_t d = 0; d < w.coords.size(); ++d) cs.push_back(M(r, absl::StrCat("@c", d)));
        f->message =
            absl::StrCat("data race on shared buffer '", w_.alloc_names()[w.alloc], "' element (",
                         absl::StrJoin(cs, ","), "): ", x.write ? "written" : "read",
                         " here while another thread writes it, with no barrier between",
                         x.wgmma_read ? " (wgmma reads shared memory until the wgmma_wait that "
                                        "covers it; the write must follow that wait and a barrier)"
                                      : "");
        f->cex.coordinates = cs;
        f->cex.written_at = w.op->loc;
        f->cex.written_source = Src(w.op->loc);
        std::vector<std::string> wi;
        for (int l : w.loops)
          wi.push_back(absl::StrCat(w_.loops()[l].name, "=", M(r, "@loop:" + w_.loops()[l].name)));
        f->cex.written_iteration = absl::StrJoin(wi, ",");
        f->cex.iterations.clear();
        for (int l : x.loops)
          f->cex.iterations[w_.loops()[l].name] = M(r, "@x:" + w_.loops()[l].name);
        int64_t t2 = M(r, "@t2");
        f->cex.thread = t2;
        f->cex.warp = t2 / f_.warp_size;
        f->cex.lane = t2 % f_.warp_size;
        int64_t t1 = M(r, "@tid");
        f->cex.other =
            absl::StrCat("racing write by thread ", t1, " (warp ", t1 / f_.warp_size, ", lane ",
                         t1 % f_.warp_size, ")", w.async ? ", an async copy in flight" : "");
      });
    }
  }
}

}  // namespace argus::verifier::engine
