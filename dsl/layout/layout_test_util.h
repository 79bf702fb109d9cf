// dsl/layout/layout_test_util.h: helpers shared by the dsl/layout tests.
//
// Thread safety: test-only helpers; not for concurrent use.
#ifndef ARGUS_DSL_LAYOUT_LAYOUT_TEST_UTIL_H_
#define ARGUS_DSL_LAYOUT_LAYOUT_TEST_UTIL_H_

#include <catch2/catch.hpp>
#include <string>
#include <string_view>

#include "dsl/layout/layout.h"
#include "dsl/layout/layout_algebra.h"

namespace argus::layout::testing {

// Parses a layout, failing the test on error.
inline Layout L(std::string_view text) {
  absl::StatusOr<Layout> l = Layout::Parse(text);
  INFO("parsing " << text << ": " << l.status().ToString());
  REQUIRE(l.ok());
  return *l;
}

inline Tiler T(std::string_view text) {
  absl::StatusOr<Tiler> t = Tiler::Parse(text);
  INFO("parsing " << text << ": " << t.status().ToString());
  REQUIRE(t.ok());
  return *t;
}

// Unwraps a StatusOr<Layout> as its string (or "error: ..."), for CHECKs
// that show the value on failure.
inline std::string Str(const absl::StatusOr<Layout>& l) {
  return l.ok() ? l->ToString() : "error: " + l.status().ToString();
}

}  // namespace argus::layout::testing

#endif  // ARGUS_DSL_LAYOUT_LAYOUT_TEST_UTIL_H_
