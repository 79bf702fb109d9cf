#include "base/subprocess.h"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <thread>

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

TEST_CASE("RunWithTimeout kills the child soon after its cancel flag is set", "[subprocess]") {
  std::atomic<bool> cancel{false};
  ProcessOptions opt;
  opt.argv = {"/bin/sh", "-c", "sleep 30"};
  opt.timeout = std::chrono::seconds(60);
  opt.cancel = &cancel;
  std::thread canceller([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    cancel.store(true);
  });
  auto r = RunWithTimeout(opt);
  canceller.join();
  REQUIRE(r.ok());
  CHECK(r->end == ProcessResult::End::kCancelled);
  CHECK(r->wall_seconds < 1.5);
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

namespace argus {
namespace {

// Needs root (to switch users) and the user nobody; says SKIPPED otherwise.
bool CanDropToNobody() {
  if (geteuid() != 0 || !LookUpUser("nobody").ok()) {
    std::printf("SKIPPED: dropping privileges needs root and the user nobody\n");
    return false;
  }
  return true;
}

TEST_CASE("a child run as an unprivileged user has only that user's rights", "[subprocess]") {
  if (!CanDropToNobody()) return;
  RunAs nobody = *LookUpUser("nobody");
  char tmpl[] = "/tmp/argus-runas-XXXXXX";
  REQUIRE(mkdtemp(tmpl) != nullptr);  // 0700, root's: handed to nobody because it is an argument
  std::string dir = tmpl;
  std::ofstream(dir + "/spec.json") << "{}";
  ProcessOptions opt;
  opt.argv = {"/bin/sh", "-c",
              "id -u; id -g; id -G; cat \"$(dirname \"$1\")/spec.json\"; echo ok > "
              "\"$(dirname \"$1\")/result.json\"; cat /etc/shadow >/dev/null 2>&1 || echo denied",
              "sh", dir + "/result.json"};
  opt.run_as = nobody;
  auto r = RunWithTimeout(opt);
  REQUIRE(r.ok());
  INFO(r->stderr_text);
  std::string ids = std::to_string(nobody.uid) + "\n" + std::to_string(nobody.gid) + "\n" +
                    std::to_string(nobody.gid) + "\n";
  CHECK(r->stdout_text == ids + "{}denied\n");
  struct stat st;
  REQUIRE(stat((dir + "/result.json").c_str(), &st) == 0);
  CHECK(st.st_uid == nobody.uid);
  std::filesystem::remove_all(dir);
}

TEST_CASE("SetRunAs applies to the programs it names only", "[subprocess]") {
  if (!CanDropToNobody()) return;
  RunAs nobody = *LookUpUser("nobody");
  REQUIRE(SetRunAs(nobody, {"/usr/bin/id"}).ok());
  ProcessOptions id;
  id.argv = {"/usr/bin/id", "-u"};
  ProcessOptions sh;
  sh.argv = {"/bin/sh", "-c", "id -u"};
  auto as_nobody = RunWithTimeout(id);
  auto as_root = RunWithTimeout(sh);
  REQUIRE(SetRunAs(std::nullopt, {}).ok());
  REQUIRE(as_nobody.ok());
  REQUIRE(as_root.ok());
  CHECK(as_nobody->stdout_text == std::to_string(nobody.uid) + "\n");
  CHECK(as_root->stdout_text == "0\n");
  CHECK(LookUpUser("no-such-user-argus").status().code() == absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace argus
