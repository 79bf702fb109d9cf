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
  Solver s(/*timeout_ms=*/50);
  auto& c = s.ctx();
  // Factoring a 62-bit semiprime by bit-blasting: far beyond 50 ms.
  z3::expr x = c.bv_const("x", 64), y = c.bv_const("y", 64);
  const uint64_t n = uint64_t{4611686014132420609};  // (2^31-1)^2
  s.Assume(z3::ugt(x, c.bv_val(1, 64)) && z3::ugt(y, c.bv_val(1, 64)));
  s.Assume(z3::ult(x, c.bv_val(uint64_t{1} << 32, 64)) &&
           z3::ult(y, c.bv_val(uint64_t{1} << 32, 64)));
  s.Assume(z3::bvmul_no_overflow(x, y, false));
  auto r = s.Prove(x * y != c.bv_val(static_cast<uint64_t>(n), 64) || x == y);
  REQUIRE(r.ok());
  CHECK(r->verdict != Verdict::kProved);
  if (r->verdict == Verdict::kUnknown) CHECK_FALSE(r->reason.empty());
  CHECK(r->seconds < 10);
}

}  // namespace
}  // namespace argus::verifier
