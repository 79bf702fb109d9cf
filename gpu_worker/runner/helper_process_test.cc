#include "gpu_worker/runner/helper_process.h"

#include <catch2/catch.hpp>
#include <chrono>

namespace argus::runner {
namespace {

TEST_CASE("RunHelper collects a helper's standard output", "[runner]") {
  HelperResult r = RunHelper({"sh", "-c", "echo warming up; echo '{\"outcome\": \"ok\"}'"}, 10);
  CHECK(r.started);
  CHECK_FALSE(r.timed_out);
  CHECK(r.exit_code == 0);
  CHECK(r.error.empty());
  CHECK(r.out == "warming up\n{\"outcome\": \"ok\"}\n");
}

TEST_CASE("RunHelper kills a helper at its time limit, children too", "[runner]") {
  const auto start = std::chrono::steady_clock::now();
  // The grandchild `sleep` holds the pipe open: only a group kill ends the wait.
  HelperResult r = RunHelper({"sh", "-c", "sleep 30 & sleep 30"}, 0.5);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CHECK(r.timed_out);
  CHECK(r.exit_code == -1);
  CHECK(r.error.find("did not finish within") != std::string::npos);
  CHECK(s < 10);
}

TEST_CASE("RunHelper reports a program that cannot start or fails", "[runner]") {
  HelperResult missing = RunHelper({"argus-no-such-helper-program"}, 5);
  CHECK_FALSE(missing.started);
  CHECK(missing.error.find("cannot start argus-no-such-helper-program") != std::string::npos);
  HelperResult failing = RunHelper({"sh", "-c", "exit 3"}, 5);
  CHECK(failing.started);
  CHECK(failing.exit_code == 3);
  CHECK(failing.error == "sh exited with status 3");
}

}  // namespace
}  // namespace argus::runner
