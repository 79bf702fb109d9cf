#include "base/subprocess.h"

#include <signal.h>

#include <catch2/catch.hpp>

namespace argus {
namespace {

TEST_CASE("RunWithTimeout collects output and exit code", "[subprocess]") {
  ProcessOptions opt;
  opt.argv = {"/bin/sh", "-c", "cat; echo err >&2; exit 3"};
  opt.stdin_text = "hello";
  auto r = RunWithTimeout(opt);
  REQUIRE(r.ok());
  CHECK(r->end == ProcessResult::End::kExited);
  CHECK(r->exit_code == 3);
  CHECK(r->stdout_text == "hello");
  CHECK(r->stderr_text == "err\n");
}

TEST_CASE("RunWithTimeout kills a child that hangs", "[subprocess]") {
  ProcessOptions opt;
  opt.argv = {"/bin/sh", "-c", "sleep 30"};
  opt.timeout = std::chrono::milliseconds(200);
  auto r = RunWithTimeout(opt);
  REQUIRE(r.ok());
  CHECK(r->end == ProcessResult::End::kTimedOut);
  CHECK(r->wall_seconds < 5);
}

TEST_CASE("RunWithTimeout reports a crash as a signal", "[subprocess]") {
  ProcessOptions opt;
  opt.argv = {"/bin/sh", "-c", "kill -SEGV $$"};
  auto r = RunWithTimeout(opt);
  REQUIRE(r.ok());
  CHECK(r->end == ProcessResult::End::kSignaled);
  CHECK(r->signal == SIGSEGV);
}

TEST_CASE("Child starts, runs and is killed", "[subprocess]") {
  auto c = Child::Start({"/bin/sleep", "30"});
  REQUIRE(c.ok());
  CHECK(c->running());
  c->Kill(SIGKILL);
  CHECK_FALSE(c->running());
}

}  // namespace
}  // namespace argus
