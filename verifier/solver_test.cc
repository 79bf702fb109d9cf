#include "verifier/solver.h"

#include <catch2/catch.hpp>

namespace argus::verifier {
namespace {

TEST_CASE("a true obligation over a thread range is proved", "[solver]") {
  Solver s;
  z3::expr tid = s.IntVar("tid", 0, 255);
  // Row-major 16x16 thread layout stays inside a 256-element buffer.
  z3::expr offset = (tid / 16) * 16 + tid % 16;
  auto r = s.Prove(offset >= 0 && offset < 256);
  REQUIRE(r.ok());
  CHECK(r->verdict == Verdict::kProved);
}

TEST_CASE("a false obligation is refuted with a model that violates it", "[solver]") {
  Solver s;
  z3::expr tid = s.IntVar("tid", 0, 255);
  z3::expr k = s.IntVar("k", 0, 255);
  // Off by one: the last thread of the last iteration writes past the end.
  z3::expr offset = k * 256 + tid + 1;
  auto r = s.Prove(offset < 256 * 256);
  REQUIRE(r.ok());
  REQUIRE(r->verdict == Verdict::kRefuted);
  CHECK(r->model.at("k") * 256 + r->model.at("tid") + 1 >= 256 * 256);
}

TEST_CASE("bit-vector swizzle terms: xor swizzle is an involution", "[solver]") {
  Solver s;
  z3::expr x = s.BvVar("x", 32, 0, 1023);
  auto& c = s.ctx();
  // Swizzle<3,3,3>: x ^ ((x & (7 << 6)) >> 3)
  auto swz = [&](const z3::expr& v) {
    return v ^ z3::lshr(v & c.bv_val(7u << 6, 32), c.bv_val(3, 32));
  };
  auto r = s.Prove(swz(swz(x)) == x);
  REQUIRE(r.ok());
  CHECK(r->verdict == Verdict::kProved);
}

TEST_CASE("a solver timeout is reported as unknown, never as proved", "[solver]") {
  Solver s(/*timeout_ms=*/1);
  auto& c = s.ctx();
  // Nonlinear integer arithmetic that Z3 cannot settle in 1 ms.
  z3::expr a = c.int_const("a"), b = c.int_const("b"), d = c.int_const("d");
  s.Assume(a > 1 && b > 1 && d > 1);
  auto r = s.Prove(a * a * a + b * b * b != d * d * d + 12345678);
  REQUIRE(r.ok());
  CHECK(r->verdict != Verdict::kProved);
  if (r->verdict == Verdict::kUnknown) CHECK_FALSE(r->reason.empty());
}

}  // namespace
}  // namespace argus::verifier
