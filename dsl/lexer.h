// dsl/lexer.h: tokens of the DSL's Python subset.
//
// Tokenize() turns a SourceFile into a token vector with Python's layout
// rules: NEWLINE ends a logical line, INDENT/DEDENT bracket blocks, newlines
// inside (), [] and {} are ignored, `\` joins lines, comments are dropped.
// Numbers (decimal, hex, floats with exponent, `_` separators) and string
// literals (single, double, triple-quoted) are decoded. Errors are located
// diagnostics; input over 1 MiB is rejected.
//
// Thread safety: pure function.
#ifndef ARGUS_DSL_LEXER_H_
#define ARGUS_DSL_LEXER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "dsl/source.h"

namespace argus::dsl {

enum class Tok { kName, kInt, kFloat, kString, kOp, kNewline, kIndent, kDedent, kEof };

struct Token {
  Tok kind;
  std::string text;  // name, operator spelling, or decoded string
  int64_t ival = 0;
  double fval = 0;
  Loc loc;
};

const char* TokName(Tok t);

absl::StatusOr<std::vector<Token>> Tokenize(const SourceFile& src);

}  // namespace argus::dsl

#endif  // ARGUS_DSL_LEXER_H_
