#include "dsl/layout/swizzle.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/status.h"
#include "dsl/layout/text_cursor.h"

namespace argus::layout {
namespace {

absl::StatusOr<Swizzle> ParseSwizzle(internal::TextCursor* cursor) {
  int col = cursor->column();
  if (!cursor->ConsumeWord("Sw")) return cursor->Expected("'Sw<B,M,S>'");
  if (!cursor->Consume('<')) return cursor->Expected("'<'");
  int64_t v[3];
  for (int i = 0; i < 3; ++i) {
    if (i > 0 && !cursor->Consume(',')) return cursor->Expected("','");
    ASSIGN_OR_RETURN(v[i], cursor->ParseInt());
    if (v[i] > 64 || v[i] < -64) return cursor->ErrorAt(col, "swizzle parameter out of range");
  }
  if (!cursor->Consume('>')) return cursor->Expected("'>'");
  absl::StatusOr<Swizzle> sw =
      Swizzle::Create(static_cast<int>(v[0]), static_cast<int>(v[1]), static_cast<int>(v[2]));
  if (!sw.ok()) return cursor->ErrorAt(col, sw.status().message());
  return sw;
}

}  // namespace

absl::StatusOr<Swizzle> Swizzle::Create(int bits, int base, int shift) {
  const int abs_shift = shift < 0 ? -shift : shift;
  if (bits < 0 || base < 0 || abs_shift < bits || bits + base + abs_shift > 62) {
    return absl::InvalidArgumentError(
        absl::StrCat("Swizzle<", bits, ",", base, ",", shift,
                     "> needs B >= 0, M >= 0, |S| >= B and B + M + |S| <= 62"));
  }
  Swizzle s;
  s.bits_ = bits;
  s.base_ = base;
  s.shift_ = shift;
  const int64_t bit_mask = (int64_t{1} << bits) - 1;
  s.yyy_mask_ = bit_mask << (base + std::max(0, shift));
  s.zzz_mask_ = bit_mask << (base - std::min(0, shift));
  return s;
}

absl::StatusOr<Swizzle> Swizzle::Parse(std::string_view text) {
  internal::TextCursor cursor(text, "swizzle");
  ASSIGN_OR_RETURN(Swizzle sw, ParseSwizzle(&cursor));
  RETURN_IF_ERROR(cursor.ExpectEnd());
  return sw;
}

std::string Swizzle::ToString() const {
  return absl::StrCat("Sw<", bits_, ",", base_, ",", shift_, ">");
}

absl::StatusOr<SwizzledLayout> SwizzledLayout::Create(Swizzle swizzle, Layout layout,
                                                      int64_t offset) {
  int64_t end;
  if (offset < 0 || !CheckedAdd(offset, layout.cosize(), &end)) {
    return absl::InvalidArgumentError(absl::StrCat("swizzled layout offset ", offset,
                                                   " must be >= 0 and keep offset + cosize(",
                                                   layout.ToString(), ") below 2^62"));
  }
  SwizzledLayout s;
  s.swizzle_ = swizzle;
  s.layout_ = std::move(layout);
  s.offset_ = offset;
  return s;
}

absl::StatusOr<SwizzledLayout> SwizzledLayout::Parse(std::string_view text) {
  internal::TextCursor cursor(text, "swizzled layout");
  ASSIGN_OR_RETURN(Swizzle sw, ParseSwizzle(&cursor));
  if (!cursor.Consume('o')) return cursor.Expected("'o'");
  int col = cursor.column();
  ASSIGN_OR_RETURN(IntTuple first, cursor.ParseIntTuple());
  int64_t offset = 0;
  if (cursor.Consume('o')) {
    if (!first.is_leaf()) return cursor.ErrorAt(col, "the offset must be an integer");
    offset = first.value();
    col = cursor.column();
    ASSIGN_OR_RETURN(first, cursor.ParseIntTuple());
  }
  if (!cursor.Consume(':')) return cursor.Expected("':'");
  ASSIGN_OR_RETURN(IntTuple stride, cursor.ParseIntTuple());
  RETURN_IF_ERROR(cursor.ExpectEnd());
  absl::StatusOr<Layout> l = Layout::Create(std::move(first), std::move(stride));
  if (!l.ok()) return cursor.ErrorAt(col, l.status().message());
  absl::StatusOr<SwizzledLayout> s = Create(sw, *std::move(l), offset);
  if (!s.ok()) return cursor.ErrorAt(col, s.status().message());
  return s;
}

absl::StatusOr<int64_t> SwizzledLayout::At(int64_t index) const {
  ASSIGN_OR_RETURN(int64_t off, layout_.At(index));
  return swizzle_(offset_ + off);
}

absl::StatusOr<int64_t> SwizzledLayout::Crd2Idx(const IntTuple& crd) const {
  ASSIGN_OR_RETURN(int64_t off, layout_.Crd2Idx(crd));
  return swizzle_(offset_ + off);
}

std::string SwizzledLayout::ToString() const {
  return absl::StrCat(swizzle_.ToString(), " o ", offset_, " o ", layout_.ToString());
}

absl::StatusOr<SwizzledLayout> Composition(const SwizzledLayout& a, const Tiler& b) {
  ASSIGN_OR_RETURN(Layout inner, Composition(a.layout(), b));
  return SwizzledLayout::Create(a.swizzle(), std::move(inner), a.offset());
}

absl::StatusOr<SwizzledLayout> LogicalDivide(const SwizzledLayout& a, const Tiler& b) {
  ASSIGN_OR_RETURN(Layout inner, LogicalDivide(a.layout(), b));
  return SwizzledLayout::Create(a.swizzle(), std::move(inner), a.offset());
}

absl::StatusOr<SwizzledLayout> ZippedDivide(const SwizzledLayout& a, const Tiler& b) {
  ASSIGN_OR_RETURN(Layout inner, ZippedDivide(a.layout(), b));
  return SwizzledLayout::Create(a.swizzle(), std::move(inner), a.offset());
}

}  // namespace argus::layout
