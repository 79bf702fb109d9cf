// kb/expr.h: the small integer expressions of KB data files.
//
// Templates state their launch dims ("B * H"), constants derived from the
// problem's shape ("H / HKV") and their requirements ("M % BM == 0") as
// expressions over named integers: + - * / % (C semantics on int64, "/" and
// "%" by zero are errors), comparisons (== != < <= > >=), "and", "or",
// parentheses and integer literals. Comparisons yield 0 or 1. Substitute()
// fills ${NAME} placeholders of template sources.
//
// Thread safety: pure functions.
#ifndef ARGUS_KB_EXPR_H_
#define ARGUS_KB_EXPR_H_

#include <cstdint>
#include <map>
#include <set>
#include <string>

#include "absl/status/statusor.h"

namespace argus::kb {

// Evaluates `expr` with the names bound by `env`; an unbound name is an error.
absl::StatusOr<int64_t> EvalExpr(const std::string& expr,
                                 const std::map<std::string, int64_t>& env);

// The names `expr` uses, or a syntax error.
absl::StatusOr<std::set<std::string>> ExprNames(const std::string& expr);

// Replaces every ${NAME} in `text` by vars[NAME]; an unknown name is an error.
absl::StatusOr<std::string> Substitute(const std::string& text,
                                       const std::map<std::string, std::string>& vars);

// The ${NAME} placeholders `text` uses.
std::set<std::string> Placeholders(const std::string& text);

}  // namespace argus::kb

#endif  // ARGUS_KB_EXPR_H_
