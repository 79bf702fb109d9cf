#include "dsl/layout/int_tuple.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "base/status.h"
#include "dsl/layout/text_cursor.h"

namespace argus::layout {

bool CheckedMul(int64_t a, int64_t b, int64_t* out) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) return false;
  if (r > kMaxLayoutValue || r < -kMaxLayoutValue) return false;
  *out = r;
  return true;
}

bool CheckedAdd(int64_t a, int64_t b, int64_t* out) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) return false;
  if (r > kMaxLayoutValue || r < -kMaxLayoutValue) return false;
  *out = r;
  return true;
}

IntTuple IntTuple::Tuple(std::vector<IntTuple> elems) {
  IntTuple t;
  t.elems_ = std::move(elems);
  return t;
}

absl::StatusOr<IntTuple> IntTuple::Parse(std::string_view text) {
  internal::TextCursor cursor(text, "int tuple");
  ASSIGN_OR_RETURN(IntTuple t, cursor.ParseIntTuple());
  RETURN_IF_ERROR(cursor.ExpectEnd());
  return t;
}

int IntTuple::depth() const {
  if (leaf_) return 0;
  int d = 0;
  for (const IntTuple& e : elems_) d = std::max(d, e.depth());
  return d + 1;
}

int64_t IntTuple::product() const {
  if (leaf_) return value_;
  int64_t p = 1;
  for (const IntTuple& e : elems_) {
    if (!CheckedMul(p, e.product(), &p)) return kMaxLayoutValue;
  }
  return p;
}

int64_t IntTuple::sum() const {
  if (leaf_) return value_;
  int64_t s = 0;
  for (const IntTuple& e : elems_) s += e.sum();
  return s;
}

void IntTuple::AppendLeaves(std::vector<int64_t>* out) const {
  if (leaf_) {
    out->push_back(value_);
    return;
  }
  for (const IntTuple& e : elems_) e.AppendLeaves(out);
}

std::vector<int64_t> IntTuple::leaves() const {
  std::vector<int64_t> out;
  AppendLeaves(&out);
  return out;
}

bool IntTuple::Congruent(const IntTuple& other) const {
  if (leaf_ != other.leaf_) return false;
  if (leaf_) return true;
  if (elems_.size() != other.elems_.size()) return false;
  for (size_t i = 0; i < elems_.size(); ++i) {
    if (!elems_[i].Congruent(other.elems_[i])) return false;
  }
  return true;
}

void IntTuple::AppendTo(std::string* out) const {
  if (leaf_) {
    absl::StrAppend(out, value_);
    return;
  }
  out->push_back('(');
  for (size_t i = 0; i < elems_.size(); ++i) {
    if (i > 0) out->push_back(',');
    elems_[i].AppendTo(out);
  }
  out->push_back(')');
}

std::string IntTuple::ToString() const {
  std::string out;
  AppendTo(&out);
  return out;
}

absl::StatusOr<int64_t> ProductChecked(const IntTuple& t) {
  if (t.is_leaf()) return t.value();
  int64_t p = 1;
  for (const IntTuple& e : t.elems()) {
    ASSIGN_OR_RETURN(int64_t pe, ProductChecked(e));
    if (!CheckedMul(p, pe, &p)) {
      return absl::OutOfRangeError(absl::StrCat("product of ", t.ToString(), " exceeds 2^62"));
    }
  }
  return p;
}

