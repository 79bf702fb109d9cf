// The foundation's round trip: real server, real workers, real CLI.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <set>

#include "tests/e2e/harness.h"

namespace argus::e2e {
namespace {

// Number of alive workers the server reports.
int AliveWorkers(Harness& h) {
  auto workers = h.CliJson({"workers"});
  int alive = 0;
  if (workers.contains("workers")) {
    for (const auto& w : workers["workers"]) alive += w.value("alive", false) ? 1 : 0;
  }
  return alive;
}

std::string TaskState(const nlohmann::json& job, std::string* worker = nullptr) {
  if (!job.contains("tasks") || job["tasks"].empty()) return "";
  if (worker) *worker = job["tasks"][0].value("worker_id", "");
  return job["tasks"][0].value("state", "");
}

TEST_CASE("probe returns the inventory of both workers and the job is stored", "[e2e]") {
  Harness h;
  h.StartServer({"--heartbeat_ms", "200", "--lease_ms", "2000"});
  h.StartWorker();
  h.StartWorker();
  REQUIRE(Harness::WaitFor([&] { return AliveWorkers(h) == 2; }, 20'000));

  int rc = -1;
  auto job = h.CliJson({"probe"}, &rc);
  CHECK(rc == 0);
  CHECK(job.value("state", "") == "JOB_STATE_SUCCEEDED");
  auto result = nlohmann::json::parse(job.value("result_json", "{}"));
  REQUIRE(result["tasks"].size() == 2);
  std::set<std::string> workers;
  for (const auto& t : result["tasks"]) {
    workers.insert(t.value("worker_id", ""));
    const auto& inv = t["result"];
    REQUIRE(inv.contains("devices"));
    CHECK(inv["devices"][0].value("arch", "") == "interp");
    CHECK(inv.contains("runtimes"));
  }
  CHECK(workers.size() == 2);  // two distinct workers answered

  // The job is in the store: status and list find it.
  auto status = h.CliJson({"status", job.value("id", "")});
  CHECK(status.value("state", "") == "JOB_STATE_SUCCEEDED");
  auto list = h.CliJson({"list"});
  REQUIRE(list["jobs"].size() == 1);
  CHECK(list["jobs"][0].value("id", "") == job.value("id", ""));
}

TEST_CASE("argus-server stops cleanly on SIGTERM", "[e2e]") {
  // The signal thread and main both call Shutdown(); the second must wait for
  // the first instead of destroying a thread it has not joined (which aborted).
  for (int i = 0; i < 3; ++i) {
    Harness h;
    h.StartServer({});
    const int status = h.KillServer(SIGTERM);
    INFO(h.ServerLog());
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
  }
}

TEST_CASE("a SIGKILLed server restarts on its DB with every job intact", "[e2e]") {
  Harness h;
  h.StartServer({"--heartbeat_ms", "200", "--lease_ms", "15000"});
  std::string address = h.address();
  // A slow worker keeps the job running while the server dies.
  h.StartWorker({"--task_delay_ms", "2500"});
  REQUIRE(Harness::WaitFor([&] { return AliveWorkers(h) == 1; }, 20'000));
  // A finished job and a running one.
  int rc = -1;
  auto done = h.CliJson({"probe"}, &rc);
  REQUIRE(rc == 0);
  auto running = h.CliJson({"submit", "--kind", "probe"});
  std::string id = running.value("id", "");
  REQUIRE(Harness::WaitFor(
      [&] {
        return TaskState(h.CliJson({"status", id})) == "leased";
      },
      10'000));

  h.KillServer(SIGKILL);
  CHECK(h.Cli({"status", id}).exit_code == 3);  // unreachable, cleanly reported
  h.StartServer({"--heartbeat_ms", "200", "--lease_ms", "15000"}, address);

  auto after_done = h.CliJson({"status", done.value("id", "")});
  CHECK(after_done.value("state", "") == "JOB_STATE_SUCCEEDED");
  CHECK(after_done.value("result_json", "") == done.value("result_json", ""));
  auto after = h.CliJson({"status", id});
  CHECK(after.value("state", "") == "JOB_STATE_RUNNING");
  CHECK(TaskState(after) == "leased");
  // The worker reconnects, keeps its lease and finishes the job.
  CHECK(h.Cli({"watch", id}).exit_code == 0);
  auto finished = h.CliJson({"status", id});
  CHECK(finished.value("state", "") == "JOB_STATE_SUCCEEDED");
  CHECK(finished["tasks"][0].value("attempts", 0) == 1);
}

TEST_CASE("a killed worker's lease expires and the other worker finishes the work", "[e2e]") {
  Harness h;
  h.StartServer({"--heartbeat_ms", "200", "--lease_ms", "1500"});
  int slow = h.StartWorker({"--task_delay_ms", "60000"});
  REQUIRE(Harness::WaitFor([&] { return AliveWorkers(h) == 1; }, 20'000));
  auto job = h.CliJson({"submit", "--kind", "probe", "--count", "1"});
  std::string id = job.value("id", "");
  std::string holder;
  REQUIRE(Harness::WaitFor(
      [&] {
        return TaskState(h.CliJson({"status", id}), &holder) == "leased";
      },
      10'000));
  auto workers = h.CliJson({"workers"});
  std::string slow_id = workers["workers"][0].value("id", "");
  CHECK(holder == slow_id);

  h.StartWorker();
  h.KillWorker(slow, SIGKILL);
  CHECK(h.Cli({"watch", id}).exit_code == 0);
  auto finished = h.CliJson({"status", id});
  std::string finisher;
  CHECK(TaskState(finished, &finisher) == "done");
  CHECK(finisher != slow_id);
  CHECK(finished["tasks"][0].value("attempts", 0) == 2);
}

TEST_CASE("bad input gets one clear line and a stable exit code", "[e2e]") {
  Harness h;
  h.StartServer();
  auto missing = h.Cli({"status", "j-doesnotexist"});
  CHECK(missing.exit_code == 4);
  CHECK(missing.stderr_text.find("does not exist") != std::string::npos);
  auto unknown = h.Cli({"list", "--frobnicate"});
  CHECK(unknown.exit_code == 2);
  CHECK(unknown.stderr_text.find("unknown flag --frobnicate") != std::string::npos);
  // No worker connected: the probe is refused, not left hanging.
  auto probe = h.Cli({"probe"});
  CHECK(probe.exit_code == 5);
  CHECK(probe.stderr_text.find("no workers are connected") != std::string::npos);
  // Oversized request: refused, and the server keeps serving.
  auto big = h.Cli({"status", std::string(9 << 20, 'x')});
  CHECK(big.exit_code != 0);
  CHECK(h.Cli({"list"}).exit_code == 0);
}

TEST_CASE("the server refuses a corrupt database with one line", "[e2e]") {
  Harness h;
  {
    std::ofstream out(h.db());
    out << std::string(10000, 'z');
  }
  ProcessOptions opt;
  opt.argv = {Harness::Bin("argus-server"), "--db", h.db(), "--listen", "127.0.0.1:0"};
  opt.timeout = std::chrono::seconds(10);
  auto r = RunWithTimeout(opt);
  REQUIRE(r.ok());
  CHECK(r->end == ProcessResult::End::kExited);
  CHECK(r->exit_code == 1);
  CHECK(r->stderr_text.find("not a database") != std::string::npos);
  // Unknown flags too.
  opt.argv = {Harness::Bin("argus-server"), "--nope"};
  r = RunWithTimeout(opt);
  CHECK(r->exit_code == 2);
  CHECK(r->stderr_text.find("unknown flag --nope") != std::string::npos);
}

// The argus binary on its own (no server): exit code and stderr.
ProcessResult Argus(std::vector<std::string> args) {
  ProcessOptions opt;
  opt.argv = {Harness::Bin("argus")};
  opt.argv.insert(opt.argv.end(), args.begin(), args.end());
  opt.timeout = std::chrono::seconds(60);
  auto r = RunWithTimeout(opt);
  REQUIRE(r.ok());
  return *r;
}

TEST_CASE("a typo gets a usage error naming the closest verb, flag, problem or target", "[e2e]") {
  struct Case {
    std::vector<std::string> args;
    std::string says;
  };
  const std::vector<Case> cases = {
      {{"tne"}, "argus: unknown verb 'tne' (did you mean 'tune'?)"},
      {{"tune", "gemm", "--shap", "64x64x64"},
       "argus tune: unknown flag --shap (did you mean '--shape'?)\n"},
      {{"tune", "gem"}, "unknown problem 'gem' (did you mean 'gemm'?; known: gemm,"},
      {{"tune", "gemm", "--target", "sm90a"}, "unknown --target 'sm90a' (did you mean 'sm_90a'?)"},
      {{"tune", "gemm", "--target", "banana"}, "unknown --target 'banana'; one of auto,"},
      {{"tune", "gemm", "--max_candidates", "0"}, "--max_candidates 0: give a number"},
      {{"tune", "gemm", "--option", "trans=1"}, "unknown option 'trans' (did you mean 'trans_a'?)"},
      {{"ir", "--bogus"}, "argus ir: unknown flag --bogus (see --help)\n"},
  };
  for (const auto& c : cases) {
    INFO(c.args[0] << " " << (c.args.size() > 1 ? c.args[1] : ""));
    auto r = Argus(c.args);
    CHECK(r.exit_code == 2);
    CHECK(r.stderr_text.find(c.says) != std::string::npos);
    CHECK(r.stderr_text.find("argus tune: argus tune") == std::string::npos);
  }
  auto version = Argus({"--version"});
  CHECK(version.exit_code == 0);
  CHECK(version.stdout_text.rfind("argus ", 0) == 0);
  for (std::string verb : {"compile", "ir", "run", "verify", "tune"}) {
    auto help = Argus({verb, "--help"});
    CHECK(help.stdout_text.rfind("usage: argus " + verb + " ", 0) == 0);
    CHECK(help.stdout_text.find("usage: argus " + verb + " argus") == std::string::npos);
  }
  auto problems = Argus({"problems"});
  CHECK(problems.exit_code == 0);
  CHECK(problems.stdout_text.find("--shape BxHxSxD") != std::string::npos);
  auto templates = Argus({"templates", "gemm"});
  CHECK(templates.exit_code == 0);
  CHECK(templates.stdout_text.find("gemm_wgmma") != std::string::npos);
  CHECK(templates.stdout_text.find("flash_attention") == std::string::npos);
}

TEST_CASE("the server refuses a read-only database with one line", "[e2e]") {
  Harness h;
  {
    // Create a valid store, then make it read-only.
    std::ofstream(h.db()).close();
  }
  ProcessOptions make;
  make.argv = {"/usr/bin/sqlite3", h.db(), "CREATE TABLE t(x);"};
  REQUIRE(RunWithTimeout(make).ok());
  std::filesystem::permissions(h.dir(), std::filesystem::perms::all);
  std::filesystem::permissions(h.db(), std::filesystem::perms::owner_read |
                                           std::filesystem::perms::group_read |
                                           std::filesystem::perms::others_read);
  ProcessOptions opt;
  opt.argv = {Harness::Bin("argus-server"), "--db", h.db(), "--listen", "127.0.0.1:0"};
  // Root writes through file permissions; run the server as nobody so the
  // file really is read-only to it.
  if (geteuid() == 0) {
    REQUIRE(access("/usr/bin/setpriv", X_OK) == 0);
    opt.argv.insert(opt.argv.begin(), {"/usr/bin/setpriv", "--reuid=nobody", "--regid=nogroup",
                                       "--clear-groups", "--"});
  }
  opt.timeout = std::chrono::seconds(10);
  auto r = RunWithTimeout(opt);
  REQUIRE(r.ok());
  INFO(r->stderr_text);
  CHECK(r->end == ProcessResult::End::kExited);
  CHECK(r->exit_code == 1);
  CHECK((r->stderr_text.find("read-only") != std::string::npos ||
         r->stderr_text.find("readonly") != std::string::npos));
}

}  // namespace
}  // namespace argus::e2e
