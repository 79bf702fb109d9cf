#include "base/suggest.h"

#include <algorithm>
#include <numeric>

#include "absl/strings/str_cat.h"

namespace argus {

size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  std::iota(row.begin(), row.end(), 0);
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

std::string ClosestName(std::string_view word, const std::vector<std::string>& known) {
  if (word.empty()) return "";
  const size_t limit = std::clamp<size_t>(word.size() / 3, 1, 3);
  std::string best;
  size_t best_d = limit + 1;
  for (const auto& k : known) {
    size_t d = EditDistance(word, k);
    if (d < best_d) best_d = d, best = k;
  }
  if (!best.empty()) return best;
  if (word.size() >= 3) {
    for (const auto& k : known) {
      if (k.size() > word.size() && k.compare(0, word.size(), word) == 0) return k;
    }
  }
  return "";
}

std::string DidYouMean(std::string_view word, const std::vector<std::string>& known,
                       std::string_view prefix) {
  std::string c = ClosestName(word, known);
  return c.empty() ? "" : absl::StrCat(" (did you mean '", std::string(prefix), c, "'?)");
}

}  // namespace argus
