#include "dsl/layout/layout_algebra.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/status.h"
#include "dsl/layout/text_cursor.h"

namespace argus::layout {
namespace {

// Builds a layout from flat leaf lists: none -> 1:0, one -> a leaf, more ->
// a flat tuple.
absl::StatusOr<Layout> FromLeaves(const std::vector<int64_t>& s, const std::vector<int64_t>& d) {
  if (s.empty()) return Layout();
  if (s.size() == 1) return Layout::Create(s[0], d[0]);
  std::vector<IntTuple> ts(s.begin(), s.end()), td(d.begin(), d.end());
  return Layout::Create(IntTuple::Tuple(std::move(ts)), IntTuple::Tuple(std::move(td)));
}

absl::Status Overflow(const char* op, const Layout& a, const Layout& b) {
  return absl::OutOfRangeError(
      absl::StrCat(op, " ", a.ToString(), " with ", b.ToString(), " overflows 2^62"));
}

// Composition of the coalesced flat layout `a` with the leaf s:d, into
// leaf lists (flat pieces of one leaf of B).
absl::Status ComposeLeaf(const Layout& a_orig, const Layout& b_orig, const std::vector<FlatMode>& a,
                         int64_t s, int64_t d, std::vector<int64_t>* rs, std::vector<int64_t>* rd) {
  if (d < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "composition ", a_orig.ToString(), " o ", b_orig.ToString(), ": B has the negative stride ",
        d, "; composition needs B's image to be non-negative"));
  }
  if (s == 1) return absl::OkStatus();
  if (d == 0) {
    rs->push_back(s);
    rd->push_back(0);
    return absl::OkStatus();
  }
  int64_t rest_shape = s;
  int64_t rest_stride = d;
  for (size_t k = 0; k + 1 < a.size() && rest_shape > 1; ++k) {
    const int64_t cs = a[k].shape;
    if (rest_stride >= cs ? rest_stride % cs != 0 : cs % rest_stride != 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("composition ", a_orig.ToString(), " o ", b_orig.ToString(),
                       ": stride divisibility condition violated: mode ", cs, ":", a[k].stride,
                       " of coalesced A and remaining stride ", rest_stride, " of B mode ", s, ":",
                       d, " (neither divides the other)"));
    }
    if (rest_stride >= cs) {
      rest_stride /= cs;
      continue;
    }
    const int64_t next_shape = cs / rest_stride;
    const int64_t new_shape = std::min(next_shape, rest_shape);
    if (rest_shape % new_shape != 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("composition ", a_orig.ToString(), " o ", b_orig.ToString(),
                       ": shape divisibility condition violated: B mode ", s, ":", d, " needs ",
                       rest_shape, " more elements but mode ", cs, ":", a[k].stride,
                       " of coalesced A provides ", new_shape, ", which does not divide it"));
    }
    int64_t stride;
    if (!CheckedMul(rest_stride, a[k].stride, &stride)) {
      return Overflow("composition", a_orig, b_orig);
    }
    rs->push_back(new_shape);
    rd->push_back(stride);
    rest_shape /= new_shape;
    rest_stride = 1;
  }
  if (rest_shape > 1) {
    int64_t stride;
    if (!CheckedMul(rest_stride, a.back().stride, &stride)) {
      return Overflow("composition", a_orig, b_orig);
    }
    rs->push_back(rest_shape);
    rd->push_back(stride);
  }
  return absl::OkStatus();
}

