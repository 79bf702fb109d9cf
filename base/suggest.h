// base/suggest.h: "did you mean" for names a user typed (verbs, flags,
// problems, targets): the closest known name by edit distance, when it is
// close enough to be a likely typo.
//
// Thread safety: pure functions.
#ifndef ARGUS_BASE_SUGGEST_H_
#define ARGUS_BASE_SUGGEST_H_

#include <string>
#include <string_view>
#include <vector>

namespace argus {

// Levenshtein distance (insertions, deletions, substitutions; case-sensitive).
size_t EditDistance(std::string_view a, std::string_view b);

// The known name closest to `word` if it is within a third of the word's
// length (at least 1, at most 3 edits), or a known name that starts with
// `word` (3+ characters); else "".
std::string ClosestName(std::string_view word, const std::vector<std::string>& known);

// " (did you mean 'NAME'?)" for ClosestName, or "" when there is none.
std::string DidYouMean(std::string_view word, const std::vector<std::string>& known,
                       std::string_view prefix = "");

}  // namespace argus

#endif  // ARGUS_BASE_SUGGEST_H_
