// verifier/analysis/fragment_tags.cc: tags through fragment math and the
// MMA K-slice check (see fragment_tags.h).
#include "verifier/analysis/fragment_tags.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace argus::verifier::engine {

namespace {

// Whether `e` mentions the constant with id `var` (a DAG walk).
bool Mentions(const expr& e, unsigned var, std::set<unsigned>* seen) {
  if (!seen->insert(e.id()).second) return false;
  if (e.is_const()) return e.id() == var;
  if (e.is_app()) {
    for (unsigned i = 0; i < e.num_args(); ++i)
      if (Mentions(e.arg(i), var, seen)) return true;
  }
  return false;
}

expr Substitute(const expr& e, const z3::expr_vector& from, const z3::expr_vector& to) {
  return const_cast<expr&>(e).substitute(from, to);
}

TagAlt SubstAlt(const TagAlt& a, const z3::expr_vector& from, const z3::expr_vector& to) {
  TagAlt o = a;
  o.cond = Substitute(a.cond, from, to);
  for (expr& c : o.tag.c) c = Substitute(c, from, to);
  for (auto& [n, v] : o.iters) v = Substitute(v, from, to);
  return o;
}

}  // namespace

// One operand of an MMA, element (r, c) (A: row, K; B: K, col): its tag
// alternatives, the guard under which it is read, whether every element that
// reaches the MMA has a known tag.
struct FragmentTags::KSide {
  bool ok = false;
  std::vector<TagAlt> alts;
  std::optional<expr> guard, known, thread;
  std::set<std::pair<int, int>> carried;
  std::optional<dsl::FragGeom> geom;
  bool from_acc = false;  // to_operand: alts are the accumulator's column tags
  const Op* acc_src = nullptr;
};

void FragmentTags::Before(const Op& op) {
  switch (op.code) {
    case OpCode::kMma:
    case OpCode::kWgmma:
      // wgmma: tags flow as through mma; the operands' values are those of
      // their reads (the reads' windows and waits are checked on their
      // events), a register A operand's K coordinate is its source's column tag.
      return DoMma(op);
    default:
      if (dsl::ir::Info(op.code).family == dsl::ir::OpFamily::kFragmentMath)
        result_tags_ = MathTags(op);
      return;
  }
}

void FragmentTags::After(const Op& op) {
  if (dsl::ir::Info(op.code).family == dsl::ir::OpFamily::kFragmentMath)
    w_.vals()[op.result].ft = result_tags_;
}

void FragmentTags::EnterLoop(const LoopFrame& l) {
  std::map<int, FragTags>& saved = carried_[l.id];
  if (l.n) {
    CarryBegin(l.id, l.op->regions[0], &saved);
  } else {
    for (const Block& r : l.op->regions) CarryBegin(l.id, r, &saved);
  }
}

void FragmentTags::ExitLoopBody(const LoopFrame& l) { CarryEnd(l.id, carried_[l.id]); }

void FragmentTags::LeaveLoop(const LoopFrame& l) { carried_.erase(l.id); }

void FragmentTags::ExitIf(const expr& cond, const std::vector<Val>& then_vals) {
  MergeFragTags(cond, then_vals);
}

