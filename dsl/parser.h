// dsl/parser.h: recursive-descent parser for the DSL's Python subset.
//
// Parse() tokenizes and parses one file into a Module (a list of decorated
// function definitions). Constructs outside the subset (classes, imports, try,
// with, comprehensions, `**`, ...) are rejected with "... is not in the DSL
// subset". Nesting of blocks and expressions is capped at 64 levels, so no
// input recurses unboundedly.
//
// Thread safety: pure function.
#ifndef ARGUS_DSL_PARSER_H_
#define ARGUS_DSL_PARSER_H_

#include "absl/status/statusor.h"
#include "dsl/ast.h"
#include "dsl/source.h"

namespace argus::dsl {

constexpr int kMaxNesting = 64;

absl::StatusOr<Module> Parse(const SourceFile& src);

}  // namespace argus::dsl

#endif  // ARGUS_DSL_PARSER_H_
