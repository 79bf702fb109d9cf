#include "dsl/lexer.h"

#include <cctype>
#include <cerrno>
#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "base/status.h"

namespace argus::dsl {

const char* TokName(Tok t) {
  switch (t) {
    case Tok::kName:
      return "name";
    case Tok::kInt:
      return "integer";
    case Tok::kFloat:
      return "float";
    case Tok::kString:
      return "string";
    case Tok::kOp:
      return "operator";
    case Tok::kNewline:
      return "end of line";
    case Tok::kIndent:
      return "indent";
    case Tok::kDedent:
      return "dedent";
    case Tok::kEof:
      return "end of file";
  }
  return "?";
}

namespace {

constexpr size_t kMaxSource = 1 << 20;

class Lexer {
 public:
  explicit Lexer(const SourceFile& src) : src_(src), s_(src.text()) {}

  absl::StatusOr<std::vector<Token>> Run() {
    if (s_.size() > kMaxSource) {
      return ErrorAt(src_, {1, 1}, "source is larger than 1 MiB", "split the file");
    }
    indents_.push_back(0);
    bool at_line_start = true;
    while (true) {
      if (at_line_start && depth_ == 0) {
        // Measure indentation; skip blank and comment-only lines.
        int width = 0;
        size_t p = i_;
        while (p < s_.size() && (s_[p] == ' ' || s_[p] == '\t' || s_[p] == '\f')) {
          width = s_[p] == '\t' ? (width / 8 + 1) * 8 : width + 1;
          ++p;
        }
        if (p >= s_.size()) {
          i_ = p;
          break;
        }
        if (s_[p] == '#' || s_[p] == '\n' || s_[p] == '\r') {
          while (p < s_.size() && s_[p] != '\n') ++p;
          i_ = p;
          if (i_ < s_.size()) {
            ++i_;
            ++line_;
            line_start_ = i_;
          }
          continue;
        }
        i_ = p;
        Loc loc = Here();
        if (width > indents_.back()) {
          indents_.push_back(width);
          Push(Tok::kIndent, "", loc);
        } else {
          while (width < indents_.back()) {
            indents_.pop_back();
            Push(Tok::kDedent, "", loc);
          }
          if (width != indents_.back()) {
            return ErrorAt(src_, loc, "unindent does not match any outer indentation level",
                           "indent blocks consistently (4 spaces)");
          }
        }
        at_line_start = false;
      }
      if (i_ >= s_.size()) break;
      char c = s_[i_];
      if (c == ' ' || c == '\t' || c == '\f' || c == '\r') {
        ++i_;
        continue;
      }
      if (c == '#') {
        while (i_ < s_.size() && s_[i_] != '\n') ++i_;
        continue;
      }
      if (c == '\\') {
        size_t p = i_ + 1;
        if (p < s_.size() && s_[p] == '\r') ++p;
        if (p < s_.size() && s_[p] == '\n') {
          i_ = p + 1;
          ++line_;
          line_start_ = i_;
          continue;
        }
        return ErrorAt(src_, Here(), "stray '\\'", "a backslash may only end a line");
      }
      if (c == '\n') {
        if (depth_ == 0 && !toks_.empty() && toks_.back().kind != Tok::kNewline &&
            toks_.back().kind != Tok::kIndent && toks_.back().kind != Tok::kDedent) {
          Push(Tok::kNewline, "", Here());
        }
        ++i_;
        ++line_;
        line_start_ = i_;
        at_line_start = depth_ == 0;
        continue;
      }
      if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
        Loc loc = Here();
        size_t b = i_;
        while (i_ < s_.size() &&
               (std::isalnum(static_cast<unsigned char>(s_[i_])) || s_[i_] == '_'))
          ++i_;
        std::string name(s_.substr(b, i_ - b));
        if (i_ < s_.size() && (s_[i_] == '"' || s_[i_] == '\'') && name.size() <= 2) {
          return ErrorAt(src_, loc,
                         absl::StrCat("string prefix '", name, "' is not in the DSL subset"),
                         "use a plain \"...\" string");
        }
        Push(Tok::kName, name, loc);
        continue;
      }
      if (std::isdigit(static_cast<unsigned char>(c)) ||
          (c == '.' && i_ + 1 < s_.size() &&
           std::isdigit(static_cast<unsigned char>(s_[i_ + 1])))) {
        RETURN_IF_ERROR(Number());
        continue;
      }
      if (c == '"' || c == '\'') {
        RETURN_IF_ERROR(String());
        continue;
      }
      RETURN_IF_ERROR(Operator());
    }
    Loc end = Here();
    if (depth_ > 0) {
      return ErrorAt(src_, open_locs_.back(), "unclosed bracket", "close it before end of file");
    }
    if (!toks_.empty() && toks_.back().kind != Tok::kNewline && toks_.back().kind != Tok::kDedent) {
      Push(Tok::kNewline, "", end);
    }
    while (indents_.size() > 1) {
      indents_.pop_back();
      Push(Tok::kDedent, "", end);
    }
    Push(Tok::kEof, "", end);
    return std::move(toks_);
  }