// Composition following B's nesting.
absl::StatusOr<IntTuple> ComposeTree(const Layout& a_orig, const Layout& b_orig,
                                     const std::vector<FlatMode>& a, const IntTuple& bs,
                                     const IntTuple& bd, IntTuple* out_stride) {
  if (bs.is_leaf()) {
    std::vector<int64_t> rs, rd;
    RETURN_IF_ERROR(ComposeLeaf(a_orig, b_orig, a, bs.value(), bd.value(), &rs, &rd));
    if (rs.empty()) {
      *out_stride = 0;
      return IntTuple(1);
    }
    if (rs.size() == 1) {
      *out_stride = rd[0];
      return IntTuple(rs[0]);
    }
    *out_stride = IntTuple::Tuple(std::vector<IntTuple>(rd.begin(), rd.end()));
    return IntTuple::Tuple(std::vector<IntTuple>(rs.begin(), rs.end()));
  }
  std::vector<IntTuple> shapes, strides(bs.elems().size());
  shapes.reserve(bs.elems().size());
  for (size_t i = 0; i < bs.elems().size(); ++i) {
    ASSIGN_OR_RETURN(IntTuple sh,
                     ComposeTree(a_orig, b_orig, a, bs.elems()[i], bd.elems()[i], &strides[i]));
    shapes.push_back(std::move(sh));
  }
  *out_stride = IntTuple::Tuple(std::move(strides));
  return IntTuple::Tuple(std::move(shapes));
}

absl::Status RankError(const char* op, const Layout& a, const Tiler& b) {
  return absl::InvalidArgumentError(absl::StrCat(op, ": tiler ", b.ToString(), " has rank ",
                                                 b.rank(), " but layout ", a.ToString(),
                                                 " has rank ", a.rank()));
}

// Applies `fn` to the leading modes of `a` paired with the elements of tuple
// tiler `b`; later modes of `a` are kept.
template <typename Fn>
absl::StatusOr<Layout> ByMode(const char* op, const Layout& a, const Tiler& b, Fn fn) {
  if (b.rank() > a.rank()) return RankError(op, a, b);
  std::vector<Layout> modes = a.modes();
  for (int i = 0; i < b.rank(); ++i) {
    ASSIGN_OR_RETURN(modes[i], fn(modes[i], b.elems()[i]));
  }
  return Concat(modes);
}

// CuTe's zip2_by: splits the result of a by-mode divide/product (whose modes
// at each tiler leaf are (first, second)) into (firsts..., seconds...,
// untouched modes...).
absl::Status Zip2By(const Layout& l, const Tiler& t, std::vector<Layout>* first,
                    std::vector<Layout>* second) {
  if (t.is_layout()) {
    if (l.rank() != 2) {
      return absl::InternalError(
          absl::StrCat("zip2_by: expected a rank-2 layout, got ", l.ToString()));
    }
    std::vector<Layout> m = l.modes();
    first->push_back(m[0]);
    second->push_back(m[1]);
    return absl::OkStatus();
  }
  std::vector<Layout> m = l.modes();
  if (t.rank() > static_cast<int>(m.size())) {
    return absl::InternalError("zip2_by: tiler is wider than the layout");
  }
  std::vector<Layout> f, s;
  for (int i = 0; i < t.rank(); ++i) RETURN_IF_ERROR(Zip2By(m[i], t.elems()[i], &f, &s));
  for (size_t i = t.rank(); i < m.size(); ++i) s.push_back(m[i]);
  ASSIGN_OR_RETURN(Layout fl, Concat(f));
  ASSIGN_OR_RETURN(Layout sl, Concat(s));
  first->push_back(std::move(fl));
  second->push_back(std::move(sl));
  return absl::OkStatus();
}

// (first, second) of a divide/product result, zipped by the tiler.
absl::StatusOr<Layout> Zipped(const Layout& l, const Tiler& t) {
  if (t.is_layout()) return l;
  std::vector<Layout> first, second;
  RETURN_IF_ERROR(Zip2By(l, t, &first, &second));
  return Concat({first[0], second[0]});
}

// ((first), second modes...).
absl::StatusOr<Layout> Tiled(const Layout& zipped) {
  std::vector<Layout> m = zipped.modes();
  std::vector<Layout> out = {m[0]};
  for (const Layout& r : m[1].modes()) out.push_back(r);
  return Concat(out);
}

// (first modes..., second modes...).
absl::StatusOr<Layout> Flat(const Layout& zipped) {
  std::vector<Layout> m = zipped.modes();
  std::vector<Layout> out = m[0].modes();
  for (const Layout& r : m[1].modes()) out.push_back(r);
  return Concat(out);
}

