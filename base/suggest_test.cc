#include "base/suggest.h"

#include <catch2/catch.hpp>

namespace argus {
namespace {

TEST_CASE("EditDistance counts insertions, deletions and substitutions") {
  CHECK(EditDistance("", "") == 0);
  CHECK(EditDistance("shap", "shape") == 1);
  CHECK(EditDistance("gem", "gemm") == 1);
  CHECK(EditDistance("kitten", "sitting") == 3);
  CHECK(EditDistance("abc", "") == 3);
}

TEST_CASE("DidYouMean suggests a likely typo and nothing for an unrelated word") {
  const std::vector<std::string> flags = {"shape", "dtype", "target", "max_candidates"};
  CHECK(DidYouMean("shap", flags, "--") == " (did you mean '--shape'?)");
  CHECK(DidYouMean("taget", flags) == " (did you mean 'target'?)");
  CHECK(DidYouMean("max_cand", flags) == " (did you mean 'max_candidates'?)");
  CHECK(DidYouMean("banana", flags).empty());
  CHECK(DidYouMean("", flags).empty());
  const std::vector<std::string> problems = {"gemm", "batched_gemm", "attention", "rmsnorm"};
  CHECK(ClosestName("gem", problems) == "gemm");
  CHECK(ClosestName("atention", problems) == "attention");
  CHECK(ClosestName("rms", problems) == "rmsnorm");
  CHECK(ClosestName("zz", problems).empty());
}

}  // namespace
}  // namespace argus