bool FragmentTags::OperandSide(int var, bool is_a, const expr& r, const expr& c, KSide* s) {
  const Val& v = w_.vals()[var];
  if (v.k != Val::kFrag) return false;
  const dsl::ir::Type& ty = f_.vars[var].type;
  if (ty.is_frag()) s->geom = ty.frag.Geom();
  z3::expr_vector from(c_), to(c_);
  if (v.read_event < 0) {
    // to_operand: element (r, c) of the A operand is element (r, c) of the
    // accumulator; its K coordinate is the accumulator's column tag.
    if (!is_a || !v.ft) return false;
    from.push_back(w_.fi());
    from.push_back(w_.fj());
    to.push_back(r);
    to.push_back(c);
    for (const TagAlt& a : v.ft->cols.alts) s->alts.push_back(SubstAlt(a, from, to));
    s->known = v.ft->cols.known ? Substitute(*v.ft->cols.known, from, to) : c_.bool_val(true);
    s->carried = v.ft->cols.carried;
    s->guard = w_.pc() && r >= 0 && r < I(ty.frag.rows) && c >= 0 && c < I(ty.frag.cols);
    s->from_acc = true;
    s->ok = true;
    return true;
  }
  const Event& rd = w_.events()[v.read_event];
  if (rd.elem.size() != 2) return false;
  from.push_back(rd.elem[0]);
  from.push_back(rd.elem[1]);
  to.push_back(r);
  to.push_back(c);
  s->guard = Substitute(*rd.guard, from, to);
  s->thread = Substitute(*rd.thread, from, to);
  if (v.frag_global) {
    Tag t;
    t.kind = 1;
    t.tensor = v.view.base;
    t.c = w_.Coords(v.view, rd.elem);
    s->alts.push_back(SubstAlt(TagAlt{c_.bool_val(true), t, rd.op}, from, to));
    s->known = c_.bool_val(true);
    s->ok = true;
    return true;
  }
  if (rd.alloc < 0) return false;
  auto cands = w_.Candidates(rd, rd.coords, "");
  expr prior = c_.bool_val(true), known = c_.bool_val(false);
  for (const Cand& cd : cands) {
    if (cd.tag.kind == 1) {
      TagAlt a{prior && cd.body, cd.tag, cd.w->op, nullptr, cd.window, cd.iters};
      s->alts.push_back(SubstAlt(a, from, to));
      known = known || (prior && cd.excl);
    }
    if (cd.window) prior = prior && !cd.excl;
  }
  s->known = Substitute(known, from, to);
  s->ok = true;
  return true;
}

TagSet FragmentTags::Union(const TagSet& a, const TagSet& b) {
  TagSet o = a;
  o.alts.insert(o.alts.end(), b.alts.begin(), b.alts.end());
  if (b.known) o.known = a.known ? (*a.known && *b.known) : *b.known;
  o.carried.insert(b.carried.begin(), b.carried.end());
  return o;
}

// The tags one MMA adds to its accumulator's element (w_.fi(), w_.fj()) from operand
// side `s` read at (r, c): every alternative, where the read happens.
TagSet FragmentTags::Contributions(const Op& op, const KSide& s) {
  TagSet t;
  t.carried = s.carried;
  expr at = w_.pc() && *s.guard;
  for (const TagAlt& a : s.alts) {
    TagAlt x = a;
    x.cond = at && a.cond;
    x.via = &op;
    t.alts.push_back(x);
  }
  t.known = z3::implies(at, *s.known);
  return t;
}

void FragmentTags::DoMma(const Op& op) {
  Val& acc = w_.vals()[op.operands[0]];
  if (acc.k != Val::kFrag) return;
  CheckMmaK(op);
  // The accumulator's new contributions: A's row w_.fi() (any kk), B's column w_.fj().
  FragTags add;
  KSide a, b;
  expr kr = Fresh("kr"), kc = Fresh("kc");
  const Val& av = w_.vals()[op.operands[1]];
  if (av.read_event < 0 && av.ft) {
    add.rows = av.ft->rows;  // to_operand: the rows of the source accumulator
  } else if (OperandSide(op.operands[1], true, w_.fi(), kr, &a)) {
    add.rows = Contributions(op, a);
  } else {
    add.rows.known = c_.bool_val(false);
  }
  if (OperandSide(op.operands[2], false, kc, w_.fj(), &b)) {
    add.cols = Contributions(op, b);
  } else {
    add.cols.known = c_.bool_val(false);
  }
  if (!acc.ft) {
    acc.ft = FragTags{};
    acc.ft->rows.known = acc.ft->cols.known = c_.bool_val(false);
  }
  acc.ft->rows = Union(acc.ft->rows, add.rows);
  acc.ft->cols = Union(acc.ft->cols, add.cols);
}