absl::StatusOr<Layout> LogicalDivideLayout(const Layout& a, const Layout& b) {
  ASSIGN_OR_RETURN(Layout c, Complement(b, a.size()));
  ASSIGN_OR_RETURN(Layout bc, Concat({b, c}));
  return Composition(a, bc);
}

absl::StatusOr<Layout> LogicalProductLayout(const Layout& a, const Layout& b) {
  int64_t cotarget;
  if (!CheckedMul(a.size(), b.cosize(), &cotarget)) return Overflow("logical_product", a, b);
  ASSIGN_OR_RETURN(Layout c, Complement(a, cotarget));
  ASSIGN_OR_RETURN(Layout cb, Composition(c, b));
  return Concat({a, cb});
}

absl::StatusOr<Layout> RankProduct(const Layout& a, const Layout& b, bool blocked) {
  const int r = std::max(a.rank(), b.rank());
  ASSIGN_OR_RETURN(Layout pa, PadToRank(a, r));
  ASSIGN_OR_RETURN(Layout pb, PadToRank(b, r));
  ASSIGN_OR_RETURN(Layout lp, LogicalProductLayout(pa, pb));
  std::vector<Layout> halves = lp.modes();
  std::vector<Layout> am = halves[0].modes(), bm = halves[1].modes();
  std::vector<Layout> out;
  for (int i = 0; i < r; ++i) {
    ASSIGN_OR_RETURN(Layout m, blocked ? Concat({am[i], bm[i]}) : Concat({bm[i], am[i]}));
    out.push_back(Coalesce(m));
  }
  if (r == 1) return out[0];
  return Concat(out);
}

}  // namespace

// --- Tiler ----------------------------------------------------------------------

Tiler Tiler::Of(std::vector<Tiler> elems) {
  Tiler t;
  t.elems_ = std::move(elems);
  return t;
}

absl::StatusOr<Tiler> Tiler::FromShape(const IntTuple& shape) {
  if (shape.is_leaf()) {
    ASSIGN_OR_RETURN(Layout l, Layout::Create(shape, 1));
    return Tiler(std::move(l));
  }
  std::vector<Tiler> elems;
  for (const IntTuple& e : shape.elems()) {
    ASSIGN_OR_RETURN(Tiler t, FromShape(e));
    elems.push_back(std::move(t));
  }
  return Of(std::move(elems));
}

namespace {

absl::StatusOr<Tiler> ParseTiler(internal::TextCursor* cursor, int depth) {
  if (depth > 64) return cursor->ErrorAt(cursor->column(), "tilers nested too deeply");
  if (cursor->Consume('<')) {
    std::vector<Tiler> elems;
    while (true) {
      ASSIGN_OR_RETURN(Tiler t, ParseTiler(cursor, depth + 1));
      elems.push_back(std::move(t));
      if (cursor->Consume('>')) break;
      if (!cursor->Consume(',')) return cursor->Expected("',' or '>'");
    }
    return Tiler::Of(std::move(elems));
  }
  int col = cursor->column();
  ASSIGN_OR_RETURN(IntTuple shape, cursor->ParseIntTuple());
  absl::StatusOr<Tiler> t;
  if (cursor->Consume(':')) {
    ASSIGN_OR_RETURN(IntTuple stride, cursor->ParseIntTuple());
    absl::StatusOr<Layout> l = Layout::Create(std::move(shape), std::move(stride));
    if (!l.ok()) return cursor->ErrorAt(col, l.status().message());
    return Tiler(*std::move(l));
  }
  t = Tiler::FromShape(shape);
  if (!t.ok()) return cursor->ErrorAt(col, t.status().message());
  return t;
}

}  // namespace

absl::StatusOr<Tiler> Tiler::Parse(std::string_view text) {
  internal::TextCursor cursor(text, "tiler");
  ASSIGN_OR_RETURN(Tiler t, ParseTiler(&cursor, 0));
  RETURN_IF_ERROR(cursor.ExpectEnd());
  return t;
}

std::string Tiler::ToString() const {
  if (is_layout_) return layout_.ToString();
  std::string out = "<";
  for (size_t i = 0; i < elems_.size(); ++i) {
    if (i > 0) out.push_back(',');
    out += elems_[i].ToString();
  }
  out.push_back('>');
  return out;
}

