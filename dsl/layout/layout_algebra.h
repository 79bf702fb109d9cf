// dsl/layout/layout_algebra.h: CuTe's layout algebra (coalesce, composition,
// complement, divides, products, inverses) on dsl/layout/layout.h layouts.
//
// Semantics follow CuTe's "02_layout_algebra" document; results are equal to
// CuTe's as functions and in shape, and structurally equal to CuTe's static
// (compile-time) results. The differences, all documented at the function:
//  - inadmissible inputs are errors, not unspecified results: a complement of
//    a non-injective or non-divisible layout, a composition that violates the
//    stride or shape divisibility condition, a negative stride where the
//    operation is not defined for one;
//  - composition drops the size-1 modes CuTe's dynamic path leaves behind
//    (e.g. (10,2):(16,4) o 5:1 is 5:16 here, (5,1):(16,4) in dynamic CuTe).
//
// Thread safety: pure functions of immutable values; safe from any thread.
#ifndef ARGUS_DSL_LAYOUT_LAYOUT_ALGEBRA_H_
#define ARGUS_DSL_LAYOUT_LAYOUT_ALGEBRA_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "dsl/layout/int_tuple.h"
#include "dsl/layout/layout.h"

namespace argus::layout {

// A CuTe Tiler: a layout (composed as a 1-D function), or a tuple of tilers
// applied mode by mode, written `<3:3,(2,4):(1,8)>`. A shape used as a tiler
// means a tuple of stride-1 layouts: `(3,8)` is `<3:1,8:1>`.
class Tiler {
 public:
  Tiler(Layout layout) : is_layout_(true), layout_(std::move(layout)) {}  // NOLINT
  static Tiler Of(std::vector<Tiler> elems);
  // Leaves s become s:1 layouts, tuples become by-mode tilers.
  static absl::StatusOr<Tiler> FromShape(const IntTuple& shape);
  // tiler := '<' tiler {',' tiler} '>' | int_tuple [':' int_tuple]
  static absl::StatusOr<Tiler> Parse(std::string_view text);

  bool is_layout() const { return is_layout_; }
  const Layout& layout() const { return layout_; }
  const std::vector<Tiler>& elems() const { return elems_; }
  int rank() const { return is_layout_ ? 1 : static_cast<int>(elems_.size()); }
  std::string ToString() const;

 private:
  Tiler() = default;
  bool is_layout_ = false;
  Layout layout_;
  std::vector<Tiler> elems_;
};

// --- Coalesce -------------------------------------------------------------

// Same function on [0, size()), same size, depth <= 1, fewest modes: drops
// size-1 modes and merges s0:d0 ++ s1:(s0*d0) into (s0*s1):d0. An all-ones
// layout becomes 1:0; a single remaining mode is returned as a leaf.
Layout Coalesce(const Layout& layout);
// By-mode coalesce: coalesces the sublayout at each leaf of `profile` (whose
// values are ignored); modes beyond the profile's rank are kept as they are.
// Error if the profile is deeper or wider than the layout.
absl::StatusOr<Layout> Coalesce(const Layout& layout, const IntTuple& profile);
// Coalesces each top-level mode: Coalesce(layout, (1,1,...)).
Layout CoalesceModes(const Layout& layout);

// --- Composition ------------------------------------------------------------

// R = A o B with R(i) == A(B(i)) for 0 <= i < size(B) and R compatible with
// B (R keeps B's nesting; each leaf of B becomes a leaf or a flat tuple).
// As in CuTe, R is built leaf by leaf of B (A o (B0,B1) = (A o B0, A o B1)),
// which is function composition when B is injective apart from its stride-0
// modes; and where B(i) >= size(A), A extends through the last mode of
// coalesce(A). Errors: B has a negative stride, or the stride / shape
// divisibility condition fails (the message names the modes involved).
absl::StatusOr<Layout> Composition(const Layout& a, const Layout& b);
// By-mode composition with a tiler (a layout tiler composes as above).
absl::StatusOr<Layout> Composition(const Layout& a, const Tiler& b);

// --- Complement ---------------------------------------------------------------

// The complement R of A in [0, cotarget): ordered (R(i-1) < R(i)), R(i) for
// i >= 1 never in the image of A, and (A, R) injective with image covering
// [0, cotarget) (exactly [0, cotarget) when cotarget is a multiple of the
// extent of A's sorted modes). Coalesced. Errors: cotarget < 1, a negative
// stride, A not injective, or A's sorted strides not dividing each other
// (e.g. (2,2):(1,3)), for which no layout complement exists.
absl::StatusOr<Layout> Complement(const Layout& a, int64_t cotarget);
// Complement in [0, cosize(a)).
absl::StatusOr<Layout> Complement(const Layout& a);

// --- Divide -------------------------------------------------------------------

// A / B = A o (B, complement(B, size(A))): mode 0 is the tile, mode 1 the
// layout of tiles. With a by-mode tiler, applied to each mode of A.
absl::StatusOr<Layout> LogicalDivide(const Layout& a, const Tiler& b);
// ((tile modes...), (rest modes..., untiled modes of A...)).
absl::StatusOr<Layout> ZippedDivide(const Layout& a, const Tiler& b);
// ((tile modes...), rest modes..., untiled modes...).
absl::StatusOr<Layout> TiledDivide(const Layout& a, const Tiler& b);
// (tile modes..., rest modes..., untiled modes...).
absl::StatusOr<Layout> FlatDivide(const Layout& a, const Tiler& b);

// --- Product ------------------------------------------------------------------

// A x B = (A, complement(A, size(A) * cosize(B)) o B). By-mode with a tiler.
absl::StatusOr<Layout> LogicalProduct(const Layout& a, const Tiler& b);
// ((A modes...), (B modes..., untiled modes...)), as for the divides.
absl::StatusOr<Layout> ZippedProduct(const Layout& a, const Tiler& b);
absl::StatusOr<Layout> TiledProduct(const Layout& a, const Tiler& b);
absl::StatusOr<Layout> FlatProduct(const Layout& a, const Tiler& b);
// Rank-sensitive products: both are padded to R = max(rank) modes, then mode
// i of the result is (A_i, B'_i) for blocked, (B'_i, A_i) for raked (B' the
// replicated B of LogicalProduct), each mode coalesced.
absl::StatusOr<Layout> BlockedProduct(const Layout& a, const Layout& b);
absl::StatusOr<Layout> RakedProduct(const Layout& a, const Layout& b);

// --- Inverses -----------------------------------------------------------------

// R with L(R(i)) == i for 0 <= i < size(R), of the largest such size (CuTe's
// right_inverse: follows the chain of strides 1, s0, s0*s1, ... in L).
// Coalesced; 1:0 when L has no stride-1 mode. Error on negative strides.
absl::StatusOr<Layout> RightInverse(const Layout& layout);
// R with R(L(i)) == i for 0 <= i < size(L), defined on [0, cosize(L)):
// right_inverse((L, complement(L))). Errors as Complement (L not injective,
// not admissible, negative strides).
absl::StatusOr<Layout> LeftInverse(const Layout& layout);

}  // namespace argus::layout

#endif  // ARGUS_DSL_LAYOUT_LAYOUT_ALGEBRA_H_