void FragmentTags::CheckMmaK(const Op& op) {
  expr i = Fresh("mi"), kk = Fresh("mk"), j = Fresh("mj");
  KSide a, b;
  if (!OperandSide(op.operands[1], true, i, kk, &a) ||
      !OperandSide(op.operands[2], false, kk, j, &b))
    return;  // operands the verifier does not track (no read to follow)
  if (!a.carried.empty() || !b.carried.empty()) {
    const int var = op.operands[1];
    const std::set<std::pair<int, int>> self = {
        {w_.loop_stack().empty() ? -1 : w_.loop_stack().back(), var}};
    if (b.carried.empty() && a.from_acc && a.carried == self) {
      // A register operand carried from the previous iteration (FA3: P(t-1)
      // of the last iteration meets V(t-1)): decided when the loop ends and
      // the body's last value of the operand is known.
      const int loop = w_.loop_stack().back();
      const std::vector<int> loops = w_.loop_stack();
      const dsl::ir::Type ty = f_.vars[var].type;
      pending_k_.emplace(loop, [=, this](const std::map<int, FragTags>& saved) {
        auto before = saved.find(var);
        const Val& now = w_.vals()[var];
        if (before == saved.end() || !now.ft || !now.ft->cols.carried.empty() ||
            !before->second.cols.carried.empty())
          return Unsupported(op,
                             "an MMA operand carried across loop iterations whose value depends "
                             "on more than the previous iteration");
        TagSet at = IterationValue(loop, before->second.cols, now.ft->cols, /*last=*/false);
        KSide a2 = a;
        z3::expr_vector from(c_), to(c_);
        from.push_back(w_.fi());
        from.push_back(w_.fj());
        to.push_back(i);
        to.push_back(kk);
        a2.alts.clear();
        for (const TagAlt& x : at.alts) a2.alts.push_back(SubstAlt(x, from, to));
        a2.known = at.known ? Substitute(*at.known, from, to) : c_.bool_val(true);
        a2.carried.clear();
        (void)ty;
        std::vector<int> outer = w_.loop_stack();
        w_.loop_stack() = loops;
        CheckMmaSides(op, a2, b, i, kk, j);
        w_.loop_stack() = outer;
      });
      return;
    }
    Unsupported(op,
                "an MMA operand built from a fragment carried across loop iterations (its "
                "earlier iterations' tags are not followed)");
    return;
  }
  CheckMmaSides(op, a, b, i, kk, j);
}

// A loop-carried fragment's tags in an iteration (`last`: false, the value
// at the head of iteration k: the value before the loop at k = lo, the
// body's last value of iteration k - 1 after; true, the value after the loop:
// the body's last value of the last iteration, or the value before the loop
// when it ran no iteration).
TagSet FragmentTags::IterationValue(int loop, const TagSet& before, const TagSet& body, bool last) {
  const LoopInfo& li = w_.loops()[loop];
  expr k = *li.var;
  z3::expr_vector from(c_), to(c_);
  from.push_back(k);
  to.push_back(last ? *li.lo + (*li.trip - 1) * I(li.step) : k - I(li.step));
  expr old = last ? *li.trip == 0 : k == *li.lo;
  TagSet out;
  for (const TagAlt& x : before.alts) {
    TagAlt y = x;
    y.cond = x.cond && old;
    out.alts.push_back(y);
  }
  for (const TagAlt& x : body.alts) {
    TagAlt y = SubstAlt(x, from, to);
    y.cond = y.cond && !old;
    out.alts.push_back(y);
  }
  expr kb = before.known ? *before.known : c_.bool_val(true);
  expr kn = body.known ? Substitute(*body.known, from, to) : c_.bool_val(true);
  out.known = z3::implies(old, kb) && z3::implies(!old, kn);
  return out;
}

