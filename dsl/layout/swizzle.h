// dsl/layout/swizzle.h: CuTe's Swizzle<B,M,S> and swizzled layouts
// (CuTe's ComposedLayout<Swizzle, offset, Layout>), the shared-memory layouts
// that avoid bank conflicts.
//
// Swizzle<B,M,S> xors B bits of an offset into B other bits:
//   yyy_mask = ((1 << B) - 1) << (M + max(0, S))
//   zzz_mask = ((1 << B) - 1) << (M - min(0, S))
//   sw(x)    = x ^ ((x & yyy_mask) >> S)    for S >= 0
//            = x ^ ((x & yyy_mask) << -S)   for S < 0
// With |S| >= B the two masks are disjoint, so sw is an involution and a
// bijection on every aligned block of 2^(B+M+|S|) offsets (and on all of
// int64 for non-negative x).
//
// A SwizzledLayout evaluates sw(offset + L(i)). For the verifier, a swizzle is
// three bit-vector operations on the (non-negative) offset x:
//   bvxor(x, bvlshr(bvand(x, yyy_mask), S))   (bvshl by -S when S < 0)
// applied after the layout's per-mode div/mod terms (see layout.h); the
// accessors below give yyy_mask and S directly.
//
// Thread safety: immutable value types; safe to share between threads.
#ifndef ARGUS_DSL_LAYOUT_SWIZZLE_H_
#define ARGUS_DSL_LAYOUT_SWIZZLE_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "dsl/layout/layout.h"
#include "dsl/layout/layout_algebra.h"

namespace argus::layout {

class Swizzle {
 public:
  // The identity swizzle Sw<0,0,0>.
  Swizzle() = default;
  // Checks B >= 0, M >= 0, |S| >= B and B + M + |S| <= 62.
  static absl::StatusOr<Swizzle> Create(int bits, int base, int shift);
  // Parses `Sw<B,M,S>`.
  static absl::StatusOr<Swizzle> Parse(std::string_view text);

  int bits() const { return bits_; }
  int base() const { return base_; }
  int shift() const { return shift_; }
  int64_t yyy_mask() const { return yyy_mask_; }
  int64_t zzz_mask() const { return zzz_mask_; }
  // 2^(B+M+|S|): the swizzle permutes each aligned block of this many offsets.
  int64_t period() const { return int64_t{1} << (bits_ + base_ + (shift_ < 0 ? -shift_ : shift_)); }

  int64_t operator()(int64_t x) const {
    return shift_ >= 0 ? x ^ ((x & yyy_mask_) >> shift_) : x ^ ((x & yyy_mask_) << -shift_);
  }

  // `Sw<B,M,S>`.
  std::string ToString() const;
  friend bool operator==(const Swizzle& a, const Swizzle& b) {
    return a.bits_ == b.bits_ && a.base_ == b.base_ && a.shift_ == b.shift_;
  }

 private:
  int bits_ = 0;
  int base_ = 0;
  int shift_ = 0;
  int64_t yyy_mask_ = 0;
  int64_t zzz_mask_ = 0;
};

// sw o (offset + layout).
class SwizzledLayout {
 public:
  SwizzledLayout() = default;
  // Checks that offset >= 0 and offset + cosize(layout) stays below 2^62.
  static absl::StatusOr<SwizzledLayout> Create(Swizzle swizzle, Layout layout, int64_t offset = 0);
  // Parses `Sw<B,M,S> o layout` or `Sw<B,M,S> o offset o layout` (CuTe's
  // print format).
  static absl::StatusOr<SwizzledLayout> Parse(std::string_view text);

  const Swizzle& swizzle() const { return swizzle_; }
  const Layout& layout() const { return layout_; }
  int64_t offset() const { return offset_; }
  int64_t size() const { return layout_.size(); }

  // sw(offset + L(i)) for a 1-D index; unchecked like Layout::operator().
  int64_t operator()(int64_t index) const { return swizzle_(offset_ + layout_(index)); }
  // Range-checked evaluation at a 1-D index or a coordinate.
  absl::StatusOr<int64_t> At(int64_t index) const;
  absl::StatusOr<int64_t> Crd2Idx(const IntTuple& crd) const;

  // `Sw<B,M,S> o offset o shape:stride`; Parse(ToString()) round-trips.
  std::string ToString() const;

 private:
  Swizzle swizzle_;
  Layout layout_;
  int64_t offset_ = 0;
};

// Tiling a swizzled layout acts on its inner layout, as for CuTe's
// ComposedLayout: (sw o off o L) o B = sw o off o (L o B), and likewise for
// the divides. Errors as the layout versions.
absl::StatusOr<SwizzledLayout> Composition(const SwizzledLayout& a, const Tiler& b);
absl::StatusOr<SwizzledLayout> LogicalDivide(const SwizzledLayout& a, const Tiler& b);
absl::StatusOr<SwizzledLayout> ZippedDivide(const SwizzledLayout& a, const Tiler& b);

}  // namespace argus::layout

#endif  // ARGUS_DSL_LAYOUT_SWIZZLE_H_
