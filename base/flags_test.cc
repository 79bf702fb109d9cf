#include "base/flags.h"

#include <catch2/catch.hpp>

namespace argus {
namespace {

TEST_CASE("flags parse values, positionals and booleans", "[flags]") {
  std::string server = "localhost:1";
  int64_t count = 3;
  bool json = false;
  std::vector<std::string> consts;
  FlagSet flags("argus", "VERB");
  flags.String("server", &server, "server address");
  flags.Int("count", &count, "how many");
  flags.Bool("json", &json, "json output");
  flags.List("const", &consts, "constant");
  auto pos = flags.Parse(
      {"submit", "--server=h:2", "--count", "7", "--json", "--const", "A=1", "--const=B=2", "x"});
  REQUIRE(pos.ok());
  CHECK(*pos == std::vector<std::string>{"submit", "x"});
  CHECK(server == "h:2");
  CHECK(count == 7);
  CHECK(json);
  CHECK(consts == std::vector<std::string>{"A=1", "B=2"});
}

TEST_CASE("flags reject unknown flags and bad values with the flag's name", "[flags]") {
  int64_t n = 0;
  FlagSet flags("prog");
  flags.Int("n", &n, "n");
  auto unknown = flags.Parse({"--bogus"});
  REQUIRE_FALSE(unknown.ok());
  CHECK(std::string(unknown.status().message()).find("unknown flag --bogus") != std::string::npos);
  std::string shape;
  flags.String("shape", &shape, "dims");
  auto typo = flags.Parse({"--shap", "64"});
  REQUIRE_FALSE(typo.ok());
  CHECK(std::string(typo.status().message()) ==
        "prog: unknown flag --shap (did you mean '--shape'?)");
  auto bad = flags.Parse({"--n=abc"});
  REQUIRE_FALSE(bad.ok());
  CHECK(std::string(bad.status().message()).find("--n") != std::string::npos);
  auto missing = flags.Parse({"--n"});
  REQUIRE_FALSE(missing.ok());
  CHECK(std::string(missing.status().message()).find("needs a value") != std::string::npos);
}

TEST_CASE("flags accept dashes for underscores and --no-", "[flags]") {
  std::string level = "info";
  bool color = true;
  FlagSet flags("prog");
  flags.String("log_level", &level, "level");
  flags.Bool("color", &color, "color");
  REQUIRE(flags.Parse({"--log-level=debug", "--no-color"}).ok());
  CHECK(level == "debug");
  CHECK_FALSE(color);
  REQUIRE(flags.Parse({"--help"}).ok());
  CHECK(flags.help_requested());
  CHECK(flags.Help().find("--log_level") != std::string::npos);
}

}  // namespace
}  // namespace argus
