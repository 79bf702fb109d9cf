#include "dsl/layout/swizzle.h"

#include <catch2/catch.hpp>

#include "dsl/layout/layout_test_util.h"

namespace argus::layout {
namespace {

using testing::L;

TEST_CASE("swizzle masks and values follow CuTe", "[layout][swizzle]") {
  Swizzle sw = *Swizzle::Create(3, 3, 3);
  CHECK(sw.yyy_mask() == 0b111000000);
  CHECK(sw.zzz_mask() == 0b000111000);
  CHECK(sw.period() == 512);
  // Row r (bits 6..8) xors into the 16-byte chunk bits 3..5.
  CHECK(sw(0) == 0);
  CHECK(sw(64) == 64 + 8);
  CHECK(sw(64 * 5 + 8 * 2 + 3) == 64 * 5 + 8 * (2 ^ 5) + 3);
  Swizzle neg = *Swizzle::Create(2, 1, -3);
  CHECK(neg.yyy_mask() == 0b0000110);
  CHECK(neg.zzz_mask() == 0b0110000);
  CHECK(neg(0b0000110) == 0b0110110);
  CHECK(Swizzle()(12345) == 12345);
  CHECK(sw.ToString() == "Sw<3,3,3>");
  CHECK(*Swizzle::Parse(" Sw<2,4,3> ") == *Swizzle::Create(2, 4, 3));
}

TEST_CASE("swizzle parameters are validated", "[layout][swizzle]") {
  CHECK_FALSE(Swizzle::Create(3, 3, 2).ok());  // |S| < B
  CHECK_FALSE(Swizzle::Create(-1, 3, 3).ok());
  CHECK_FALSE(Swizzle::Create(1, -1, 3).ok());
  CHECK_FALSE(Swizzle::Create(20, 20, 30).ok());  // > 62 bits
  auto bad = Swizzle::Parse("Sw<3,3>");
  REQUIRE_FALSE(bad.ok());
  CHECK(std::string(bad.status().message()).find("column 7: expected ','") != std::string::npos);
}

TEST_CASE("swizzled layouts evaluate sw(offset + L(i)) and round-trip", "[layout][swizzle]") {
  // A 8x64 row-major bf16 tile with the 128B swizzle.
  Layout tile = L("(8,64):(64,1)");
  SwizzledLayout s = *SwizzledLayout::Create(*Swizzle::Create(3, 3, 3), tile);
  for (int64_t i = 0; i < tile.size(); ++i) CHECK(s(i) == s.swizzle()(tile(i)));
  CHECK(*s.Crd2Idx(Tuple({1, 0})) == 64 + 8);
  CHECK_FALSE(s.At(512).ok());
  CHECK(s.ToString() == "Sw<3,3,3> o 0 o (8,64):(64,1)");
  auto back = SwizzledLayout::Parse(s.ToString());
  REQUIRE(back.ok());
  CHECK(back->ToString() == s.ToString());
  auto no_offset = SwizzledLayout::Parse("Sw<1,2,3> o (4,4):(1,4)");
  REQUIRE(no_offset.ok());
  CHECK(no_offset->offset() == 0);
  auto with_offset = SwizzledLayout::Create(*Swizzle::Create(1, 2, 3), tile, 512);
  REQUIRE(with_offset.ok());
  CHECK((*with_offset)(0) == 512);
  CHECK_FALSE(SwizzledLayout::Create(Swizzle(), tile, -1).ok());
  CHECK_FALSE(SwizzledLayout::Parse("Sw<1,2,3> o (4,4):(1,4,2)").ok());
  CHECK_FALSE(SwizzledLayout::Parse("Sw<1,2,3> (4,4):(1,4)").ok());
}

TEST_CASE("tiling a swizzled layout tiles its inner layout", "[layout][swizzle]") {
  SwizzledLayout s = *SwizzledLayout::Create(*Swizzle::Create(3, 3, 3), L("(64,64):(64,1)"), 4096);
  auto zd = ZippedDivide(s, *Tiler::Parse("(8,64)"));
  REQUIRE(zd.ok());
  CHECK(zd->ToString() == "Sw<3,3,3> o 4096 o ((8,64),(8,1)):((64,1),(512,0))");
  // Element (r, c) of tile t is element (8t + r, c) of the buffer.
  for (int64_t t = 0; t < 8; ++t) {
    for (int64_t r = 0; r < 8; ++r) {
      for (int64_t c = 0; c < 64; c += 7) {
        CHECK(*zd->Crd2Idx(Tuple({Tuple({r, c}), Tuple({t, 0})})) ==
              *s.Crd2Idx(Tuple({8 * t + r, c})));
      }
    }
  }
  CHECK(Composition(s, *Tiler::Parse("<8:1,64:1>"))->ToString() ==
        "Sw<3,3,3> o 4096 o (8,64):(64,1)");
  CHECK(LogicalDivide(s, *Tiler::Parse("(8,64)"))->layout().size() == 4096);
  CHECK_FALSE(Composition(s, *Tiler::Parse("<2:1,2:1,2:1>")).ok());
}

}  // namespace
}  // namespace argus::layout
