// Property tests over deterministic, seeded random layouts: each algebra
// operation is checked against its defining equations by evaluating both
// sides at every index.
#include <algorithm>
#include <catch2/catch.hpp>
#include <random>
#include <set>
#include <vector>

#include "dsl/layout/layout.h"
#include "dsl/layout/layout_algebra.h"
#include "dsl/layout/swizzle.h"

namespace argus::layout {
namespace {

class Gen {
 public:
  explicit Gen(uint64_t seed) : rng_(seed) {}

  int64_t Uniform(int64_t lo, int64_t hi) {  // inclusive
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng_);
  }
  template <typename T>
  const T& Pick(const std::vector<T>& v) {
    return v[static_cast<size_t>(Uniform(0, static_cast<int64_t>(v.size()) - 1))];
  }

  // A random shape tree with at most `max_leaves` leaves drawn from `values`
  // and product at most `max_size`.
  IntTuple Shape(const std::vector<int64_t>& values, int max_depth = 2, int max_leaves = 5,
                 int64_t max_size = 2048) {
    int64_t budget = max_size;
    int leaves = 0;
    return ShapeImpl(values, max_depth, max_leaves, &budget, &leaves);
  }

  // Replaces each leaf of `shape` with a stride from `next()`.
  template <typename F>
  IntTuple Strides(const IntTuple& shape, F next) {
    if (shape.is_leaf()) return next();
    std::vector<IntTuple> e;
    for (const IntTuple& s : shape.elems()) e.push_back(Strides(s, next));
    return IntTuple::Tuple(std::move(e));
  }

  // Any layout: strides in [lo, hi].
  Layout Any(int64_t lo, int64_t hi, const std::vector<int64_t>& shapes = {1, 2, 3, 4, 5, 6, 8}) {
    IntTuple s = Shape(shapes);
    IntTuple d = Strides(s, [&] { return IntTuple(Uniform(lo, hi)); });
    return *Layout::Create(s, d);
  }

  // Power-of-two shapes and strides (stride 0 allowed): composition of two
  // of them always satisfies the divisibility conditions.
  Layout PowerOfTwo(bool allow_negative) {
    IntTuple s = Shape({1, 2, 4, 8});
    IntTuple d = Strides(s, [&] {
      int64_t v = Uniform(0, 5) == 0 ? 0 : int64_t{1} << Uniform(0, 6);
      if (allow_negative && Uniform(0, 3) == 0) v = -v;
      return IntTuple(v);
    });
    return *Layout::Create(s, d);
  }

