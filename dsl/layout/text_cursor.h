// dsl/layout/text_cursor.h: the small recursive-descent reader behind the
// CuTe-notation parsers of IntTuple, Layout, Tiler and SwizzledLayout.
//
// Internal to dsl/layout. Errors are InvalidArgument statuses of the form
// "<what> at column N: expected X, found 'Y'" (columns are 1-based).
//
// Thread safety: a TextCursor is used by one thread; it does not own the text.
#ifndef ARGUS_DSL_LAYOUT_TEXT_CURSOR_H_
#define ARGUS_DSL_LAYOUT_TEXT_CURSOR_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "dsl/layout/int_tuple.h"

namespace argus::layout::internal {

class TextCursor {
 public:
  // `what` names the thing being parsed in error messages ("layout").
  TextCursor(std::string_view text, std::string_view what) : text_(text), what_(what) {}

  void SkipSpace();
  // True if only whitespace remains.
  bool AtEnd();
  // Next non-space character, or '\0' at the end.
  char Peek();
  // Skips space; consumes `c` if it is next.
  bool Consume(char c);
  // Skips space; consumes `word` if it is next.
  bool ConsumeWord(std::string_view word);
  // 1-based column of the next unread character.
  int column() const { return static_cast<int>(pos_) + 1; }
  size_t pos() const { return pos_; }

  // An error at the current position: "expected <expected>, found ...".
  absl::Status Expected(absl::string_view expected);
  // An error at column `col` with a free-form message.
  absl::Status ErrorAt(int col, absl::string_view message) const;
  // Fails unless only whitespace remains.
  absl::Status ExpectEnd();

  // integer := ['-'] ['_'] digits   (checked against kMaxLayoutValue)
  absl::StatusOr<int64_t> ParseInt();
  // int_tuple := integer | '(' [int_tuple {',' int_tuple}] ')'
  absl::StatusOr<IntTuple> ParseIntTuple();

 private:
  std::string_view text_;
  std::string what_;
  size_t pos_ = 0;
  int nesting_ = 0;
};

}  // namespace argus::layout::internal

#endif  // ARGUS_DSL_LAYOUT_TEXT_CURSOR_H_