namespace {

// Leaf strides in order; `running` carries the product so far (saturating:
// callers validate sizes before trusting strides of huge shapes).
IntTuple ColMajorImpl(const IntTuple& shape, int64_t* running) {
  if (shape.is_leaf()) {
    IntTuple s = *running;
    if (!CheckedMul(*running, shape.value(), running)) *running = kMaxLayoutValue;
    return s;
  }
  std::vector<IntTuple> elems;
  elems.reserve(shape.elems().size());
  for (const IntTuple& e : shape.elems()) elems.push_back(ColMajorImpl(e, running));
  return IntTuple::Tuple(std::move(elems));
}

IntTuple RowMajorImpl(const IntTuple& shape, int64_t* running) {
  if (shape.is_leaf()) {
    IntTuple s = *running;
    if (!CheckedMul(*running, shape.value(), running)) *running = kMaxLayoutValue;
    return s;
  }
  std::vector<IntTuple> elems(shape.elems().size());
  for (size_t i = elems.size(); i-- > 0;) elems[i] = RowMajorImpl(shape.elems()[i], running);
  return IntTuple::Tuple(std::move(elems));
}

absl::Status CoordError(const IntTuple& crd, const IntTuple& shape, const std::string& why) {
  return absl::InvalidArgumentError(absl::StrCat(
      "coordinate ", crd.ToString(), " does not fit shape ", shape.ToString(), ": ", why));
}

// Shared walker for Idx2Crd / Crd2Idx: visits each leaf of `shape` with its
// leaf coordinate. `stride` may be null (then offsets are not computed).
absl::Status Walk(const IntTuple& crd, const IntTuple& shape, const IntTuple* stride,
                  IntTuple* natural, int64_t* offset) {
  if (crd.is_tuple()) {
    if (shape.is_leaf() || crd.rank() != shape.rank()) {
      return CoordError(crd, shape, "ranks differ");
    }
    std::vector<IntTuple> elems(crd.elems().size());
    for (size_t i = 0; i < elems.size(); ++i) {
      RETURN_IF_ERROR(Walk(crd.elems()[i], shape.elems()[i], stride ? &stride->elems()[i] : nullptr,
                           &elems[i], offset));
    }
    *natural = IntTuple::Tuple(std::move(elems));
    return absl::OkStatus();
  }
  int64_t c = crd.value();
  ASSIGN_OR_RETURN(int64_t size, ProductChecked(shape));
  if (c < 0 || c >= size) {
    return CoordError(crd, shape, absl::StrCat("index ", c, " is outside [0,", size, ")"));
  }
  if (shape.is_leaf()) {
    *natural = c;
    if (stride) {
      int64_t term;
      if (!CheckedMul(c, stride->value(), &term) || !CheckedAdd(*offset, term, offset)) {
        return absl::OutOfRangeError(absl::StrCat("offset of ", crd.ToString(), " overflows 2^62"));
      }
    }
    return absl::OkStatus();
  }
  std::vector<IntTuple> elems(shape.elems().size());
  for (size_t i = 0; i < elems.size(); ++i) {
    int64_t sub = shape.elems()[i].product();
    int64_t ci = i + 1 == elems.size() ? c : c % sub;
    c = i + 1 == elems.size() ? 0 : c / sub;
    RETURN_IF_ERROR(Walk(IntTuple(ci), shape.elems()[i], stride ? &stride->elems()[i] : nullptr,
                         &elems[i], offset));
  }
  *natural = IntTuple::Tuple(std::move(elems));
  return absl::OkStatus();
}

}  // namespace

IntTuple CompactColMajor(const IntTuple& shape) {
  int64_t running = 1;
  return ColMajorImpl(shape, &running);
}

IntTuple CompactRowMajor(const IntTuple& shape) {
  int64_t running = 1;
  return RowMajorImpl(shape, &running);
}

absl::Status ValidateShape(const IntTuple& shape) {
  if (shape.is_leaf()) {
    if (shape.value() < 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("shape entries must be positive, found ", shape.value()));
    }
    return absl::OkStatus();
  }
  for (const IntTuple& e : shape.elems()) RETURN_IF_ERROR(ValidateShape(e));
  return ProductChecked(shape).status();
}

absl::StatusOr<IntTuple> Idx2Crd(const IntTuple& crd, const IntTuple& shape) {
  RETURN_IF_ERROR(ValidateShape(shape));
  IntTuple natural;
  int64_t unused = 0;
  RETURN_IF_ERROR(Walk(crd, shape, nullptr, &natural, &unused));
  return natural;
}

absl::StatusOr<int64_t> Crd2Idx(const IntTuple& crd, const IntTuple& shape,
                                const IntTuple& stride) {
  if (!shape.Congruent(stride)) {
    return absl::InvalidArgumentError(absl::StrCat("shape ", shape.ToString(), " and stride ",
                                                   stride.ToString(), " are not congruent"));
  }
  RETURN_IF_ERROR(ValidateShape(shape));
  IntTuple natural;
  int64_t offset = 0;
  RETURN_IF_ERROR(Walk(crd, shape, &stride, &natural, &offset));
  return offset;
}

absl::StatusOr<int64_t> Crd2Flat(const IntTuple& crd, const IntTuple& shape) {
  RETURN_IF_ERROR(ValidateShape(shape));
  return Crd2Idx(crd, shape, CompactColMajor(shape));
}

}  // namespace argus::layout