  // An injective layout admissible for complement: the leaves, taken in a
  // random order, have strides d_next = d_prev * s_prev * gap.
  Layout Admissible(int max_gap = 3) {
    IntTuple s = Shape({1, 2, 3, 4, 5, 6, 8}, 2, 4, 512);
    std::vector<int64_t> leaves = s.leaves();
    std::vector<size_t> order(leaves.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::shuffle(order.begin(), order.end(), rng_);
    std::vector<int64_t> strides(leaves.size());
    int64_t current = Uniform(1, max_gap);
    for (size_t k : order) {
      strides[k] = current;
      current *= leaves[k] * Uniform(1, max_gap);
    }
    size_t next = 0;
    IntTuple d = Strides(s, [&] { return IntTuple(strides[next++]); });
    return *Layout::Create(s, d);
  }

 private:
  IntTuple ShapeImpl(const std::vector<int64_t>& values, int depth, int max_leaves, int64_t* budget,
                     int* leaves) {
    if (depth == 0 || Uniform(0, 2) == 0 || *leaves + 1 >= max_leaves) {
      int64_t v = Pick(values);
      while (v > *budget) v = 1;
      *budget /= v;
      ++*leaves;
      return v;
    }
    int64_t n = Uniform(1, 3);
    std::vector<IntTuple> e;
    for (int64_t i = 0; i < n && *leaves < max_leaves; ++i) {
      e.push_back(ShapeImpl(values, depth - 1, max_leaves, budget, leaves));
    }
    return IntTuple::Tuple(std::move(e));
  }

  std::mt19937_64 rng_;
};

// The set of L(i), i < size(L).
std::set<int64_t> Image(const Layout& l) {
  std::set<int64_t> out;
  for (int64_t i = 0; i < l.size(); ++i) out.insert(l(i));
  return out;
}

constexpr int kCases = 400;

TEST_CASE("property: printing round-trips through parsing", "[layout][property]") {
  Gen g(1);
  for (int c = 0; c < kCases; ++c) {
    Layout l = g.Any(-9, 99);
    auto back = Layout::Parse(l.ToString());
    REQUIRE(back.ok());
    CHECK(*back == l);
  }
}

TEST_CASE("property: idx2crd and crd2idx round-trip", "[layout][property]") {
  Gen g(2);
  for (int c = 0; c < kCases; ++c) {
    Layout l = g.Any(-4, 40);
    INFO(l.ToString());
    for (int64_t i = 0; i < l.size(); ++i) {
      auto crd = l.Idx2Crd(i);
      REQUIRE(crd.ok());
      REQUIRE(crd->Congruent(l.shape()));
      REQUIRE(*l.Crd2Idx(*crd) == l(i));
      REQUIRE(*l.Crd2Idx(i) == l(i));
      REQUIRE(*Crd2Flat(*crd, l.shape()) == i);
    }
  }
}

TEST_CASE("property: coalesce preserves the function and the size", "[layout][property]") {
  Gen g(3);
  for (int c = 0; c < kCases; ++c) {
    Layout l = c % 2 ? g.Any(-6, 12) : g.Admissible(1);
    INFO(l.ToString());
    Layout r = Coalesce(l);
    CHECK(r.depth() <= 1);
    CHECK(FunctionallyEqual(l, r));
    CHECK(Coalesce(r) == r);
    Layout m = CoalesceModes(l);
    CHECK(m.rank() == l.rank());
    CHECK(FunctionallyEqual(l, m));
  }
}

// B with its stride-0 modes dropped is injective: CuTe's condition for
// A o B to distribute over B's modes.
bool InjectiveUpToBroadcast(const Layout& b) {
  std::vector<IntTuple> shapes, strides;
  for (const FlatMode& m : b.flat_modes()) {
    if (m.stride == 0) continue;
    shapes.push_back(m.shape);
    strides.push_back(m.stride);
  }
  return *IsInjective(*Layout::Create(IntTuple::Tuple(shapes), IntTuple::Tuple(strides)));
}

// R == A o B as functions, R compatible with B. Past size(A), A extends
// through the last mode of coalesce(A).
void CheckComposition(const Layout& a, const Layout& b, const Layout& r) {
  INFO(a.ToString() << " o " << b.ToString() << " = " << r.ToString());
  REQUIRE(r.size() == b.size());
  if (!b.is_leaf()) {
    REQUIRE(r.rank() == b.rank());
    for (int i = 0; i < b.rank(); ++i) REQUIRE(r.mode(i)->size() == b.mode(i)->size());
  }
  const Layout ca = Coalesce(a);
  for (int64_t i = 0; i < b.size(); ++i) {
    const int64_t want = b(i) < a.size() ? a(b(i)) : ca(b(i));
    REQUIRE(r(i) == want);
    // A natural coordinate of B is a valid coordinate of R.
    REQUIRE(*r.Crd2Idx(*b.Idx2Crd(i)) == want);
  }
}

TEST_CASE("property: composition is function composition", "[layout][property]") {
  Gen g(4);
  SECTION("power-of-two layouts always compose") {
    int checked = 0;
    for (int c = 0; c < 2 * kCases; ++c) {
      Layout a = g.PowerOfTwo(/*allow_negative=*/true);
      Layout b = g.PowerOfTwo(/*allow_negative=*/false);
      auto r = Composition(a, b);
      INFO(a.ToString() << " o " << b.ToString() << ": " << r.status().ToString());
      REQUIRE(r.ok());
      if (!InjectiveUpToBroadcast(b)) continue;
      ++checked;
      CheckComposition(a, b, *r);
    }
    CHECK(checked >= kCases / 2);
  }
  SECTION("arbitrary layouts compose correctly or fail with a divisibility error") {
    int ok = 0;
    for (int c = 0; c < 4 * kCases; ++c) {
      Layout a = g.Any(-3, 12);
      Layout b = g.Any(0, 6);
      if (!InjectiveUpToBroadcast(b)) continue;
      auto r = Composition(a, b);
      if (!r.ok()) {
        CHECK(r.status().code() == absl::StatusCode::kInvalidArgument);
        CHECK(std::string(r.status().message()).find("divisibility") != std::string::npos);
        continue;
      }
      ++ok;
      CheckComposition(a, b, *r);
    }
    CHECK(ok >= kCases / 4);
  }
  SECTION("a layout composed with its right inverse is the identity") {
    for (int c = 0; c < kCases; ++c) {
      Layout a = g.Admissible(c % 2 ? 1 : 3);
      Layout b = *RightInverse(a);
      auto r = Composition(a, b);
      INFO(a.ToString() << " o " << b.ToString() << ": " << r.status().ToString());
      REQUIRE(r.ok());
      CheckComposition(a, b, *r);
      for (int64_t i = 0; i < r->size(); ++i) REQUIRE((*r)(i) == i);
    }
  }
}

TEST_CASE("property: complement is disjoint, ordered and completes the layout",
          "[layout][property]") {
  Gen g(5);
  for (int c = 0; c < kCases; ++c) {
    Layout a = g.Admissible();
    // Extent of the sorted modes: the largest stride * shape.
    int64_t extent = 1;
    for (const FlatMode& m : a.flat_modes()) {
      if (m.shape > 1) extent = std::max(extent, m.stride * m.shape);
    }
    const bool exact = c % 2 == 0;
    const int64_t cotarget = exact ? extent * g.Uniform(1, 3) : g.Uniform(1, 2 * extent);
    auto r = Complement(a, cotarget);
    INFO(a.ToString() << " in " << cotarget << ": " << r.status().ToString());
    REQUIRE(r.ok());
    INFO("complement " << r->ToString());
    const std::set<int64_t> image = Image(a);
    for (int64_t i = 1; i < r->size(); ++i) {
      REQUIRE((*r)(i - 1) < (*r)(i));
      REQUIRE(image.count((*r)(i)) == 0);
    }
    Layout ar = *Concat({a, *r});
    REQUIRE(*IsInjective(ar));
    // (A, R) is a bijection onto [0, size(A) * size(R)) >= cotarget.
    const std::set<int64_t> all = Image(ar);
    REQUIRE(*all.begin() == 0);
    REQUIRE(*all.rbegin() == ar.size() - 1);
    REQUIRE(ar.size() >= cotarget);
    if (exact) REQUIRE(ar.size() == cotarget);
  }
}

TEST_CASE("property: complement of arbitrary layouts is right or an error", "[layout][property]") {
  Gen g(6);
  int errors = 0;
  for (int c = 0; c < kCases; ++c) {
    Layout a = g.Any(0, 12);
    auto r = Complement(a, a.cosize() * g.Uniform(1, 2));
    INFO(a.ToString() << ": " << r.status().ToString());
    if (!*IsInjective(a)) {
      REQUIRE_FALSE(r.ok());
      CHECK(std::string(r.status().message()).find("not injective") != std::string::npos);
    }
    if (!r.ok()) {
      ++errors;
      continue;
    }
    const std::set<int64_t> image = Image(a);
    for (int64_t i = 1; i < r->size(); ++i) {
      REQUIRE((*r)(i - 1) < (*r)(i));
      REQUIRE(image.count((*r)(i)) == 0);
    }
    REQUIRE(*IsInjective(*Concat({a, *r})));
  }
  CHECK(errors > 0);
}

TEST_CASE("property: right_inverse and left_inverse", "[layout][property]") {
  Gen g(7);
  SECTION("L(R(i)) == i") {
    for (int c = 0; c < kCases; ++c) {
      Layout l = c % 2 ? g.Any(0, 16) : g.Admissible(c % 4 == 0 ? 1 : 2);
      auto r = RightInverse(l);
      INFO(l.ToString() << " -> " << r.status().ToString());
      REQUIRE(r.ok());
      INFO("right inverse " << r->ToString());
      for (int64_t i = 0; i < r->size(); ++i) REQUIRE(l((*r)(i)) == i);
      // A compact permutation is fully inverted.
      if (c % 4 == 0) REQUIRE(r->size() == l.size());
    }
  }
  SECTION("Li(L(i)) == i for injective L") {
    for (int c = 0; c < kCases; ++c) {
      Layout l = g.Admissible();
      auto li = LeftInverse(l);
      INFO(l.ToString() << " -> " << li.status().ToString());
      REQUIRE(li.ok());
      INFO("left inverse " << li->ToString());
      for (int64_t i = 0; i < l.size(); ++i) REQUIRE((*li)(l(i)) == i);
    }
  }
  SECTION("left_inverse rejects non-injective layouts") {
    for (int c = 0; c < kCases; ++c) {
      Layout l = g.Any(0, 6);
      if (*IsInjective(l)) continue;
      CHECK_FALSE(LeftInverse(l).ok());
    }
  }
}

TEST_CASE("property: logical_divide and logical_product follow their definitions",
          "[layout][property]") {
  Gen g(8);
  int products = 0;
  for (int c = 0; c < kCases; ++c) {
    Layout a = g.PowerOfTwo(/*allow_negative=*/false);
    Layout b = g.PowerOfTwo(/*allow_negative=*/false);
    // A tiler inside A's domain.
    if (!*IsInjective(b) || b.cosize() > a.size()) continue;
    auto comp = Complement(b, a.size());
    if (!comp.ok()) continue;  // e.g. (2,2):(1,8): injective but not admissible
    Layout bb = *Concat({b, *comp});
    auto ld = LogicalDivide(a, b);
    INFO(a.ToString() << " / " << b.ToString() << ": " << ld.status().ToString());
    REQUIRE(ld.ok());
    REQUIRE(ld->rank() == 2);
    REQUIRE(ld->size() == bb.size());
    for (int64_t i = 0; i < ld->size(); ++i) REQUIRE((*ld)(i) == a(bb(i)));
    REQUIRE(FunctionallyEqual(*ld->mode(0), *Composition(a, b)));

    Layout ia = g.Admissible();
    auto lp = LogicalProduct(ia, b);
    INFO(ia.ToString() << " x " << b.ToString() << ": " << lp.status().ToString());
    if (!lp.ok()) {
      // complement(ia) o b can violate divisibility (a gap of 3 strided by 2).
      REQUIRE(std::string(lp.status().message()).find("divisibility") != std::string::npos);
      continue;
    }
    ++products;
    REQUIRE(*lp->mode(0) == ia);
    REQUIRE(lp->size() == ia.size() * b.size());
    REQUIRE(*IsInjective(*lp));
  }
  CHECK(products >= 50);
}

TEST_CASE("property: swizzles are involutive bijections", "[layout][property]") {
  int checked = 0;
  for (int b = 0; b <= 4; ++b) {
    for (int m = 0; m <= 4; ++m) {
      for (int s = b; s <= b + 3; ++s) {
        for (int sign : {1, -1}) {
          if (s == 0 && sign < 0) continue;
          auto sw = Swizzle::Create(b, m, sign * s);
          REQUIRE(sw.ok());
          const int64_t p = sw->period();
          std::vector<bool> seen(static_cast<size_t>(p), false);
          for (int64_t x = 0; x < 3 * p; ++x) {
            const int64_t y = (*sw)(x);
            REQUIRE((*sw)(y) == x);
            REQUIRE(y / p == x / p);  // stays in its aligned block
            if (x < p) {
              REQUIRE_FALSE(seen[static_cast<size_t>(y)]);
              seen[static_cast<size_t>(y)] = true;
            }
          }
          ++checked;
        }
      }
    }
  }
  CHECK(checked > 150);
}

TEST_CASE("property: swizzled layouts are bijections when the layout is", "[layout][property]") {
  Gen g(9);
  for (int c = 0; c < kCases / 4; ++c) {
    Layout l = *Layout::ColMajor(g.Shape({1, 2, 4, 8}, 2, 5, 4096));
    const int bits = static_cast<int>(g.Uniform(0, 3));
    auto sw = Swizzle::Create(bits, static_cast<int>(g.Uniform(0, 3)),
                              static_cast<int>(g.Uniform(bits, bits + 2)));
    REQUIRE(sw.ok());
    SwizzledLayout s = *SwizzledLayout::Create(*sw, l, sw->period() * g.Uniform(0, 2));
    std::set<int64_t> image;
    for (int64_t i = 0; i < s.size(); ++i) image.insert(s(i));
    // A compact layout whose size is a multiple of the period maps onto a
    // permutation of the same aligned blocks.
    if (l.size() % sw->period() == 0) {
      REQUIRE(static_cast<int64_t>(image.size()) == l.size());
      REQUIRE(*image.begin() == s.offset());
      REQUIRE(*image.rbegin() == s.offset() + l.size() - 1);
    }
  }
}

TEST_CASE("property: parsers and the algebra never crash on junk", "[layout][property]") {
  std::mt19937_64 rng(10);
  const std::string alphabet = "()(),,::_-0123456789 <>Swo";
  for (int c = 0; c < 20 * kCases; ++c) {
    std::string text;
    const int n = static_cast<int>(rng() % 24);
    for (int i = 0; i < n; ++i) text.push_back(alphabet[rng() % alphabet.size()]);
    (void)IntTuple::Parse(text);
    (void)Layout::Parse(text);
    (void)Tiler::Parse(text);
    (void)Swizzle::Parse(text);
    (void)SwizzledLayout::Parse(text);
  }
  // Huge strides and shapes: every operation either answers or errs.
  Gen g(11);
  int answered = 0;
  int created = 0;
  for (int c = 0; c < 4 * kCases; ++c) {
    auto huge = [&](int64_t lo, int64_t hi, const std::vector<int64_t>& values) {
      IntTuple s = g.Shape(values, 2, 5, int64_t{1} << 50);
      return Layout::Create(s, g.Strides(s, [&] { return IntTuple(g.Uniform(lo, hi)); }));
    };
    auto ha = huge(-(int64_t{1} << 45), int64_t{1} << 45, {1, 2, 3, 1024, 65536});
    auto hb = huge(0, int64_t{1} << 45, {1, 2, 7, 4096, 1 << 20});
    if (!ha.ok() || !hb.ok()) continue;
    ++created;
    const Layout& a = *ha;
    const Layout& b = *hb;
    answered += Composition(a, b).ok();
    answered += Complement(b, int64_t{1} << 61).ok();
    answered += LogicalDivide(a, b).ok();
    answered += LogicalProduct(b, b).ok();
    answered += RightInverse(b).ok();
    answered += LeftInverse(b).ok();
    answered += BlockedProduct(b, a).ok();
  }
  CHECK(created > 0);
  CHECK(answered > 0);
}

}  // namespace
}  // namespace argus::layout
