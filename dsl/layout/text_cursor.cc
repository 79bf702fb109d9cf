#include "dsl/layout/text_cursor.h"

#include <cctype>
#include <vector>

#include "absl/strings/str_cat.h"

namespace argus::layout::internal {
namespace {

// Deep enough for any real layout, shallow enough to keep recursion safe.
constexpr int kMaxNesting = 64;

}  // namespace

void TextCursor::SkipSpace() {
  while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
}

bool TextCursor::AtEnd() {
  SkipSpace();
  return pos_ >= text_.size();
}

char TextCursor::Peek() {
  SkipSpace();
  return pos_ < text_.size() ? text_[pos_] : '\0';
}

bool TextCursor::Consume(char c) {
  if (Peek() != c || c == '\0') return false;
  ++pos_;
  return true;
}

bool TextCursor::ConsumeWord(std::string_view word) {
  SkipSpace();
  if (text_.substr(pos_, word.size()) != word) return false;
  pos_ += word.size();
  return true;
}

absl::Status TextCursor::ErrorAt(int col, absl::string_view message) const {
  return absl::InvalidArgumentError(absl::StrCat("cannot parse ", what_, " '", std::string(text_),
                                                 "' at column ", col, ": ", message));
}

absl::Status TextCursor::Expected(absl::string_view expected) {
  SkipSpace();
  std::string found = pos_ < text_.size()
                          ? absl::StrCat("'", std::string(text_.substr(pos_, 1)), "'")
                          : "end of input";
  return ErrorAt(column(), absl::StrCat("expected ", expected, ", found ", found));
}

absl::Status TextCursor::ExpectEnd() {
  if (AtEnd()) return absl::OkStatus();
  return Expected("end of input");
}

absl::StatusOr<int64_t> TextCursor::ParseInt() {
  SkipSpace();
  int start_col = column();
  bool negative = false;
  if (pos_ < text_.size() && text_[pos_] == '-') {
    negative = true;
    ++pos_;
  }
  if (pos_ < text_.size() && text_[pos_] == '_') ++pos_;
  if (pos_ >= text_.size() || !std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
    return Expected("an integer");
  }
  int64_t value = 0;
  while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
    value = value * 10 + (text_[pos_] - '0');
    if (value > kMaxLayoutValue) {
      return ErrorAt(start_col, absl::StrCat("integer is larger than 2^62"));
    }
    ++pos_;
  }
  return negative ? -value : value;
}

absl::StatusOr<IntTuple> TextCursor::ParseIntTuple() {
  char c = Peek();
  if (c != '(') {
    if (c == '-' || c == '_' || std::isdigit(static_cast<unsigned char>(c))) return ParseInt();
    return Expected("an integer or '('");
  }
  if (nesting_ >= kMaxNesting) return ErrorAt(column(), "tuples nested too deeply");
  ++pos_;
  ++nesting_;
  std::vector<IntTuple> elems;
  if (!Consume(')')) {
    while (true) {
      absl::StatusOr<IntTuple> elem = ParseIntTuple();
      if (!elem.ok()) return elem.status();
      elems.push_back(*std::move(elem));
      if (Consume(')')) break;
      if (!Consume(',')) return Expected("',' or ')'");
    }
  }
  --nesting_;
  return IntTuple::Tuple(std::move(elems));
}

}  // namespace argus::layout::internal
