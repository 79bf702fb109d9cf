// verifier/analysis/tag_asserts.cc: the tag assertions (see tag_asserts.h).
#include "verifier/analysis/tag_asserts.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace argus::verifier::engine {

// One side of a tag comparison: the tag an element (index `idx`) of a
// fragment or view holds, as candidates (condition, tag) in recency order.
struct TagAsserts::Side {
  bool ok = false;
  std::vector<expr> idx;
  std::optional<expr> guard, thread, none;
  std::vector<std::pair<expr, Tag>> cands;  // condition, tag
  std::vector<const Cand*> src;             // writer of each candidate (or null)
  std::vector<Cand> store;
  std::optional<dsl::FragGeom> geom;
};

// The side of fragment or view `var` at element `pin` (every element when
// null); s->ok stays false when the verifier does not track the value.
void TagAsserts::ReadSide(const Op& op, const std::string& field, int var,
                          const std::vector<expr>* pin, Side* s) {
  Val& x = w_.vals()[var];
  const Event* rd = nullptr;
  bool global = false;
  View gview;
  if (x.k == Val::kFrag && x.read_event >= 0) {
    rd = &w_.events()[x.read_event];
    global = x.frag_global;
    gview = x.view;
  } else if (x.k == Val::kView && x.view.ok && x.view.space != dsl::Space::kLocal) {
    Event& e = w_.NewEvent(op, x.view, false);
    e.is_virtual = true;
    std::vector<int64_t> ext;
    expr range(c_);
    e.elem = w_.ElemVars(x.view, "i", &ext, &range);
    e.coords = w_.Coords(x.view, e.elem);
    e.guard = w_.pc() && range;
    global = x.view.space == dsl::Space::kGlobal;
    if (global) e.alloc = -2;
    gview = x.view;
    rd = &e;
  } else {
    return;
  }
  z3::expr_vector from(c_), to(c_);
  if (pin) {
    if (pin->size() != rd->elem.size()) return;
    for (size_t j = 0; j < pin->size(); ++j) {
      from.push_back(rd->elem[j]);
      to.push_back((*pin)[j]);
    }
  }
  auto P = [&](const expr& e) { return pin ? const_cast<expr&>(e).substitute(from, to) : e; };
  s->ok = true;
  s->geom = rd->geom;
  for (const expr& e : rd->elem) s->idx.push_back(P(e));
  s->guard = P(*rd->guard);
  s->thread = P(*rd->thread);
  if (global) {
    Tag t;
    t.kind = field.empty() ? 1 : 0;
    t.tensor = gview.base;
    for (const expr& c : w_.Coords(gview, rd->elem)) t.c.push_back(P(c));
    s->cands.emplace_back(c_.bool_val(true), t);
    s->src.push_back(nullptr);
    s->none = c_.bool_val(false);
    return;
  }
  s->store = w_.Candidates(*rd, rd->coords, field);
  expr prior = c_.bool_val(true), none = c_.bool_val(true);
  for (const Cand& c : s->store) {
    Tag t = c.tag;
    for (expr& e : t.c) e = P(e);
    s->cands.emplace_back(P(prior && c.body), t);
    s->src.push_back(&c);
    if (c.window) prior = prior && !c.excl;
    none = none && !c.excl;
  }
  s->none = P(none);
}

