// CuTe's documented examples (media/docs/cpp/cute/02_layout_algebra.md) and
// the error cases of the algebra.
#include "dsl/layout/layout_algebra.h"

#include <catch2/catch.hpp>

#include "dsl/layout/layout_test_util.h"

namespace argus::layout {
namespace {

using testing::L;
using testing::Str;
using testing::T;

bool Contains(const absl::Status& s, std::string_view needle) {
  return std::string(s.message()).find(needle) != std::string::npos;
}

TEST_CASE("coalesce: CuTe examples", "[layout][algebra]") {
  CHECK(Coalesce(L("(2,(1,6)):(1,(6,2))")).ToString() == "12:1");
  CHECK(Str(Coalesce(L("(2,(1,6)):(1,(6,2))"), *IntTuple::Parse("(1,1)"))) == "(2,6):(1,2)");
  CHECK(CoalesceModes(L("(2,(1,6)):(1,(6,2))")).ToString() == "(2,6):(1,2)");
  CHECK(Coalesce(L("(2,4):(1,2)")).ToString() == "8:1");
  CHECK(Coalesce(L("(1,1):(3,5)")).ToString() == "1:0");
  CHECK(Coalesce(L("(2,3):(3,1)")).ToString() == "(2,3):(3,1)");
  CHECK_FALSE(Coalesce(L("4:1"), *IntTuple::Parse("(1,1)")).ok());
}

TEST_CASE("composition: CuTe examples", "[layout][algebra]") {
  // The worked example.
  CHECK(Str(Composition(L("(6,2):(8,2)"), L("(4,3):(3,1)"))) == "((2,2),3):((24,2),8)");
  // Example 2: reshape 20:2 as a 5x4 row-major matrix.
  CHECK(Str(Composition(L("20:2"), L("(5,4):(4,1)"))) == "(5,4):(8,2)");
  // Example 3: CuTe's static result; its dynamic one is
  // ((5,1),(2,2)):((16,4),(80,4)), equal as a function and after by-mode
  // coalesce.
  auto r3 = Composition(L("(10,2):(16,4)"), L("(5,4):(1,5)"));
  CHECK(Str(r3) == "(5,(2,2)):(16,(80,4))");
  Layout dyn = L("((5,1),(2,2)):((16,4),(80,4))");
  CHECK(FunctionallyEqual(*r3, dyn));
  CHECK(*Coalesce(dyn, *IntTuple::Parse("(1,(1,1))")) == *r3);
  // The division examples of "Computing Composition".
  // (3,6,2,8):(w,x,y,z) o 16:9 = (1,2,2,4):(9w,3x,y,z) in CuTe's text.
  auto r4 = Composition(L("(3,6,2,8):(5,7,11,13)"), L("16:9"));
  CHECK(Str(r4) == "(2,2,4):(21,11,13)");
  CHECK(FunctionallyEqual(*r4, L("(1,2,2,4):(45,21,11,13)")));
  // By-mode composition with a tiler and with a shape.
  Layout a = L("(12,(4,8)):(59,(13,1))");
  CHECK(Str(Composition(a, T("<3:4,8:2>"))) == "(3,(2,4)):(236,(26,1))");
  CHECK(Str(Composition(a, T("(3,8)"))) == "(3,(4,2)):(59,(13,1))");
}

TEST_CASE("composition: divisibility violations are errors", "[layout][algebra]") {
  // Stride 3 of (4,3):(3,1) vs mode 2:1 of A: neither of 2 and 3 divides the other.
  auto r = Composition(L("(2,6):(1,3)"), L("(4,3):(3,1)"));
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(Contains(r.status(), "stride divisibility"));
  // Shape divisibility: 6 elements from a mode of 4 followed by another mode.
  auto s = Composition(L("(4,3):(1,10)"), L("6:1"));
  REQUIRE_FALSE(s.ok());
  CHECK(Contains(s.status(), "shape divisibility"));
  // A negative stride in B.
  CHECK_FALSE(Composition(L("8:1"), L("4:-1")).ok());
  // Tiler wider than the layout.
  CHECK_FALSE(Composition(L("8:1"), T("<2:1,2:1>")).ok());
}

TEST_CASE("complement: CuTe examples", "[layout][algebra]") {
  CHECK(Str(Complement(L("4:1"), 24)) == "6:4");
  CHECK(Str(Complement(L("6:4"), 24)) == "4:1");
  CHECK(Str(Complement(L("(4,6):(1,4)"), 24)) == "1:0");
  CHECK(Str(Complement(L("4:2"), 24)) == "(2,3):(1,8)");
  CHECK(Str(Complement(L("(2,4):(1,6)"), 24)) == "3:2");
  CHECK(Str(Complement(L("(2,2):(1,6)"), 24)) == "(3,2):(2,12)");
  CHECK(Str(Complement(L("(2,2):(4,1)"), 24)) == "(2,3):(2,8)");
  // Default cotarget: cosize.
  CHECK(Str(Complement(L("4:2"))) == "2:1");
}

TEST_CASE("complement: inadmissible inputs are errors", "[layout][algebra]") {
  auto dup = Complement(L("(2,2):(1,1)"), 8);
  REQUIRE_FALSE(dup.ok());
  CHECK(Contains(dup.status(), "not injective"));
  auto zero = Complement(L("(4,2):(1,0)"), 8);
  REQUIRE_FALSE(zero.ok());
  CHECK(Contains(zero.status(), "not injective"));
  // Injective, but 3 is not a multiple of 2: no layout complement exists.
  auto odd = Complement(L("(2,2):(1,3)"), 12);
  REQUIRE_FALSE(odd.ok());
  CHECK(Contains(odd.status(), "not admissible"));
  CHECK_FALSE(Complement(L("4:-1"), 8).ok());
  CHECK_FALSE(Complement(L("4:1"), 0).ok());
}

TEST_CASE("logical_divide and its flavours: CuTe examples", "[layout][algebra]") {
  CHECK(Str(LogicalDivide(L("(4,2,3):(2,1,8)"), L("4:2"))) == "((2,2),(2,3)):((4,1),(2,8))");
  // The 2-D example: A = (9,(4,8)):(59,(13,1)), B = <3:3, (2,4):(1,8)>.
  Layout a = L("(9,(4,8)):(59,(13,1))");
  Tiler b = T("<3:3,(2,4):(1,8)>");
  auto ld = LogicalDivide(a, b);
  CHECK(Str(ld) == "((3,3),((2,4),(2,2))):((177,59),((13,2),(26,1)))");
  auto zd = ZippedDivide(a, b);
  CHECK(Str(zd) == "((3,(2,4)),(3,(2,2))):((177,(13,2)),(59,(26,1)))");
  REQUIRE(zd.ok());
  // Sizes ((3,8),(3,4)); mode 0 of zipped_divide is composition(a, b).
  CHECK(zd->mode(0)->size() == 24);
  CHECK(zd->mode(1)->size() == 12);
  CHECK(*zd->mode(0) == *Composition(a, b));
  CHECK(Str(TiledDivide(a, b)) == "((3,(2,4)),3,(2,2)):((177,(13,2)),59,(26,1))");
  CHECK(Str(FlatDivide(a, b)) == "(3,(2,4),3,(2,2)):(177,(13,2),59,(26,1))");
  // A layout tiler keeps the 1-D (tile, rest) form.
  CHECK(Str(ZippedDivide(L("(4,2,3):(2,1,8)"), L("4:2"))) == "((2,2),(2,3)):((4,1),(2,8))");
  // Untiled modes go to the rest.
  CHECK(Str(ZippedDivide(L("(8,6,5):(1,8,48)"), T("(4,3)"))) ==
        "((4,3),(2,2,5)):((1,8),(4,24,48))");
  // A non-injective tiler has no complement.
  CHECK_FALSE(LogicalDivide(L("8:1"), L("(2,2):(1,1)")).ok());
}

TEST_CASE("logical_product, blocked_product, raked_product", "[layout][algebra]") {
  CHECK(Str(LogicalProduct(L("(2,2):(4,1)"), L("6:1"))) == "((2,2),(2,3)):((4,1),(2,8))");
  CHECK(Str(LogicalProduct(L("(2,2):(4,1)"), L("(4,2):(2,1)"))) == "((2,2),(4,2)):((4,1),(8,2))");
  // A 2x5 row-major block tiled over a 3x4 column-major arrangement.
  Layout block = L("(2,5):(5,1)");
  Layout tiles = L("(3,4):(1,3)");
  auto bp = BlockedProduct(block, tiles);
  CHECK(Str(bp) == "(6,(5,4)):(5,(1,30))");
  auto rp = RakedProduct(block, tiles);
  CHECK(Str(rp) == "((3,2),(4,5)):((10,5),(30,1))");
  REQUIRE(bp.ok());
  REQUIRE(rp.ok());
  // Element (x, y) of the blocked product: block element (x%2, y%5) of tile
  // (x/2, y/5); of the raked product: block element (x/3, y/4) of tile
  // (x%3, y%4).
  for (int64_t x = 0; x < 6; ++x) {
    for (int64_t y = 0; y < 20; ++y) {
      int64_t blocked = block(x % 2 + 2 * (y % 5)) + 10 * tiles(x / 2 + 3 * (y / 5));
      CHECK(*bp->Crd2Idx(Tuple({x, y})) == blocked);
      int64_t raked = block(x / 3 + 2 * (y / 4)) + 10 * tiles(x % 3 + 3 * (y % 4));
      CHECK(*rp->Crd2Idx(Tuple({x, y})) == raked);
    }
  }
  CHECK(Str(ZippedProduct(L("(2,5):(5,1)"), T("<3:1,4:1>"))) ==
        Str(ZippedProduct(L("(2,5):(5,1)"), T("(3,4)"))));
  CHECK_FALSE(LogicalProduct(L("(2,2):(1,1)"), L("2:1")).ok());
}

TEST_CASE("right and left inverses", "[layout][algebra]") {
  CHECK(Str(RightInverse(L("(2,3):(3,1)"))) == "(3,2):(2,1)");
  CHECK(Str(RightInverse(L("4:2"))) == "1:0");
  CHECK(Str(RightInverse(L("(4,2):(1,8)"))) == "4:1");
  CHECK(Str(LeftInverse(L("4:2"))) == "(2,4):(4,1)");
  CHECK(Str(LeftInverse(L("(2,3):(3,1)"))) == "(3,2):(2,1)");
  auto bad = LeftInverse(L("(2,2):(1,1)"));
  REQUIRE_FALSE(bad.ok());
  CHECK(Contains(bad.status(), "not injective"));
  CHECK_FALSE(RightInverse(L("4:-1")).ok());
}

TEST_CASE("tilers parse and print", "[layout][algebra]") {
  CHECK(T("<3:3,(2,4):(1,8)>").ToString() == "<3:3,(2,4):(1,8)>");
  CHECK(T("(3,8)").ToString() == "<3:1,8:1>");
  CHECK(T("<4:2,<2:1,3:1>>").ToString() == "<4:2,<2:1,3:1>>");
  auto bad = Tiler::Parse("<3:3,");
  REQUIRE_FALSE(bad.ok());
  CHECK(Contains(bad.status(), "column 6"));
  CHECK_FALSE(Tiler::Parse("<3:3 4:1>").ok());
}

}  // namespace
}  // namespace argus::layout
