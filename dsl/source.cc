#include "dsl/source.h"

#include "absl/strings/str_cat.h"

namespace argus::dsl {

SourceFile::SourceFile(std::string name, std::string text)
    : name_(std::move(name)), text_(std::move(text)) {
  line_starts_.push_back(0);
  for (size_t i = 0; i < text_.size(); ++i) {
    if (text_[i] == '\n') line_starts_.push_back(i + 1);
  }
}

std::string_view SourceFile::Line(int line) const {
  if (line < 1 || static_cast<size_t>(line) > line_starts_.size()) return {};
  size_t begin = line_starts_[line - 1];
  size_t end = text_.find('\n', begin);
  if (end == std::string::npos) end = text_.size();
  std::string_view v(text_.data() + begin, end - begin);
  if (!v.empty() && v.back() == '\r') v.remove_suffix(1);
  return v;
}

std::string FormatDiagnostic(const SourceFile& src, const Diagnostic& d) {
  std::string out =
      absl::StrCat(src.name(), ":", d.loc.line, ":", d.loc.col, ": error: ", d.message, "\n");
  std::string_view line = src.Line(d.loc.line);
  if (d.loc.line > 0) {
    std::string shown;
    for (char c : line) shown.push_back(c == '\t' ? ' ' : c);
    if (shown.size() > 200) shown.resize(200);
    absl::StrAppend(&out, "    ", shown, "\n    ");
    int col = std::max(1, std::min<int>(d.loc.col, static_cast<int>(shown.size()) + 1));
    out.append(col - 1, ' ');
    out += "^\n";
  }
  absl::StrAppend(&out, "hint: ", d.hint.empty() ? "see docs/dsl.md" : d.hint);
  return out;
}

absl::Status ErrorAt(const SourceFile& src, Loc loc, std::string message, std::string hint) {
  return absl::InvalidArgumentError(
      FormatDiagnostic(src, Diagnostic{loc, std::move(message), std::move(hint)}));
}

}  // namespace argus::dsl
