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

// Factoring (2^31-1)^2 by bit-blasting: far beyond small limits.
// The obligation holds under `facts` (x, y > 1 below 2^32) only if the
// square has no other factors.
z3::expr HardObligation(Solver& s, std::vector<z3::expr>* facts) {
  auto& c = s.ctx();
  z3::expr x = c.bv_const("x", 64), y = c.bv_const("y", 64);
  const uint64_t n = uint64_t{4611686014132420609};
  facts->push_back(z3::ugt(x, c.bv_val(1, 64)) && z3::ugt(y, c.bv_val(1, 64)));
  facts->push_back(z3::ult(x, c.bv_val(uint64_t{1} << 32, 64)) &&
                   z3::ult(y, c.bv_val(uint64_t{1} << 32, 64)));
  facts->push_back(z3::bvmul_no_overflow(x, y, false));
  return x * y != c.bv_val(static_cast<uint64_t>(n), 64) || x == y;
}

TEST_CASE("the resource limit decides unknown, the same way every time", "[solver]") {
  // No wall-clock limit to speak of: the steps alone stop the check, so the
  // verdict and the steps spent are the same on every run.
  uint64_t first = 0;
  for (int run = 0; run < 2; ++run) {
    Solver s(/*timeout_ms=*/600'000, /*rlimit=*/50'000);
    std::vector<z3::expr> facts;
    z3::expr hard = HardObligation(s, &facts);
    auto r = s.Prove(hard, facts);
    REQUIRE(r.ok());
    REQUIRE(r->verdict == Verdict::kUnknown);
    CHECK(r->reason == "resource limit of 50000 solver steps");
    CHECK(r->steps >= 50'000);
    if (run == 0) first = r->steps;
    CHECK(r->steps == first);
  }
  // An easy obligation in the same context still proves: the limit is per check.
  Solver s(600'000, 50'000);
  std::vector<z3::expr> facts;
  z3::expr hard = HardObligation(s, &facts);
  REQUIRE(s.Prove(hard, facts).ok());
  z3::expr t = s.IntVar("t", 0, 127);
  auto easy = s.Prove(t * 2 < 256);
  REQUIRE(easy.ok());
  CHECK(easy->verdict == Verdict::kProved);
  CHECK(easy->steps < 50'000);
}

}  // namespace
}  // namespace argus::verifier