// The counterexample of a K mismatch: the lane that holds A's element, the
// pair of alternatives the model picked, their tags and writers.
void FragmentTags::ExplainK(const ProofResult& r, Finding* f, const KSide& a, const KSide& b,
                            const std::vector<int>& da, const std::vector<int>& db) {
  auto tag_text = [&](const ProofResult& r, const std::string& p, const Tag& t) {
    std::vector<int64_t> cs;
    for (size_t d = 0; d < t.c.size(); ++d) cs.push_back(M(r, absl::StrCat(p, d)));
    return absl::StrCat(f_.tensors[t.tensor].name, "(", absl::StrJoin(cs, ","), ")");
  };
  auto dim_text = [&](const Tag& t, int d) {
    return absl::StrCat(f_.tensors[t.tensor].name, " dim ", d);
  };
  int64_t mi = M(r, "@i"), mk = M(r, "@kk"), mj = M(r, "@j");
  f->cex.coordinates = {mi, mk};
  // The lane that holds A element (i, kk), from the instruction's lane
  // table (any layout FragGeom describes).
  // (wgmma: only a register A operand has lanes; a descriptor has none.)
  if (a.geom && a.geom->mma && (!a.geom->mma->wgmma || a.from_acc)) {
    const dsl::FragGeom& g = *a.geom;
    bool found = false;
    for (int w = 0; w < g.wm * g.wn && !found; ++w) {
      for (int l = 0; l < g.mma->warp_size && !found; ++l) {
        for (int e = 0; e < g.PerLane() && !found; ++e) {
          int rr, cc;
          g.Coord(w, l, e, &rr, &cc);
          if (rr != mi || cc != mk) continue;
          found = true;
          f->cex.thread = (g.first + w) * g.mma->warp_size + l;
          f->cex.warp = f->cex.thread / f_.warp_size;
          f->cex.lane = f->cex.thread % f_.warp_size;
          f->cex.element = e;
        }
      }
    }
  }
  for (size_t x = 0; x < a.alts.size(); ++x) {
    for (size_t y = 0; y < b.alts.size(); ++y) {
      if (da[x] < 0 || db[y] < 0 || !M(r, absl::StrCat("@w", x, "_", y))) continue;
      const Tag& ta = a.alts[x].tag;
      const Tag& tb = b.alts[y].tag;
      f->message = absl::StrCat(
          "MMA operands disagree on K: A element (", mi, ",", mk, ") and B element (", mk, ",", mj,
          ") come from different K coordinates",
          a.from_acc ? " (A is to_operand of an accumulator: its K coordinate is the "
                       "column tag of that accumulator, i.e. the B operand that produced "
                       "its column)"
                     : "");
      f->cex.expected =
          absl::StrCat("A column k=", M(r, absl::StrCat("@ka", x)), " (", dim_text(ta, da[x]),
                       " of ", tag_text(r, absl::StrCat("@ta", x, "_"), ta), ")");
      f->cex.actual =
          absl::StrCat("B row k=", M(r, absl::StrCat("@kb", y)), " (", dim_text(tb, db[y]), " of ",
                       tag_text(r, absl::StrCat("@tb", y, "_"), tb), ")");
      if (const Op* w = b.alts[y].src) {
        f->cex.written_at = w->loc;
        f->cex.written_source = Src(w->loc);
        std::vector<std::string> wi;
        for (const auto& [n, v] : b.alts[y].iters)
          wi.push_back(absl::StrCat(n, "=", M(r, absl::StrCat("@bi", y, ":", n))));
        f->cex.written_iteration = absl::StrJoin(wi, ",");
      }
      if (a.alts[x].via && a.alts[x].src) {
        f->cex.other =
            absl::StrCat("A's column holds the accumulator column produced by the mma at line ",
                         a.alts[x].via->loc.line, ", from its B operand written at line ",
                         a.alts[x].src->loc.line);
      } else if (a.alts[x].src) {
        f->cex.other = absl::StrCat("A's element was written at line ", a.alts[x].src->loc.line);
      }
      return;
    }
  }
  f->message = "MMA operands disagree on K";
}