 private:
  Loc Here() const { return Loc{line_, static_cast<int>(i_ - line_start_) + 1}; }
  void Push(Tok k, std::string text, Loc loc) {
    Token t;
    t.kind = k;
    t.text = std::move(text);
    t.loc = loc;
    toks_.push_back(std::move(t));
  }

  absl::Status Number() {
    Loc loc = Here();
    size_t b = i_;
    std::string digits;
    bool is_float = false;
    if (s_[i_] == '0' && i_ + 1 < s_.size() && (s_[i_ + 1] == 'x' || s_[i_ + 1] == 'X')) {
      i_ += 2;
      while (i_ < s_.size() &&
             (std::isxdigit(static_cast<unsigned char>(s_[i_])) || s_[i_] == '_')) {
        if (s_[i_] != '_') digits.push_back(s_[i_]);
        ++i_;
      }
      if (digits.empty() || digits.size() > 16) {
        return ErrorAt(src_, loc, "bad hexadecimal literal",
                       "write 0x followed by 1-16 hex digits");
      }
      uint64_t v = std::strtoull(digits.c_str(), nullptr, 16);
      if (v > static_cast<uint64_t>(INT64_MAX)) {
        return ErrorAt(src_, loc, "integer literal too large", "literals must fit in i64");
      }
      Token t;
      t.kind = Tok::kInt;
      t.ival = static_cast<int64_t>(v);
      t.loc = loc;
      t.text = std::string(s_.substr(b, i_ - b));
      toks_.push_back(t);
      return absl::OkStatus();
    }
    auto eat_digits = [&] {
      while (i_ < s_.size() &&
             (std::isdigit(static_cast<unsigned char>(s_[i_])) || s_[i_] == '_')) {
        if (s_[i_] != '_') digits.push_back(s_[i_]);
        ++i_;
      }
    };
    eat_digits();
    if (i_ < s_.size() && s_[i_] == '.') {
      is_float = true;
      digits.push_back('.');
      ++i_;
      eat_digits();
    }
    if (i_ < s_.size() && (s_[i_] == 'e' || s_[i_] == 'E')) {
      is_float = true;
      digits.push_back('e');
      ++i_;
      if (i_ < s_.size() && (s_[i_] == '+' || s_[i_] == '-')) digits.push_back(s_[i_++]);
      size_t before = digits.size();
      eat_digits();
      if (digits.size() == before) {
        return ErrorAt(src_, loc, "bad float literal: exponent has no digits", "write e.g. 1e-3");
      }
    }
    if (i_ < s_.size() && (std::isalpha(static_cast<unsigned char>(s_[i_])) || s_[i_] == '_')) {
      return ErrorAt(src_, loc, "bad number literal", "numbers are decimal, hex (0x..) or floats");
    }
    Token t;
    t.loc = loc;
    t.text = std::string(s_.substr(b, i_ - b));
    if (is_float) {
      t.kind = Tok::kFloat;
      t.fval = std::strtod(digits.c_str(), nullptr);
    } else {
      t.kind = Tok::kInt;
      errno = 0;
      if (digits.size() > 1 && digits[0] == '0' &&
          digits.find_first_not_of('0') != std::string::npos) {
        return ErrorAt(src_, loc, "leading zeros in a decimal literal",
                       "write 0o.. is not in the DSL subset; drop the zeros");
      }
      unsigned long long v = std::strtoull(digits.c_str(), nullptr, 10);
      if (errno == ERANGE || v > static_cast<unsigned long long>(INT64_MAX)) {
        return ErrorAt(src_, loc, "integer literal too large", "literals must fit in i64");
      }
      t.ival = static_cast<int64_t>(v);
    }
    toks_.push_back(t);
    return absl::OkStatus();
  }

