#include "dsl/layout/int_tuple.h"

#include <catch2/catch.hpp>

namespace argus::layout {
namespace {

TEST_CASE("int tuples parse and print CuTe notation", "[layout][int_tuple]") {
  for (const char* text : {"12", "-3", "()", "(4)", "(2,(1,6))", "((2,2),3)", "(1,((2,3),()),4)"}) {
    auto t = IntTuple::Parse(text);
    REQUIRE(t.ok());
    CHECK(t->ToString() == text);
  }
  auto t = IntTuple::Parse(" ( _2 , (1, 6) ) ");
  REQUIRE(t.ok());
  CHECK(*t == Tuple({2, Tuple({1, 6})}));
  CHECK(t->rank() == 2);
  CHECK(t->depth() == 2);
  CHECK(t->product() == 12);
  CHECK(t->sum() == 9);
  CHECK(t->leaves() == std::vector<int64_t>{2, 1, 6});
  CHECK(IntTuple(5).depth() == 0);
  CHECK(IntTuple(5).rank() == 1);
  CHECK(IntTuple().product() == 1);
  CHECK(IntTuple().depth() == 1);
  CHECK(Tuple({4}) != IntTuple(4));
}

TEST_CASE("int tuple parse errors name the column", "[layout][int_tuple]") {
  struct Case {
    const char* text;
    const char* needle;
  };
  for (const Case& c : {Case{"(2,", "column 4: expected an integer or '('"},
                        Case{"(2 3)", "column 4: expected ',' or ')'"},
                        Case{"(2,3))", "column 6: expected end of input"},
                        Case{"", "column 1: expected an integer or '('"},
                        Case{"x", "column 1: expected an integer or '('"},
                        Case{"99999999999999999999", "column 1: integer is larger than 2^62"}}) {
    auto t = IntTuple::Parse(c.text);
    REQUIRE_FALSE(t.ok());
    INFO(t.status().message());
    CHECK(t.status().code() == absl::StatusCode::kInvalidArgument);
    CHECK(std::string(t.status().message()).find(c.needle) != std::string::npos);
  }
}

TEST_CASE("idx2crd and crd2idx follow CuTe's examples", "[layout][int_tuple]") {
  // CuTe 01_layout: shape (3,(2,3)), stride (3,(12,1)).
  IntTuple shape = *IntTuple::Parse("(3,(2,3))");
  IntTuple stride = *IntTuple::Parse("(3,(12,1))");
  for (const char* crd : {"16", "(1,5)", "(1,(1,2))"}) {
    IntTuple c = *IntTuple::Parse(crd);
    auto natural = Idx2Crd(c, shape);
    REQUIRE(natural.ok());
    CHECK(natural->ToString() == "(1,(1,2))");
    auto idx = Crd2Idx(c, shape, stride);
    REQUIRE(idx.ok());
    CHECK(*idx == 17);
    auto flat = Crd2Flat(c, shape);
    REQUIRE(flat.ok());
    CHECK(*flat == 16);
  }
  CHECK(CompactColMajor(shape).ToString() == "(1,(3,6))");
  CHECK(CompactRowMajor(shape).ToString() == "(6,(3,1))");
}

TEST_CASE("coordinate errors are statuses", "[layout][int_tuple]") {
  IntTuple shape = *IntTuple::Parse("(3,(2,3))");
  CHECK_FALSE(Idx2Crd(18, shape).ok());
  CHECK_FALSE(Idx2Crd(-1, shape).ok());
  CHECK_FALSE(Idx2Crd(*IntTuple::Parse("(1,2,3)"), shape).ok());
  CHECK_FALSE(Idx2Crd(*IntTuple::Parse("(3,0)"), shape).ok());
  CHECK_FALSE(Idx2Crd(*IntTuple::Parse("((1,1),1)"), shape).ok());
  CHECK_FALSE(Idx2Crd(0, *IntTuple::Parse("(3,0)")).ok());
  CHECK_FALSE(Crd2Idx(0, shape, *IntTuple::Parse("(3,4)")).ok());
}

}  // namespace
}  // namespace argus::layout