void FragmentTags::CheckMmaSides(const Op& op, const KSide& a, const KSide& b, const expr& i,
                                 const expr& kk, const expr& j) {
  // The K coordinate of a tag: the one coordinate that moves with kk (the
  // fragment's K index). A 2-D tag that does not mention kk (a broadcast)
  // keeps the GEMM convention: A's column, B's row.
  std::map<std::string, int> classes;
  auto kcoord = [&](const Tag& t, bool is_a, int* d) {
    *d = -1;
    int n = 0;
    for (size_t x = 0; x < t.c.size(); ++x) {
      std::set<unsigned> seen;
      if (Mentions(t.c[x], kk.id(), &seen)) {
        *d = static_cast<int>(x);
        ++n;
      }
    }
    if (n == 0 && t.c.size() == 2) {
      *d = is_a ? 1 : 0;
      n = 1;
    }
    if (n != 1) *d = -1;
    // The dim's extent names the contracted dimension (A's "K" is B's "K";
    // attention's key positions are K's and V's "S").
    if (*d < 0 || t.tensor < 0) return -1;
    const dsl::ir::SymInt& si = f_.tensors[t.tensor].shape[*d];
    std::string key = absl::StrCat(si.coeff, ":", absl::StrJoin(si.syms, ","));
    return classes.emplace(key, static_cast<int>(classes.size())).first->second;
  };
  // The extent of a tag's K dim when the job fixes it (--dims), else 0.
  auto fixed_extent = [&](const Tag& t, int d) -> int64_t {
    const dsl::ir::SymInt& si = f_.tensors[t.tensor].shape[d];
    int64_t v = si.coeff;
    for (int sym : si.syms) {
      auto it = opt_.dims.find(f_.dims[sym]);
      if (it == opt_.dims.end()) return 0;
      v *= it->second;
    }
    return v;
  };
  // Operands of different K classes still pair when one K dim is a stack of
  // the other (a grouped GEMM's weights [E*K, N] seen as E blocks of K rows:
  // row r is K index r % K of block r / K, and the tag assertions prove the
  // block); then the K coordinates agree modulo the smaller extent.
  auto k_differ = [&](const Tag& ta, int xa, const Tag& tb, int xb) -> expr {
    const expr& ka = ta.c[xa];
    const expr& kb = tb.c[xb];
    const int64_t ea = fixed_extent(ta, xa), eb = fixed_extent(tb, xb);
    if (ea > 0 && eb > ea && eb % ea == 0) return ka != z3::mod(kb, I(ea));
    if (eb > 0 && ea > eb && ea % eb == 0) return z3::mod(ka, I(eb)) != kb;
    return c_.bool_val(true);
  };
  std::vector<int> da(a.alts.size()), db(b.alts.size()), ca(a.alts.size()), cb(b.alts.size());
  expr known_a = *a.known, known_b = *b.known;
  for (size_t x = 0; x < a.alts.size(); ++x) {
    ca[x] = kcoord(a.alts[x].tag, true, &da[x]);
    if (da[x] < 0) known_a = known_a && !a.alts[x].cond;
  }
  for (size_t y = 0; y < b.alts.size(); ++y) {
    cb[y] = kcoord(b.alts[y].tag, false, &db[y]);
    if (db[y] < 0) known_b = known_b && !b.alts[y].cond;
  }
  expr guard = *a.guard && *b.guard;
  expr within = Within();
  expr bad = c_.bool_val(false), bad_def = c_.bool_val(false);
  auto watch = BaseWatch();
  watch.emplace_back("@i", i);
  watch.emplace_back("@kk", kk);
  watch.emplace_back("@j", j);
  if (a.thread) watch.emplace_back("@rt", *a.thread);
  for (size_t x = 0; x < a.alts.size(); ++x) {
    if (da[x] < 0) continue;
    watch.emplace_back(absl::StrCat("@ka", x), a.alts[x].tag.c[da[x]]);
    for (size_t d = 0; d < a.alts[x].tag.c.size(); ++d)
      watch.emplace_back(absl::StrCat("@ta", x, "_", d), a.alts[x].tag.c[d]);
    for (size_t y = 0; y < b.alts.size(); ++y) {
      if (db[y] < 0) continue;
      expr differ = ca[x] != cb[y] ? k_differ(a.alts[x].tag, da[x], b.alts[y].tag, db[y])
                                   : a.alts[x].tag.c[da[x]] != b.alts[y].tag.c[db[y]];
      expr ind = guard && a.alts[x].cond && b.alts[y].cond && differ;
      watch.emplace_back(absl::StrCat("@w", x, "_", y), ind);
      bad = bad || ind;
      bad_def = bad_def || ((a.alts[x].exact && b.alts[y].exact) ? ind : ind && within);
    }
  }
  for (size_t y = 0; y < b.alts.size(); ++y) {
    if (db[y] < 0) continue;
    watch.emplace_back(absl::StrCat("@kb", y), b.alts[y].tag.c[db[y]]);
    for (size_t d = 0; d < b.alts[y].tag.c.size(); ++d)
      watch.emplace_back(absl::StrCat("@tb", y, "_", d), b.alts[y].tag.c[d]);
    for (const auto& [n, v] : b.alts[y].iters)
      watch.emplace_back(absl::StrCat("@bi", y, ":", n), v);
  }
  Obligation(
      "mma_k_mismatch", op, bad_def, watch,
      [&](const ProofResult& r, Finding* f) { ExplainK(r, f, a, b, da, db); }, bad);
  // Every element that reaches the MMA has a tag whose K coordinate is known
  // (otherwise the pairing is not proved: unknown, never passed).
  auto kwatch = BaseWatch();
  Obligation("mma_k_mismatch", op, guard && !(known_a && known_b), kwatch,
             [&](const ProofResult&, Finding* f) {
               f->severity = Severity::kUnknown;
               f->has_cex = false;
               f->message =
                   "unknown: the K coordinate of some MMA operand element is not known (no "
                   "tracked write reaches it, or its tag has no single coordinate that moves "
                   "with K)";
             });
}