// --- Coalesce -------------------------------------------------------------------

Layout Coalesce(const Layout& layout) {
  std::vector<int64_t> s, d;
  for (const FlatMode& m : layout.flat_modes()) {
    if (m.shape == 1) continue;
    int64_t merged;
    if (!s.empty() && CheckedMul(s.back(), d.back(), &merged) && m.stride == merged) {
      s.back() *= m.shape;  // Bounded by size(layout).
      continue;
    }
    s.push_back(m.shape);
    d.push_back(m.stride);
  }
  // Same size and no larger cosize than a valid layout: cannot fail.
  return *FromLeaves(s, d);
}

absl::StatusOr<Layout> Coalesce(const Layout& layout, const IntTuple& profile) {
  if (profile.is_leaf()) return Coalesce(layout);
  if (profile.rank() > layout.rank()) {
    return absl::InvalidArgumentError(absl::StrCat("coalesce: profile ", profile.ToString(),
                                                   " is wider than layout ", layout.ToString()));
  }
  std::vector<Layout> modes = layout.modes();
  for (int i = 0; i < profile.rank(); ++i) {
    ASSIGN_OR_RETURN(modes[i], Coalesce(modes[i], profile[i]));
  }
  return Concat(modes);
}

Layout CoalesceModes(const Layout& layout) {
  if (layout.is_leaf()) return Coalesce(layout);
  std::vector<Layout> modes = layout.modes();
  for (Layout& m : modes) m = Coalesce(m);
  return *Concat(modes);
}

// --- Composition ----------------------------------------------------------------

absl::StatusOr<Layout> Composition(const Layout& a, const Layout& b) {
  const Layout ca = Coalesce(a);
  IntTuple stride;
  ASSIGN_OR_RETURN(IntTuple shape,
                   ComposeTree(a, b, ca.flat_modes(), b.shape(), b.stride(), &stride));
  return Layout::Create(std::move(shape), std::move(stride));
}

absl::StatusOr<Layout> Composition(const Layout& a, const Tiler& b) {
  if (b.is_layout()) return Composition(a, b.layout());
  return ByMode("composition", a, b,
                [](const Layout& m, const Tiler& t) { return Composition(m, t); });
}

// --- Complement -----------------------------------------------------------------

absl::StatusOr<Layout> Complement(const Layout& a, int64_t cotarget) {
  if (cotarget < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("complement of ", a.ToString(), ": cotarget ", cotarget, " is below 1"));
  }
  std::vector<std::pair<int64_t, int64_t>> modes;  // (stride, shape)
  for (const FlatMode& m : a.flat_modes()) {
    if (m.shape == 1) continue;
    if (m.stride < 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "complement of ", a.ToString(), ": negative stride ", m.stride, " is not supported"));
    }
    if (m.stride == 0) {
      return absl::InvalidArgumentError(absl::StrCat("complement of ", a.ToString(),
                                                     ": layout is not injective (mode ", m.shape,
                                                     ":0 repeats offsets)"));
    }
    modes.push_back({m.stride, m.shape});
  }
  std::sort(modes.begin(), modes.end());
  std::vector<int64_t> rs, rd;
  int64_t current = 1;
  for (const auto& [d, s] : modes) {
    if (d % current != 0) {
      // Tell the two causes apart when the layout is small enough to check.
      absl::StatusOr<bool> injective = IsInjective(a, int64_t{1} << 16);
      if (injective.ok() && !*injective) {
        return absl::InvalidArgumentError(
            absl::StrCat("complement of ", a.ToString(), ": layout is not injective"));
      }
      return absl::InvalidArgumentError(
          absl::StrCat("complement of ", a.ToString(),
                       injective.ok() ? ": not admissible" : ": not admissible or not injective",
                       ": mode ", s, ":", d, " has a stride that is not a multiple of ", current,
                       ", the extent of the modes with smaller strides"));
    }
    rs.push_back(d / current);
    rd.push_back(current);
    if (!CheckedMul(d, s, &current)) {
      return absl::OutOfRangeError(
          absl::StrCat("complement of ", a.ToString(), ": extent overflows 2^62"));
    }
  }
  rs.push_back((cotarget + current - 1) / current);
  rd.push_back(current);
  ASSIGN_OR_RETURN(Layout r, FromLeaves(rs, rd));
  return Coalesce(r);
}

