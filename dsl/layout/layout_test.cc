#include "dsl/layout/layout.h"

#include <catch2/catch.hpp>

#include "dsl/layout/layout_test_util.h"

namespace argus::layout {
namespace {

using testing::L;

TEST_CASE("layouts parse and print round-trip", "[layout]") {
  for (const char* text : {"12:1", "(2,(1,6)):(1,(6,2))", "((2,2),3):((24,2),8)", "1:0",
                           "(4,-2):(1,0)", "(2,3):(-3,1)", "():()", "(8):(1)"}) {
    // (4,-2) is not a valid shape; everything else is.
    auto l = Layout::Parse(text);
    if (std::string(text) == "(4,-2):(1,0)") {
      CHECK_FALSE(l.ok());
      continue;
    }
    REQUIRE(l.ok());
    CHECK(l->ToString() == text);
    auto again = Layout::Parse(l->ToString());
    REQUIRE(again.ok());
    CHECK(*again == *l);
  }
}

TEST_CASE("layout parse errors carry the column", "[layout]") {
  struct Case {
    const char* text;
    const char* needle;
  };
  for (const Case& c :
       {Case{"(2,3)", "column 6: expected ':'"},
        Case{"(2,3):(1,", "column 10: expected an integer or '('"},
        Case{"(2,3):(1,2", "column 11: expected ',' or ')'"},
        Case{"(2,3):(1,2) x", "column 13: expected end of input"},
        Case{"(2,3):(1,(2,1))", "not congruent"},
        Case{"(2,0):(1,2)", "shape entries must be positive"}, Case{"(2,3):1", "column 7"}}) {
    auto l = Layout::Parse(c.text);
    REQUIRE_FALSE(l.ok());
    INFO(l.status().message());
    CHECK(std::string(l.status().message()).find(c.needle) != std::string::npos);
  }
}

TEST_CASE("rank, depth, size, cosize", "[layout]") {
  Layout a = L("(2,(1,6)):(1,(6,2))");
  CHECK(a.rank() == 2);
  CHECK(a.depth() == 2);
  CHECK(a.size() == 12);
  CHECK(a.cosize() == 12);
  Layout b = L("((2,2),3):((24,2),8)");
  CHECK(b.size() == 12);
  CHECK(b.cosize() == 24 + 2 + 16 + 1);
  CHECK(L("12:1").rank() == 1);
  CHECK(L("12:1").depth() == 0);
  CHECK(L("(3,4):(0,0)").cosize() == 1);
  CHECK(Layout().ToString() == "1:0");
  CHECK_FALSE(Layout::Create(int64_t{1} << 40, int64_t{1} << 30).ok());  // cosize > 2^62
}

TEST_CASE("evaluation, crd2idx and idx2crd", "[layout]") {
  Layout a = L("(3,(2,3)):(3,(12,1))");
  CHECK(a(16) == 17);
  CHECK(*a.At(16) == 17);
  CHECK_FALSE(a.At(18).ok());
  CHECK_FALSE(a.At(-1).ok());
  CHECK(*a.Crd2Idx(*IntTuple::Parse("(1,5)")) == 17);
  CHECK(*a.Crd2Idx(*IntTuple::Parse("(1,(1,2))")) == 17);
  CHECK(a.Idx2Crd(16)->ToString() == "(1,(1,2))");
  // The 2x3 row-major example from CuTe's docs.
  Layout r = *Layout::RowMajor(Tuple({2, 3}));
  CHECK(r.ToString() == "(2,3):(3,1)");
  std::vector<int64_t> seq;
  for (int64_t i = 0; i < r.size(); ++i) seq.push_back(r(i));
  CHECK(seq == std::vector<int64_t>{0, 3, 1, 4, 2, 5});
  CHECK(*r.Crd2Idx(Tuple({1, 1})) == 4);
  CHECK(Layout::ColMajor(*IntTuple::Parse("(2,(3,4))"))->ToString() == "(2,(3,4)):(1,(2,6))");
  CHECK(Layout::RowMajor(*IntTuple::Parse("(2,(3,4))"))->ToString() == "(2,(3,4)):(12,(4,1))");
  // Flat modes carry the divisors the verifier uses.
  CHECK(a.flat_modes() == std::vector<FlatMode>{{3, 3, 1}, {2, 12, 3}, {3, 1, 6}});
  // The last mode extends past size(), as in CuTe.
  CHECK(L("(2,3):(1,2)")(7) == 7);
}

TEST_CASE("modes, append, prepend, concat, flatten", "[layout]") {
  Layout a = L("(2,(1,6)):(1,(6,2))");
  CHECK(a.mode(1)->ToString() == "(1,6):(6,2)");
  CHECK_FALSE(a.mode(2).ok());
  CHECK(L("4:2").mode(0)->ToString() == "4:2");
  CHECK(Append(a, L("3:7"))->ToString() == "(2,(1,6),3):(1,(6,2),7)");
  CHECK(Prepend(a, L("3:7"))->ToString() == "(3,2,(1,6)):(7,1,(6,2))");
  CHECK(Append(L("4:2"), L("3:7"))->ToString() == "(4,3):(2,7)");
  CHECK(Concat({L("4:2"), L("(2,2):(1,8)")})->ToString() == "(4,(2,2)):(2,(1,8))");
  CHECK(PadToRank(L("4:2"), 3)->ToString() == "(4,1,1):(2,0,0)");
  CHECK(Flatten(L("((2,2),(3,(4,5))):((1,2),(4,(12,48)))")).ToString() ==
        "(2,2,3,4,5):(1,2,4,12,48)");
}

}  // namespace
}  // namespace argus::layout