// The tags of fragment math's result, from its operands (before the walker
// rebinds the result, which may be one of them).
FragTags FragmentTags::MathTags(const Op& op) {
  FragTags ft;
  auto tags_of = [&](int var) -> std::optional<FragTags> {
    const Val& v = w_.vals()[var];
    if (v.k != Val::kFrag) return FragTags{};  // a scalar: no tags
    if (v.ft) return v.ft;
    FragTags opaque;  // an operand fragment (the checker forbids it): unknown
    opaque.rows.known = opaque.cols.known = c_.bool_val(false);
    return opaque;
  };
  switch (op.code) {
    case OpCode::kFragEw:
      // Element (i, j) of the result is made of element (i, j) of each
      // operand (row vectors: of its row): the union of their tags.
      for (int x : op.operands) {
        FragTags t = *tags_of(x);
        ft.rows = Union(ft.rows, t.rows);
        // a row vector scales whole rows: it gives no column its identity
        const auto& xt = f_.vars[x].type;
        if (!(xt.is_frag() && xt.frag.role == dsl::FragRole::kRow))
          ft.cols = Union(ft.cols, t.cols);
      }
      break;
    case OpCode::kFragRowReduce:
      // A per-row value: the row's tags; it has no column identity.
      ft.rows = tags_of(op.operands[0])->rows;
      break;
    case OpCode::kToOperand:
      ft = *tags_of(op.operands[0]);
      break;
    default:  // indexes and constants: no data
      break;
  }
  return ft;
}

// Loop-carried fragments: at the head of a generic iteration a fragment the
// body assigns (or accumulates into) holds, besides its value before the
// loop, the contributions of earlier iterations — not known until the body
// has been walked. It is marked carried; a use that needs its tags before the
// loop ends is unknown. After the loop its tags are the value before the
// loop plus the body's contributions at a free iteration (every iteration).
void FragmentTags::CarryBegin(int loop, const Block& body, std::map<int, FragTags>* saved) {
  std::set<int> vars;
  std::function<void(const Block&)> scan = [&](const Block& b) {
    for (const Op& o : b) {
      if (o.result >= 0) vars.insert(o.result);
      if ((o.code == OpCode::kMma || o.code == OpCode::kWgmma) && !o.operands.empty())
        vars.insert(o.operands[0]);
      for (const Block& r : o.regions) scan(r);
    }
  };
  scan(body);
  for (int v : vars) {
    Val& x = w_.vals()[v];
    if (x.k != Val::kFrag || !x.ft) continue;
    saved->emplace(v, *x.ft);
    x.ft->rows.carried.insert({loop, v});
    const auto& t = f_.vars[v].type;
    if (!(t.is_frag() && t.frag.role == dsl::FragRole::kRow)) x.ft->cols.carried.insert({loop, v});
  }
}