absl::StatusOr<Layout> Complement(const Layout& a) { return Complement(a, a.cosize()); }

// --- Divide -----------------------------------------------------------------------

absl::StatusOr<Layout> LogicalDivide(const Layout& a, const Tiler& b) {
  if (b.is_layout()) return LogicalDivideLayout(a, b.layout());
  return ByMode("logical_divide", a, b,
                [](const Layout& m, const Tiler& t) { return LogicalDivide(m, t); });
}

absl::StatusOr<Layout> ZippedDivide(const Layout& a, const Tiler& b) {
  ASSIGN_OR_RETURN(Layout ld, LogicalDivide(a, b));
  return Zipped(ld, b);
}

absl::StatusOr<Layout> TiledDivide(const Layout& a, const Tiler& b) {
  ASSIGN_OR_RETURN(Layout zd, ZippedDivide(a, b));
  return Tiled(zd);
}

absl::StatusOr<Layout> FlatDivide(const Layout& a, const Tiler& b) {
  ASSIGN_OR_RETURN(Layout zd, ZippedDivide(a, b));
  return Flat(zd);
}

// --- Product ----------------------------------------------------------------------

absl::StatusOr<Layout> LogicalProduct(const Layout& a, const Tiler& b) {
  if (b.is_layout()) return LogicalProductLayout(a, b.layout());
  return ByMode("logical_product", a, b,
                [](const Layout& m, const Tiler& t) { return LogicalProduct(m, t); });
}

absl::StatusOr<Layout> ZippedProduct(const Layout& a, const Tiler& b) {
  ASSIGN_OR_RETURN(Layout lp, LogicalProduct(a, b));
  return Zipped(lp, b);
}

absl::StatusOr<Layout> TiledProduct(const Layout& a, const Tiler& b) {
  ASSIGN_OR_RETURN(Layout zp, ZippedProduct(a, b));
  return Tiled(zp);
}

absl::StatusOr<Layout> FlatProduct(const Layout& a, const Tiler& b) {
  ASSIGN_OR_RETURN(Layout zp, ZippedProduct(a, b));
  return Flat(zp);
}

absl::StatusOr<Layout> BlockedProduct(const Layout& a, const Layout& b) {
  return RankProduct(a, b, /*blocked=*/true);
}

absl::StatusOr<Layout> RakedProduct(const Layout& a, const Layout& b) {
  return RankProduct(a, b, /*blocked=*/false);
}

// --- Inverses ---------------------------------------------------------------------

absl::StatusOr<Layout> RightInverse(const Layout& layout) {
  const Layout c = Coalesce(layout);
  for (const FlatMode& m : c.flat_modes()) {
    if (m.stride < 0) {
      return absl::InvalidArgumentError(absl::StrCat("right_inverse of ", layout.ToString(),
                                                     ": negative strides are not supported"));
    }
  }
  std::vector<int64_t> rs, rd;
  int64_t current = 1;
  while (true) {
    const FlatMode* next = nullptr;
    for (const FlatMode& m : c.flat_modes()) {
      if (m.shape > 1 && m.stride == current) {
        next = &m;
        break;
      }
    }
    if (next == nullptr) break;
    rs.push_back(next->shape);
    rd.push_back(next->divisor);
    if (!CheckedMul(current, next->shape, &current)) break;
  }
  ASSIGN_OR_RETURN(Layout r, FromLeaves(rs, rd));
  return Coalesce(r);
}

absl::StatusOr<Layout> LeftInverse(const Layout& layout) {
  absl::StatusOr<Layout> c = Complement(layout);
  if (!c.ok()) {
    return absl::Status(
        c.status().code(),
        absl::StrCat("left_inverse needs an injective, admissible layout: ", c.status().message()));
  }
  ASSIGN_OR_RETURN(Layout lc, Concat({layout, *c}));
  return RightInverse(lc);
}

}  // namespace argus::layout
