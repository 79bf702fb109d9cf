// dsl/source.h: source files, locations and located diagnostics.
//
// A SourceFile owns the text of one DSL file. Every front-end error is a
// Diagnostic rendered as
//   file:line:col: error: message
//     <the source line>
//     <caret under the column>
//   hint: <one-line fix>
// and carried as an absl::Status (kInvalidArgument) whose message is that text.
//
// Thread safety: SourceFile is immutable after construction and may be shared
// between threads; the functions here are pure.
#ifndef ARGUS_DSL_SOURCE_H_
#define ARGUS_DSL_SOURCE_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"

namespace argus::dsl {

// A 1-based line and column. {0, 0} means "no location".
struct Loc {
  int line = 0;
  int col = 0;
};

class SourceFile {
 public:
  SourceFile(std::string name, std::string text);

  const std::string& name() const { return name_; }
  const std::string& text() const { return text_; }
  // The text of 1-based line `line`, without its newline ("" if out of range).
  std::string_view Line(int line) const;

 private:
  std::string name_;
  std::string text_;
  std::vector<size_t> line_starts_;
};

struct Diagnostic {
  Loc loc;
  std::string message;
  std::string hint;
};

// Renders a diagnostic in the format above.
std::string FormatDiagnostic(const SourceFile& src, const Diagnostic& d);

// A kInvalidArgument status carrying FormatDiagnostic's text.
absl::Status ErrorAt(const SourceFile& src, Loc loc, std::string message, std::string hint = "");

}  // namespace argus::dsl

#endif  // ARGUS_DSL_SOURCE_H_
