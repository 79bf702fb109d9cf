// dsl/layout/int_tuple.h: hierarchical integer tuples, CuTe's IntTuple.
//
// An IntTuple is either an integer (a leaf) or a tuple of IntTuples, e.g.
// `(2,(1,6))`. Shapes, strides and coordinates of layouts are IntTuples.
// This file also holds the shape-only coordinate maps: colexicographic
// idx2crd / crd2idx, compact column-/row-major strides, and the CuTe notation
// parser and printer (`12`, `()`, `(4)`, `(2,(1,6))`; a leading `_` on an
// integer, as CuTe prints static integers, is accepted and dropped).
//
// All integers are int64_t. Functions that can meet bad input return
// absl::Status / absl::StatusOr with a message naming the offending value;
// nothing here asserts or throws.
//
// Thread safety: IntTuple is a value type; const methods may be called
// concurrently, mutation needs external synchronization. Free functions are
// pure.
#ifndef ARGUS_DSL_LAYOUT_INT_TUPLE_H_
#define ARGUS_DSL_LAYOUT_INT_TUPLE_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"

namespace argus::layout {

// Largest magnitude any size, cosize, stride or offset may take. Keeping all
// values below 2^62 lets sums of two of them stay inside int64_t.
inline constexpr int64_t kMaxLayoutValue = int64_t{1} << 62;

class IntTuple {
 public:
  // The empty tuple `()`.
  IntTuple() = default;
  // A leaf. Implicit so that `IntTuple t = 4;` and `Tuple({2, 3})` read well.
  IntTuple(int64_t value) : leaf_(true), value_(value) {}  // NOLINT
  // A tuple of the given elements (possibly empty, possibly a 1-tuple).
  static IntTuple Tuple(std::vector<IntTuple> elems);

  // Parses CuTe notation; errors carry the 1-based column.
  static absl::StatusOr<IntTuple> Parse(std::string_view text);

  bool is_leaf() const { return leaf_; }
  bool is_tuple() const { return !leaf_; }
  // The leaf's value (0 for a tuple).
  int64_t value() const { return value_; }
  // The tuple's elements (empty for a leaf).
  const std::vector<IntTuple>& elems() const { return elems_; }

  // CuTe rank: 1 for a leaf, the number of elements for a tuple.
  int rank() const { return leaf_ ? 1 : static_cast<int>(elems_.size()); }
  // CuTe depth: 0 for a leaf, 1 + the deepest element for a tuple.
  int depth() const;
  // Element i of a tuple; a leaf's element 0 is itself. Precondition:
  // 0 <= i < rank().
  const IntTuple& operator[](int i) const { return leaf_ ? *this : elems_[i]; }

  // Product of all leaves (1 for the empty tuple). Saturates at
  // kMaxLayoutValue; see ProductChecked for an exact answer or an error.
  int64_t product() const;
  // Sum of all leaves.
  int64_t sum() const;
  // The leaves in order (depth-first, left to right).
  std::vector<int64_t> leaves() const;
  void AppendLeaves(std::vector<int64_t>* out) const;
  // Same nesting structure (leaves match leaves, tuples of equal rank).
  bool Congruent(const IntTuple& other) const;

  // CuTe notation; Parse(ToString()) gives back an equal tuple.
  std::string ToString() const;
  void AppendTo(std::string* out) const;

  friend bool operator==(const IntTuple& a, const IntTuple& b) {
    return a.leaf_ == b.leaf_ && a.value_ == b.value_ && a.elems_ == b.elems_;
  }
  friend bool operator!=(const IntTuple& a, const IntTuple& b) { return !(a == b); }

 private:
  bool leaf_ = false;
  int64_t value_ = 0;
  std::vector<IntTuple> elems_;
};

// Convenience: Tuple({2, Tuple({1, 6})}) is `(2,(1,6))`.
inline IntTuple Tuple(std::vector<IntTuple> elems) { return IntTuple::Tuple(std::move(elems)); }

// Product of all leaves, or an error if it exceeds kMaxLayoutValue.
absl::StatusOr<int64_t> ProductChecked(const IntTuple& t);

// OK if every leaf of `shape` is >= 1 and the product fits in 2^62.
absl::Status ValidateShape(const IntTuple& shape);

// Compact column-major (CuTe LayoutLeft) strides: leaf k's stride is the
// product of the leaves before it. Same nesting as `shape`.
IntTuple CompactColMajor(const IntTuple& shape);
// Compact row-major (CuTe LayoutRight) strides: leaf k's stride is the
// product of the leaves after it.
IntTuple CompactRowMajor(const IntTuple& shape);

// idx2crd: the natural (shape-congruent) coordinate of `crd`, which may be a
// 1-D index or any coordinate compatible with `shape` (e.g. (1,5) for shape
// (3,(2,3)) gives (1,(1,2))). An integer is split colexicographically (the
// leftmost mode varies fastest). Errors if a value is out of range or the
// nesting does not fit.
absl::StatusOr<IntTuple> Idx2Crd(const IntTuple& crd, const IntTuple& shape);

// crd2idx: the offset of coordinate `crd` (natural, compatible, or a 1-D
// index) under shape:stride. Errors as Idx2Crd.
absl::StatusOr<int64_t> Crd2Idx(const IntTuple& crd, const IntTuple& shape, const IntTuple& stride);

// The colexicographic 1-D index of `crd` in `shape` (crd2idx with compact
// column-major strides).
absl::StatusOr<int64_t> Crd2Flat(const IntTuple& crd, const IntTuple& shape);

// Checked int64 arithmetic: false on overflow or when the magnitude of the
// result exceeds kMaxLayoutValue.
bool CheckedMul(int64_t a, int64_t b, int64_t* out);
bool CheckedAdd(int64_t a, int64_t b, int64_t* out);

}  // namespace argus::layout

#endif  // ARGUS_DSL_LAYOUT_INT_TUPLE_H_
