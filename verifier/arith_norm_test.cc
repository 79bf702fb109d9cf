#include "verifier/arith_norm.h"

#include <catch2/catch.hpp>
#include <cstdint>
#include <functional>
#include <random>

#include "verifier/solver.h"

namespace argus::verifier {
namespace {

// The deepest nesting of div/mod in e (0: none).
int DivModDepth(const z3::expr& e) {
  if (!e.is_app()) return 0;
  int d = 0;
  for (unsigned i = 0; i < e.num_args(); ++i) d = std::max(d, DivModDepth(e.arg(i)));
  auto k = e.decl().decl_kind();
  return d + (k == Z3_OP_IDIV || k == Z3_OP_MOD ? 1 : 0);
}

// e and its normal form agree at every point of a grid (Z3 evaluates div/mod
// of numerals with SMT-LIB's semantics).
void CheckSameOnGrid(z3::context& c, const z3::expr& e, const z3::expr& x, const z3::expr& y) {
  z3::expr n = NormalizeDivMod(e);
  for (int64_t xv = -37; xv <= 37; xv += 6) {
    for (int64_t yv = -29; yv <= 29; yv += 7) {
      z3::expr_vector from(c), to(c);
      from.push_back(x);
      from.push_back(y);
      to.push_back(c.int_val(xv));
      to.push_back(c.int_val(yv));
      int64_t a = 0, b = 0;
      REQUIRE(const_cast<z3::expr&>(e).substitute(from, to).simplify().is_numeral_i64(a));
      REQUIRE(n.substitute(from, to).simplify().is_numeral_i64(b));
      INFO(e << "\n-> " << n << "\nat x=" << xv << " y=" << yv);
      REQUIRE(a == b);
    }
  }
}

TEST_CASE("a barrier round of a linearized loop nest flattens", "[solver]") {
  Solver s;
  z3::context& c = s.ctx();
  z3::expr i = c.int_const("i"), k = c.int_const("k");
  z3::expr n = 64 * i + k;
  // The round's sequence number (4 * (n / 4) + n % 4), back in the nest: its
  // tile and K step, and the consumer's iteration three steps earlier.
  z3::expr seq = 4 * (n / 4) + n % 4;
  z3::expr e = (seq - 3) / 64 + z3::mod(seq + 61, 64) * 1000;
  z3::expr r = NormalizeDivMod(e.simplify());
  INFO(r);
  CHECK(DivModDepth(e) == 2);
  CHECK(DivModDepth(r) == 1);
  auto p = s.Prove(r == e);
  REQUIRE(p.ok());
  CHECK(p->verdict == Verdict::kProved);
  // seq is n itself, and so is a mixed-radix split of it put back together.
  CHECK(z3::eq(NormalizeDivMod(seq), NormalizeDivMod(n)));
  CHECK(z3::eq(NormalizeDivMod(64 * (n / 64) + z3::mod(n, 64)), NormalizeDivMod(n)));
}

TEST_CASE("div/mod normalization keeps the value of random terms", "[solver]") {
  z3::context c;
  z3::expr x = c.int_const("x"), y = c.int_const("y");
  std::mt19937 rng(7);
  auto pick = [&](int n) { return static_cast<int>(rng() % n); };
  std::function<z3::expr(int)> gen = [&](int depth) -> z3::expr {
    if (depth == 0) {
      switch (pick(3)) {
        case 0:
          return x;
        case 1:
          return y;
        default:
          return c.int_val(pick(41) - 20);
      }
    }
    z3::expr a = gen(depth - 1), b = gen(depth - 1);
    int k = pick(7) - 3;  // divisors -3..3 (0 and negatives must be left alone)
    int64_t d = pick(5) - 2;
    switch (pick(8)) {
      case 0:
        return a + b;
      case 1:
        return a - b;
      case 2:
        return c.int_val(pick(9) - 4) * a + b;
      case 3:
        return a / c.int_val(k == 0 ? 4 : k * 2);
      case 4:
        return z3::mod(a, c.int_val(k == 0 ? 8 : std::abs(k) * 4));
      case 5:  // a split put back together (d * a), or not quite
        return c.int_val(6 * d) * (a / 6) + c.int_val(d) * z3::mod(a, 6) + b;
      case 6:
        return c.int_val(6 * d + 1) * (a / 6) + c.int_val(d) * z3::mod(a, 6) + b * (x / 3);
      default:
        return z3::mod(z3::mod(a, 12), c.int_val(k == 0 ? 5 : std::abs(k) * 2));
    }
  };
  for (int t = 0; t < 150; ++t) {
    z3::expr e = gen(1 + t % 4);
    CheckSameOnGrid(c, e, x, y);
    CheckSameOnGrid(c, e.simplify(), x, y);
  }
}

TEST_CASE("division by a term or by zero is kept", "[solver]") {
  z3::context c;
  z3::expr x = c.int_const("x"), y = c.int_const("y");
  z3::expr a = (4 * x + 1) / y;
  CHECK(z3::eq(NormalizeDivMod(a), a));
  z3::expr b = z3::mod(4 * x, c.int_val(0));
  CHECK(z3::eq(NormalizeDivMod(b), b));
}

}  // namespace
}  // namespace argus::verifier
