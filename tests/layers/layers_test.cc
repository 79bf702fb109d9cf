#include "tests/layers/layers.h"

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

namespace argus::layers {
namespace {

namespace fs = std::filesystem;

constexpr char kTable[] = R"md(# A tree
<!-- layers:begin -->
| part | libraries | may include |
|---|---|---|
| `base/` | `argus_base` | — |
| `proto/` | `argus_proto` | `base` |
| `store/` | `argus_store` | `base`, `proto` |
| `planner/` | `argus_planner` | `base`, `store` |
| `server/` | `argus_server` | `base`, `store`, `planner` |
| `tests/` | — | `*` |
<!-- layers:end -->
)md";

void Write(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path) << text;
}

TEST_CASE("every include of every part is one the table in docs/architecture.md allows",
          "[layers]") {
  auto table = ReadLayerTable(std::string(ARGUS_SOURCE_DIR) + "/docs/architecture.md");
  if (!table.ok()) FAIL(table.status().ToString());
  for (const char* part : {"base", "proto", "dsl", "codegen", "gpu_worker", "verifier", "store",
                           "kb", "planner", "server", "clients", "bench", "tests"}) {
    INFO(part);
    CHECK(table->parts.count(part) == 1);
  }
  std::vector<Violation> violations = CheckIncludes(ARGUS_SOURCE_DIR, *table);
  for (const Violation& v : violations) FAIL_CHECK(v.ToString());
  CHECK(violations.empty());
}

TEST_CASE("a planted include of a part above is reported with its file, line and edge",
          "[layers]") {
  auto table = ParseLayerTable(kTable);
  if (!table.ok()) FAIL(table.status().ToString());
  fs::path root = fs::temp_directory_path() / "argus_layers_test";
  fs::remove_all(root);
  Write(root / "proto/argus/v1/jobs.proto", "");
  Write(root / "base/status.h", "#include <string>\n#include \"absl/status/status.h\"\n");
  Write(root / "store/store.h",
        "#include \"argus/v1/jobs.pb.h\"\n#include \"base/status.h\"\n#include \"sqlite.h\"\n");
  Write(root / "planner/planner.h", "#include \"store/store.h\"\n");
  Write(root / "server/server.h", "#include \"planner/planner.h\"\n");
  Write(root / "tests/any.cc", "#include \"server/server.h\"\n");
  Write(root / "build/CMakeCache.txt", "");
  Write(root / "build/gen.h", "#include \"server/server.h\"\n");
  CHECK(CheckIncludes(root.string(), *table).empty());

  Write(root / "planner/sub/bad.cc",
        "#include \"planner/planner.h\"\n\n  #  include \"server/server.h\"  // above\n");
  Write(root / "base/flags.h", "// #include \"store/store.h\"\n#include \"argus/v1/jobs.pb.h\"\n");
  Write(root / "extra/x.h", "");
  std::vector<Violation> v = CheckIncludes(root.string(), *table);
  std::vector<std::string> got;
  for (const Violation& x : v) got.push_back(x.ToString());
  CHECK_THAT(got, Catch::Matchers::UnorderedEquals(std::vector<std::string>{
                      "extra/: holds C++ files but is not a part of the layer table",
                      "base/flags.h:2: base may not include proto (#include "
                      "\"argus/v1/jobs.pb.h\"); base may include: no other part",
                      "planner/sub/bad.cc:3: planner may not include server (#include "
                      "\"server/server.h\"); planner may include: base, store",
                  }));
  fs::remove_all(root);
}

TEST_CASE("a table without its markers, or naming a part without a row, is refused", "[layers]") {
  CHECK(!ParseLayerTable("| `base/` | x | — |\n").ok());
  CHECK(!ParseLayerTable("<!-- layers:begin -->\n<!-- layers:end -->\n").ok());
  auto bad =
      ParseLayerTable("<!-- layers:begin -->\n| `base/` | x | `nope` |\n<!-- layers:end -->\n");
  REQUIRE(!bad.ok());
  CHECK(bad.status().message() == "part base may include nope, which has no row");
  CHECK(!ParseLayerTable("<!-- layers:begin -->\n| `base/` | x | — |\n| `base/` | y | — |\n"
                         "<!-- layers:end -->\n")
             .ok());
}

}  // namespace
}  // namespace argus::layers
