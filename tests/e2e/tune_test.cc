// The main job end to end over real processes: `argus tune` against an
// argus-server whose planner gates candidates with a separate argus-verifier,
// and a separate `argus-worker --backend interp` that runs them from the one
// candidate payload (gpu_worker/candidate_schema.h) — no planner code in the
// worker.
#include <sqlite3.h>

#include <catch2/catch.hpp>
#include <fstream>
#include <sstream>
#include <string>

#include "nlohmann/json.hpp"
#include "tests/e2e/harness.h"

namespace argus::e2e {
namespace {

using nlohmann::json;

// Rows of `sql` (first column, as text) in the store at `db`.
std::vector<std::string> Column(const std::string& db, const std::string& sql) {
  sqlite3* h = nullptr;
  std::vector<std::string> out;
  if (sqlite3_open_v2(db.c_str(), &h, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) return out;
  sqlite3_busy_timeout(h, 5000);
  sqlite3_stmt* st = nullptr;
  if (sqlite3_prepare_v2(h, sql.c_str(), -1, &st, nullptr) == SQLITE_OK) {
    while (sqlite3_step(st) == SQLITE_ROW) {
      const unsigned char* t = sqlite3_column_text(st, 0);
      out.push_back(t ? reinterpret_cast<const char*>(t) : "");
    }
  }
  sqlite3_finalize(st);
  sqlite3_close(h);
  return out;
}

TEST_CASE("argus tune: server + argus-verifier + argus-worker --backend interp finish a GEMM",
          "[e2e][tune]") {
  Harness h;
  std::string verifier = h.StartVerifier();
  h.StartServer({"--heartbeat_ms", "200", "--lease_ms", "5000", "--verifier", verifier});
  h.StartWorker({"--backend", "interp", "--verifier", verifier});
  ProcessResult r = h.Cli({"tune", "gemm", "--shape", "64x64x64", "--dtype", "f32", "--target",
                           "interp", "--max_candidates", "4"},
                          240);
  INFO("stdout:\n"
       << r.stdout_text << "\nstderr:\n"
       << r.stderr_text << "\nserver:\n"
       << h.ServerLog() << "\nworker:\n"
       << h.Log("worker-0.log"));
  REQUIRE(r.exit_code == 0);
  CHECK(r.stdout_text.find("speed-up over the baseline") != std::string::npos);
  // Every step went through the remote verifier and ran on the separate
  // worker, whose result is the unified schema.
  auto steps = Column(h.db(), "SELECT detail_json FROM trajectory_steps ORDER BY step");
  REQUIRE(steps.size() == 4);
  int measured = 0;
  for (const std::string& s : steps) {
    json d = json::parse(s);
    INFO(d.dump());
    CHECK(d["verifier"]["gate"] == "verifier@" + verifier);
    CHECK(d["verifier"]["passed"] == true);
    if (d["outcome"]["outcome"] != "ok") continue;
    ++measured;
    CHECK(d["outcome"]["backend"] == "interp");
    CHECK(d["outcome"]["unit"] == "interp_instructions");
    CHECK(d["outcome"]["check"]["passed"] == true);  // runner_core's gemm reference
    CHECK(d["outcome"]["speedup"].get<double>() ==
          Approx(d["outcome"]["baseline_time"].get<double>() / d["outcome"]["time"].get<double>()));
  }
  CHECK(measured >= 1);
  // The worker that ran them is the separate process (the server has none).
  auto workers = Column(h.db(), "SELECT DISTINCT worker_id FROM tasks WHERE state = 'done'");
  CHECK(workers.size() == 1);

  // The tuned kernel can be taken away: an interpreter job stored no PTX, so
  // export compiles the best kernel's source for sm_90a itself.
  auto jobs = Column(h.db(), "SELECT id FROM jobs");
  REQUIRE(jobs.size() == 1);
  const std::string out = h.dir() + "/export";
  ProcessResult e = h.Cli({"export", jobs[0], "-o", out});
  INFO(e.stderr_text);
  REQUIRE(e.exit_code == 0);
  std::ifstream ptx(out + "/kernel.ptx");
  std::stringstream text;
  text << ptx.rdbuf();
  CHECK(text.str().find(".target sm_90a") != std::string::npos);
  CHECK(text.str().find(".entry") != std::string::npos);
  json meta = json::parse(std::ifstream(out + "/metadata.json"), nullptr, false);
  CHECK(meta.value("compiled_by", "") == "argus export");
  CHECK(!meta.value("kernel_name", "").empty());
  CHECK(meta["params"].size() >= 3);
}

// The embedded default keeps one store ($ARGUS_HOME/argus.db): after an
// `argus tune` without --server, the read verbs without --server open that
// store read-only, and a change is refused with a reason, not applied.
TEST_CASE("argus tune without a server: list, result and export read its store afterwards",
          "[e2e][tune]") {
  Harness h;  // no server: the CLI runs its embedded one
  h.cli_env = {"ARGUS_HOME=" + h.dir()};
  ProcessResult r = h.Cli({"tune", "gemm", "--shape", "64x64x64", "--dtype", "f32", "--target",
                           "interp", "--max_candidates", "2"},
                          240);
  INFO("tune stdout:\n" << r.stdout_text << "\nstderr:\n" << r.stderr_text);
  REQUIRE(r.exit_code == 0);
  auto jobs = Column(h.db(), "SELECT id FROM jobs");
  REQUIRE(jobs.size() == 1);
  ProcessResult list = h.Cli({"list"});
  INFO("list: " << list.stdout_text << list.stderr_text);
  CHECK(list.exit_code == 0);
  CHECK(list.stdout_text.find(jobs[0]) != std::string::npos);
  ProcessResult result = h.Cli({"result", jobs[0]});
  INFO("result: " << result.stdout_text << result.stderr_text);
  CHECK(result.exit_code == 0);
  CHECK(result.stdout_text.find("speed-up") != std::string::npos);
  ProcessResult exported = h.Cli({"export", jobs[0], "-o", h.dir() + "/export"});
  INFO("export: " << exported.stderr_text);
  CHECK(exported.exit_code == 0);
  ProcessResult cancel = h.Cli({"cancel", jobs[0]});
  CHECK(cancel.exit_code != 0);
  CHECK(cancel.stderr_text.find("is open read-only here") != std::string::npos);
  CHECK(h.Cli({"status", jobs[0]}).stdout_text.find("SUCCEEDED") != std::string::npos);
  // Without a store the verbs say how to name a server.
  h.cli_env = {"ARGUS_HOME=" + h.dir() + "/empty"};
  ProcessResult none = h.Cli({"result", jobs[0]});
  CHECK(none.exit_code != 0);
  CHECK(none.stderr_text.find("no server: pass --server") != std::string::npos);
}

}  // namespace
}  // namespace argus::e2e