  absl::Status String() {
    Loc loc = Here();
    char q = s_[i_];
    bool triple = i_ + 2 < s_.size() && s_[i_ + 1] == q && s_[i_ + 2] == q;
    i_ += triple ? 3 : 1;
    std::string out;
    while (true) {
      if (i_ >= s_.size()) {
        return ErrorAt(src_, loc, "unterminated string literal", "close the string");
      }
      char c = s_[i_];
      if (!triple && c == '\n') {
        return ErrorAt(src_, loc, "unterminated string literal", "close the string on its line");
      }
      if (triple && c == q && i_ + 2 < s_.size() && s_[i_ + 1] == q && s_[i_ + 2] == q) {
        i_ += 3;
        break;
      }
      if (!triple && c == q) {
        ++i_;
        break;
      }
      if (c == '\\' && i_ + 1 < s_.size()) {
        char e = s_[i_ + 1];
        i_ += 2;
        switch (e) {
          case 'n':
            out.push_back('\n');
            break;
          case 't':
            out.push_back('\t');
            break;
          case '\\':
            out.push_back('\\');
            break;
          case '\'':
            out.push_back('\'');
            break;
          case '"':
            out.push_back('"');
            break;
          case '\n':
            ++line_;
            line_start_ = i_;
            break;
          default:
            out.push_back('\\');
            out.push_back(e);
            break;
        }
        continue;
      }
      if (c == '\n') {
        ++line_;
        line_start_ = i_ + 1;
      }
      out.push_back(c);
      ++i_;
    }
    Push(Tok::kString, std::move(out), loc);
    return absl::OkStatus();
  }

  absl::Status Operator() {
    static const char* kOps3[] = {"**=", "//=", ">>=", "<<=", "..."};
    static const char* kOps2[] = {"**", "//", "<<", ">>", "<=", ">=", "==", "!=", "->", "+=",
                                  "-=", "*=", "/=", "%=", "&=", "|=", "^=", ":=", "@="};
    Loc loc = Here();
    for (const char* op : kOps3) {
      if (s_.compare(i_, 3, op) == 0) {
        i_ += 3;
        Push(Tok::kOp, op, loc);
        return absl::OkStatus();
      }
    }
    for (const char* op : kOps2) {
      if (s_.compare(i_, 2, op) == 0) {
        i_ += 2;
        Push(Tok::kOp, op, loc);
        return absl::OkStatus();
      }
    }
    char c = s_[i_];
    static const std::string kOps1 = "+-*/%<>=()[]{},:.;@&|^~!";
    if (kOps1.find(c) == std::string::npos) {
      return ErrorAt(
          src_, loc,
          absl::StrCat("unexpected character '",
                       std::isprint(static_cast<unsigned char>(c))
                           ? std::string(1, c)
                           : absl::StrCat("\\x", absl::Hex(static_cast<unsigned char>(c))),
                       "'"),
          "DSL files are ASCII Python");
    }
    if (c == '(' || c == '[' || c == '{') {
      if (++depth_ > 64) {
        return ErrorAt(src_, loc, "brackets nested too deeply (limit 64)",
                       "simplify the expression");
      }
      open_locs_.push_back(loc);
    }
    if (c == ')' || c == ']' || c == '}') {
      if (depth_ == 0)
        return ErrorAt(src_, loc, absl::StrCat("unmatched '", std::string(1, c), "'"), "remove it");
      --depth_;
      open_locs_.pop_back();
    }
    ++i_;
    Push(Tok::kOp, std::string(1, c), loc);
    return absl::OkStatus();
  }

  const SourceFile& src_;
  std::string_view s_;
  size_t i_ = 0;
  int line_ = 1;
  size_t line_start_ = 0;
  int depth_ = 0;
  std::vector<Loc> open_locs_;
  std::vector<int> indents_;
  std::vector<Token> toks_;
};

}  // namespace

absl::StatusOr<std::vector<Token>> Tokenize(const SourceFile& src) { return Lexer(src).Run(); }

}  // namespace argus::dsl
