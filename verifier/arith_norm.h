// verifier/arith_norm.h: an equivalence-preserving rewrite of integer
// div/mod by constants, applied to obligations before Z3 sees them.
//
// The Hopper checks compose an op's linearized iteration with another op's
// loop nest (i = N / KT, k = N % KT) and with a barrier's rounds
// (S * (N / S) + N % S), so their terms nest div and mod of sums several
// levels deep: `(4 * ((64 * i + k) / 4) + k % 4 - 3) / 64`. Each level is
// exact arithmetic that Z3's arithmetic solver rediscovers by case splits
// (seconds per obligation at large trip counts, time-outs at some); the same
// identities applied syntactically make those terms flat:
//   (a*c*y + z) / a  ->  c*y + z / a        (a > 0, floor division)
//   (a*c*y + z) % a  ->  z % a
//   a*(x / a) + x % a  ->  x                (in any sum, scaled by d)
//   (x % b) % a  ->  x % a                   when a divides b
//   z / a, z % a     ->  constants / z        when the bounds of z (a constant
//                                            plus non-negative multiples of
//                                            mods by constants) decide them
// Every rule is an identity of SMT-LIB's integer div/mod for a positive
// constant divisor, so the result is equivalent to the input for every
// assignment (and models of the one are models of the other). Terms under
// quantifiers, bit-vector terms and divisions by non-constants are kept.
//
// Thread safety: a pure function of its argument; call it from the thread
// that owns the argument's z3::context.
#ifndef ARGUS_VERIFIER_ARITH_NORM_H_
#define ARGUS_VERIFIER_ARITH_NORM_H_

#include <z3++.h>

namespace argus::verifier {

z3::expr NormalizeDivMod(const z3::expr& e);

}  // namespace argus::verifier

#endif  // ARGUS_VERIFIER_ARITH_NORM_H_
