#include "base/data_dir.h"

#include <stdlib.h>

#include <catch2/catch.hpp>

namespace argus {
namespace {

TEST_CASE("the data directory: --data_dir, else $ARGUS_DATA_DIR, else the source tree") {
  unsetenv("ARGUS_DATA_DIR");
  // A test binary is not installed: no ../share/argus beside it.
  CHECK(DataDir() == ARGUS_SOURCE_DIR);
  setenv("ARGUS_DATA_DIR", "/opt/argus-data", 1);
  CHECK(DataDir() == "/opt/argus-data");
  FlagSet flags("test");
  DeclareDataDirFlag(flags);
  REQUIRE(flags.Parse({"--data_dir=/srv/argus"}).ok());
  CHECK(DataDir() == "/srv/argus");
  unsetenv("ARGUS_DATA_DIR");
  CHECK(DataDir() == "/srv/argus");
  REQUIRE(flags.Parse({"--data_dir="}).ok());
  CHECK(DataDir() == ARGUS_SOURCE_DIR);
}

}  // namespace
}  // namespace argus
