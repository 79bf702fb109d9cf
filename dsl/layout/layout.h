// dsl/layout/layout.h: CuTe layouts, shape:stride functions from coordinates
// to offsets.
//
// A Layout pairs two congruent IntTuples, a shape (every leaf >= 1) and a
// stride (any int64, negative and zero allowed), written `(2,(1,6)):(1,(6,2))`
// or `12:1`. It maps a coordinate to the offset sum(c_k * d_k) over its leaves;
// a 1-D index is first split colexicographically (leftmost leaf fastest).
// Sizes, cosizes and strides are kept below 2^62 (checked at creation), so the
// arithmetic inside a valid layout never overflows.
//
// For the verifier: flat_modes() exposes the layout as a sum of per-mode
// terms. For a 1-D index i in [0, size()):
//
//   L(i) = sum_k ((i / m_k.divisor) % m_k.shape) * m_k.stride
//
// where m_k runs over flat_modes() (the leaves, left to right) and divisor is
// the product of the shapes before it. Over Z3 integers that is one div, one
// mod and one multiply per mode; shapes of 1 contribute nothing (they are
// kept so that flat_modes() matches the leaves of shape()). Over bit-vectors
// of a power-of-two shape the div/mod are an extract. For i >= size() the
// last mode is not reduced (CuTe's "the last mode extends" rule), which
// operator() also follows; at() rejects such indices.
//
// Thread safety: Layout is an immutable value type after construction; any
// number of threads may use one concurrently.
#ifndef ARGUS_DSL_LAYOUT_LAYOUT_H_
#define ARGUS_DSL_LAYOUT_LAYOUT_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "dsl/layout/int_tuple.h"

namespace argus::layout {

// One leaf of a layout, with the divisor that extracts its coordinate from a
// 1-D index: coordinate = (i / divisor) % shape.
struct FlatMode {
  int64_t shape;
  int64_t stride;
  int64_t divisor;
  friend bool operator==(const FlatMode&, const FlatMode&) = default;
};

class Layout {
 public:
  // The trivial layout `1:0`.
  Layout();

  // Checks that shape and stride are congruent, shapes are >= 1 and size,
  // cosize and strides stay below 2^62.
  static absl::StatusOr<Layout> Create(IntTuple shape, IntTuple stride);
  // Parses `shape:stride` in CuTe notation; errors carry the column.
  static absl::StatusOr<Layout> Parse(std::string_view text);
  // Compact column-major (CuTe's default make_layout(shape)) and row-major
  // layouts of `shape`.
  static absl::StatusOr<Layout> ColMajor(const IntTuple& shape);
  static absl::StatusOr<Layout> RowMajor(const IntTuple& shape);

  const IntTuple& shape() const { return shape_; }
  const IntTuple& stride() const { return stride_; }
  int rank() const { return shape_.rank(); }
  int depth() const { return shape_.depth(); }
  // Number of coordinates: the product of the shape.
  int64_t size() const { return size_; }
  // One past the largest |offset|: 1 + sum((s_k - 1) * |d_k|).
  int64_t cosize() const { return cosize_; }
  // True if the shape is an integer (a rank-1, depth-0 layout).
  bool is_leaf() const { return shape_.is_leaf(); }

  // Top-level modes (sublayouts); a leaf layout's only mode is itself.
  std::vector<Layout> modes() const;
  // Mode i, or an error if i is out of range.
  absl::StatusOr<Layout> mode(int i) const;

  // L(i) for a 1-D index. Exact for 0 <= i < size(); beyond, the last mode
  // extends (CuTe semantics); wraps rather than traps on overflow. Fast path
  // for callers that have checked their range.
  int64_t operator()(int64_t index) const {
    uint64_t off = 0;
    const size_t n = flat_.size();
    for (size_t k = 0; k < n; ++k) {
      int64_t c = index / flat_[k].divisor;
      if (k + 1 < n) c %= flat_[k].shape;
      off += static_cast<uint64_t>(c) * static_cast<uint64_t>(flat_[k].stride);
    }
    return static_cast<int64_t>(off);
  }
  // L(i), or an error unless 0 <= i < size().
  absl::StatusOr<int64_t> At(int64_t index) const;
  // L(crd) for a natural, compatible or 1-D coordinate (range-checked).
  absl::StatusOr<int64_t> Crd2Idx(const IntTuple& crd) const;
  // The natural coordinate of 1-D index i (colexicographic), range-checked.
  absl::StatusOr<IntTuple> Idx2Crd(int64_t index) const;

  // The leaves with their divisors; see the file comment.
  const std::vector<FlatMode>& flat_modes() const { return flat_; }

  // CuTe notation; Parse(ToString()) gives back an equal layout.
  std::string ToString() const;

  // Structural equality (same shape and stride tuples).
  friend bool operator==(const Layout& a, const Layout& b) {
    return a.shape_ == b.shape_ && a.stride_ == b.stride_;
  }
  friend bool operator!=(const Layout& a, const Layout& b) { return !(a == b); }

 private:
  IntTuple shape_;
  IntTuple stride_;
  int64_t size_ = 1;
  int64_t cosize_ = 1;
  std::vector<FlatMode> flat_;
};

// make_layout(L0, L1, ...): the layout whose top-level modes are the given
// layouts, shape (shape(L0), shape(L1), ...). Errors only on overflow.
absl::StatusOr<Layout> Concat(const std::vector<Layout>& modes);
// (modes of layout..., mode) and (mode, modes of layout...). A leaf layout
// counts as one mode.
absl::StatusOr<Layout> Append(const Layout& layout, const Layout& mode);
absl::StatusOr<Layout> Prepend(const Layout& layout, const Layout& mode);
// Appends `1:0` modes until rank() >= rank (CuTe's append<R>).
absl::StatusOr<Layout> PadToRank(const Layout& layout, int rank);
// The same function with all leaves as top-level modes (depth <= 1).
Layout Flatten(const Layout& layout);

// Same function on [0, size()) (compares all images; for tests and checks of
// small layouts). Also requires equal sizes.
bool FunctionallyEqual(const Layout& a, const Layout& b);
// True if L is one-to-one on [0, size()). Exact; O(size) time and memory up
// to `max_size` elements, beyond which it returns an error.
absl::StatusOr<bool> IsInjective(const Layout& layout, int64_t max_size = int64_t{1} << 24);

}  // namespace argus::layout

#endif  // ARGUS_DSL_LAYOUT_LAYOUT_H_