void FragmentTags::CarryEnd(int loop, const std::map<int, FragTags>& saved) {
  // MMA checks on operands carried from the previous iteration, now that the
  // body's last values are known.
  auto [pb, pe] = pending_k_.equal_range(loop);
  std::vector<std::function<void(const std::map<int, FragTags>&)>> todo;
  for (auto it = pb; it != pe; ++it) todo.push_back(it->second);
  pending_k_.erase(loop);
  for (auto& f : todo) f(saved);
  std::set<int> assigned;  // by the body (for loops; while loops keep the union)
  if (loop >= 0) {
    std::function<void(const Block&)> scan = [&](const Block& b) {
      for (const Op& o : b) {
        if (o.result >= 0) assigned.insert(o.result);
        for (const Block& r : o.regions) scan(r);
      }
    };
    scan(w_.loops()[loop].op->regions[0]);
  }
  auto settle = [&](int v, TagSet* t, const TagSet* before) {
    bool mine = false;
    for (const auto& [l, x] : t->carried) mine |= l == loop;
    // (Only for a value that existed before the loop: CarryBegin marked it, so
    // a conditional reassignment keeps the mark through the branch merge.)
    if (!mine && before && assigned.count(v)) {
      // A value the body rebuilds from scratch: after the loop it is the
      // last iteration's (or the value before the loop when none ran).
      *t = IterationValue(loop, *before, *t, /*last=*/true);
      return;
    }
    bool other = false;
    for (auto it = t->carried.begin(); it != t->carried.end();) {
      if (it->first != loop) {
        ++it;
        continue;
      }
      other |= it->second != v;
      it = t->carried.erase(it);
    }
    // Another variable's earlier iterations flowed in: not followed.
    if (other) t->known = c_.bool_val(false);
    if (before) *t = Union(*before, *t);
  };
  for (size_t v = 0; v < w_.vals().size(); ++v) {
    Val& x = w_.vals()[v];
    if (x.k != Val::kFrag || !x.ft) continue;
    auto it = saved.find(static_cast<int>(v));
    settle(static_cast<int>(v), &x.ft->rows, it == saved.end() ? nullptr : &it->second.rows);
    settle(static_cast<int>(v), &x.ft->cols, it == saved.end() ? nullptr : &it->second.cols);
  }
}

// After an `if`: a fragment holds the tags of either branch (the union).
void FragmentTags::MergeFragTags(const expr& cond, const std::vector<Val>& then_vals) {
  (void)cond;  // each contribution's condition already includes the branch's
  for (size_t v = 0; v < w_.vals().size() && v < then_vals.size(); ++v) {
    const Val& a = then_vals[v];
    Val& b = w_.vals()[v];
    if (a.k != Val::kFrag || b.k != Val::kFrag || !a.ft) continue;
    auto same = [](const TagSet& x, const TagSet& y) {
      if (x.alts.size() != y.alts.size() || x.carried != y.carried ||
          x.known.has_value() != y.known.has_value() || (x.known && !z3::eq(*x.known, *y.known)))
        return false;
      for (size_t i = 0; i < x.alts.size(); ++i)
        if (!z3::eq(x.alts[i].cond, y.alts[i].cond)) return false;
      return true;
    };
    if (b.ft && same(a.ft->rows, b.ft->rows) && same(a.ft->cols, b.ft->cols)) continue;
    if (!b.ft) {
      b.ft = a.ft;
      continue;
    }
    b.ft->rows = Union(a.ft->rows, b.ft->rows);
    b.ft->cols = Union(a.ft->cols, b.ft->cols);
  }
}

}  // namespace argus::verifier::engine
