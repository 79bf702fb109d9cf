#include "dsl/layout/layout.h"

#include <algorithm>
#include <unordered_set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/status.h"
#include "dsl/layout/text_cursor.h"

namespace argus::layout {
namespace {

absl::Status CheckStrides(const IntTuple& stride) {
  for (int64_t d : stride.leaves()) {
    if (d > kMaxLayoutValue || d < -kMaxLayoutValue) {
      return absl::OutOfRangeError(absl::StrCat("stride ", d, " exceeds 2^62"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

Layout::Layout() : shape_(1), stride_(0), flat_{{1, 0, 1}} {}

absl::StatusOr<Layout> Layout::Create(IntTuple shape, IntTuple stride) {
  if (!shape.Congruent(stride)) {
    return absl::InvalidArgumentError(absl::StrCat("layout shape ", shape.ToString(),
                                                   " and stride ", stride.ToString(),
                                                   " are not congruent"));
  }
  RETURN_IF_ERROR(ValidateShape(shape));
  RETURN_IF_ERROR(CheckStrides(stride));
  std::vector<int64_t> s = shape.leaves();
  std::vector<int64_t> d = stride.leaves();
  Layout l;
  l.flat_.clear();
  l.flat_.reserve(s.size());
  int64_t size = 1;
  int64_t cosize = 1;
  for (size_t k = 0; k < s.size(); ++k) {
    l.flat_.push_back({s[k], d[k], size});
    int64_t extent;
    if (!CheckedMul(size, s[k], &size) || !CheckedMul(s[k] - 1, d[k] < 0 ? -d[k] : d[k], &extent) ||
        !CheckedAdd(cosize, extent, &cosize)) {
      return absl::OutOfRangeError(absl::StrCat("layout ", shape.ToString(), ":", stride.ToString(),
                                                " has a size or cosize above 2^62"));
    }
  }
  l.shape_ = std::move(shape);
  l.stride_ = std::move(stride);
  l.size_ = size;
  l.cosize_ = cosize;
  return l;
}

absl::StatusOr<Layout> Layout::Parse(std::string_view text) {
  internal::TextCursor cursor(text, "layout");
  ASSIGN_OR_RETURN(IntTuple shape, cursor.ParseIntTuple());
  if (!cursor.Consume(':')) return cursor.Expected("':'");
  int stride_col = cursor.column();
  ASSIGN_OR_RETURN(IntTuple stride, cursor.ParseIntTuple());
  RETURN_IF_ERROR(cursor.ExpectEnd());
  absl::StatusOr<Layout> l = Create(std::move(shape), std::move(stride));
  if (!l.ok()) return cursor.ErrorAt(stride_col, l.status().message());
  return l;
}

absl::StatusOr<Layout> Layout::ColMajor(const IntTuple& shape) {
  RETURN_IF_ERROR(ValidateShape(shape));
  return Create(shape, CompactColMajor(shape));
}

absl::StatusOr<Layout> Layout::RowMajor(const IntTuple& shape) {
  RETURN_IF_ERROR(ValidateShape(shape));
  return Create(shape, CompactRowMajor(shape));
}

std::vector<Layout> Layout::modes() const {
  if (is_leaf()) return {*this};
  std::vector<Layout> out;
  out.reserve(shape_.elems().size());
  for (size_t i = 0; i < shape_.elems().size(); ++i) {
    // A sublayout of a valid layout is valid.
    out.push_back(*Create(shape_.elems()[i], stride_.elems()[i]));
  }
  return out;
}

absl::StatusOr<Layout> Layout::mode(int i) const {
  if (i < 0 || i >= rank()) {
    return absl::OutOfRangeError(
        absl::StrCat("mode ", i, " of layout ", ToString(), " (rank ", rank(), ")"));
  }
  if (is_leaf()) return *this;
  return Create(shape_.elems()[i], stride_.elems()[i]);
}

absl::StatusOr<int64_t> Layout::At(int64_t index) const {
  if (index < 0 || index >= size_) {
    return absl::OutOfRangeError(
        absl::StrCat("index ", index, " is outside [0,", size_, ") of layout ", ToString()));
  }
  return (*this)(index);
}

absl::StatusOr<int64_t> Layout::Crd2Idx(const IntTuple& crd) const {
  return layout::Crd2Idx(crd, shape_, stride_);
}

absl::StatusOr<IntTuple> Layout::Idx2Crd(int64_t index) const {
  return layout::Idx2Crd(IntTuple(index), shape_);
}

std::string Layout::ToString() const {
  std::string out;
  shape_.AppendTo(&out);
  out.push_back(':');
  stride_.AppendTo(&out);
  return out;
}

absl::StatusOr<Layout> Concat(const std::vector<Layout>& modes) {
  std::vector<IntTuple> shapes, strides;
  shapes.reserve(modes.size());
  strides.reserve(modes.size());
  for (const Layout& m : modes) {
    shapes.push_back(m.shape());
    strides.push_back(m.stride());
  }
  return Layout::Create(IntTuple::Tuple(std::move(shapes)), IntTuple::Tuple(std::move(strides)));
}

absl::StatusOr<Layout> Append(const Layout& layout, const Layout& mode) {
  std::vector<Layout> m = layout.modes();
  m.push_back(mode);
  return Concat(m);
}

absl::StatusOr<Layout> Prepend(const Layout& layout, const Layout& mode) {
  std::vector<Layout> m = layout.modes();
  m.insert(m.begin(), mode);
  return Concat(m);
}

absl::StatusOr<Layout> PadToRank(const Layout& layout, int rank) {
  if (layout.rank() >= rank) return layout;
  std::vector<Layout> m = layout.modes();
  while (static_cast<int>(m.size()) < rank) m.push_back(Layout());
  return Concat(m);
}

Layout Flatten(const Layout& layout) {
  if (layout.depth() <= 1) return layout;
  std::vector<IntTuple> s, d;
  for (const FlatMode& m : layout.flat_modes()) {
    s.push_back(m.shape);
    d.push_back(m.stride);
  }
  return *Layout::Create(IntTuple::Tuple(std::move(s)), IntTuple::Tuple(std::move(d)));
}

bool FunctionallyEqual(const Layout& a, const Layout& b) {
  if (a.size() != b.size()) return false;
  for (int64_t i = 0; i < a.size(); ++i) {
    if (a(i) != b(i)) return false;
  }
  return true;
}

absl::StatusOr<bool> IsInjective(const Layout& layout, int64_t max_size) {
  if (layout.size() > max_size) {
    return absl::ResourceExhaustedError(absl::StrCat("IsInjective: layout ", layout.ToString(),
                                                     " has more than ", max_size, " elements"));
  }
  std::unordered_set<int64_t> seen;
  seen.reserve(static_cast<size_t>(layout.size()));
  for (int64_t i = 0; i < layout.size(); ++i) {
    if (!seen.insert(layout(i)).second) return false;
  }
  return true;
}

}  // namespace argus::layout