void TagAsserts::Before(const Op& op) {
  if (op.code != OpCode::kAssertTag && op.code != OpCode::kAssertTagEq) return;
  bool eq = op.code == OpCode::kAssertTagEq;
  std::string field = eq ? "" : op.name;
  Side a;
  ReadSide(op, field, op.operands[0], nullptr, &a);
  if (!a.ok) {
    Unsupported(op, "assert_tag on a value the verifier does not track (only fragments and views)");
    return;
  }
  Side b;
  if (eq) {
    ReadSide(op, field, op.operands[1], &a.idx, &b);
    if (!b.ok) {
      Unsupported(op, "assert_tag_eq on a value the verifier does not track");
      return;
    }
  } else {
    // expected, from the lambda
    if (op.regions.empty() || op.regions[0].empty()) return;
    for (size_t p = 0; p < op.region_params.size() && p < a.idx.size(); ++p)
      w_.SetScalar(op.region_params[p], a.idx[p]);
    for (const Op& o : op.regions[0]) {
      if (o.code != OpCode::kYield) (void)w_.Step(o);
    }
    const Op& y = op.regions[0].back();
    Tag t;
    t.kind = field.empty() ? 1 : 2;
    t.tensor = field.empty() ? static_cast<int>(op.ints.empty() ? -1 : op.ints[0]) : -1;
    for (int v : y.operands) t.c.push_back(IntOf(v));
    if (field.empty()) tag_flow_.RecordOperandTag(op.operands[0], a.idx, t);
    b.ok = true;
    b.cands.emplace_back(c_.bool_val(true), t);
    b.src.push_back(nullptr);
    b.none = c_.bool_val(false);
  }
  auto watch = BaseWatch();
  for (size_t j = 0; j < a.idx.size(); ++j) watch.emplace_back(absl::StrCat("@e", j), a.idx[j]);
  watch.emplace_back("@rt", *a.thread);
  auto differ = [&](const Tag& x, const Tag& y) {
    if (x.kind != y.kind || (x.kind == 1 && x.tensor != y.tensor)) return c_.bool_val(true);
    if (x.kind == 0) return c_.bool_val(false);
    expr d = c_.bool_val(false);
    for (size_t i = 0; i < x.c.size() && i < y.c.size(); ++i) d = d || x.c[i] != y.c[i];
    return d;
  };
  expr bad = *a.guard && (*a.none || *b.none);
  expr within = Within();
  expr bad_def = bad && within;
  auto exact = [](const Cand* c) { return !c || c->window; };
  watch.emplace_back("@nonea", *a.guard && *a.none);
  for (size_t i = 0; i < a.cands.size(); ++i) {
    for (size_t j = 0; j < b.cands.size(); ++j) {
      expr ind = *a.guard && a.cands[i].first && b.cands[j].first &&
                 differ(a.cands[i].second, b.cands[j].second);
      watch.emplace_back(absl::StrCat("@w", i, "_", j), ind);
      bad = bad || ind;
      bad_def = bad_def || ((exact(a.src[i]) && exact(b.src[j])) ? ind : ind && within);
    }
    for (size_t d = 0; d < a.cands[i].second.c.size(); ++d)
      watch.emplace_back(absl::StrCat("@a", i, "_", d), a.cands[i].second.c[d]);
  }
  for (size_t j = 0; j < b.cands.size(); ++j) {
    for (size_t d = 0; d < b.cands[j].second.c.size(); ++d)
      watch.emplace_back(absl::StrCat("@b", j, "_", d), b.cands[j].second.c[d]);
  }
  for (size_t i = 0; i < a.src.size(); ++i) {
    if (!a.src[i]) continue;
    for (const auto& [n, v] : a.src[i]->iters)
      watch.emplace_back(absl::StrCat("@wi", i, ":", n), v);
  }
  Obligation(
      eq ? "tag_assert_eq" : "tag_assert", op, bad_def, watch,
      [&](const ProofResult& r, Finding* f) {
        std::vector<int64_t> cs;
        for (size_t j = 0; j < a.idx.size(); ++j) cs.push_back(M(r, absl::StrCat("@e", j)));
        f->cex.coordinates = cs;
        if (a.geom) {
          int64_t t = M(r, "@rt");
          int warp = static_cast<int>(t / f_.warp_size);
          f->cex.thread = t;
          f->cex.warp = warp;
          f->cex.lane = t % f_.warp_size;
          for (int e = 0; e < a.geom->PerLane(); ++e) {
            int rr, cc;
            a.geom->Coord(warp, static_cast<int>(f->cex.lane), e, &rr, &cc);
            if (cs.size() == 2 && rr == cs[0] && cc == cs[1]) {
              f->cex.element = e;
              break;
            }
          }
        }
        f->message = eq ? "assert_tag_eq does not hold: the two sides carry different tags"
                        : "tag assertion does not hold";
        f->cex.actual = "uninitialized (no write reaches it)";
        f->cex.expected = b.cands.size() == 1 ? TagText(r, "@b0_", b.cands[0].second, field)
                                              : "(see the second operand)";
        for (size_t i = 0; i < a.cands.size(); ++i) {
          for (size_t j = 0; j < b.cands.size(); ++j) {
            if (!M(r, absl::StrCat("@w", i, "_", j))) continue;
            f->cex.actual = TagText(r, absl::StrCat("@a", i, "_"), a.cands[i].second, field);
            f->cex.expected = TagText(r, absl::StrCat("@b", j, "_"), b.cands[j].second, field);
            if (const Cand* c = a.src[i]) {
              f->cex.written_at = c->w->op->loc;
              f->cex.written_source = Src(c->w->op->loc);
              std::vector<std::string> wi;
              for (const auto& [n, v] : c->iters)
                wi.push_back(absl::StrCat(n, "=", M(r, absl::StrCat("@wi", i, ":", n))));
              f->cex.written_iteration = absl::StrJoin(wi, ",");
              if (c->w->async) f->message += " (value from an async copy)";
            }
            return;
          }
        }
      },
      bad);
}

std::string TagAsserts::TagText(const ProofResult& r, const std::string& p, const Tag& t,
                                const std::string& field) {
  if (t.kind == 2) return absl::StrCat(field, "=", M(r, absl::StrCat(p, 0)));
  if (t.kind == 0 && !field.empty())
    return absl::StrCat("no '", field, "' tag (never bound, or reset)");
  int tensor = t.tensor;
  if (t.kind != 1 || tensor < 0) return "no tensor tag (reset by reset_tags, or a computed value)";
  std::vector<int64_t> cs;
  for (size_t d = 0; d < f_.tensors[tensor].shape.size(); ++d)
    cs.push_back(M(r, absl::StrCat(p, d)));
  return absl::StrCat(f_.tensors[tensor].name, "(", absl::StrJoin(cs, ","), ")");
}

}  // namespace argus::verifier::engine
