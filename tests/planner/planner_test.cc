// End-to-end tests of the planner inside a real argus-server with a real
// worker daemon whose "candidate" handler runs the reference interpreter.
#include "planner/planner.h"

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <set>
#include <thread>

#include "absl/strings/str_cat.h"
#include "argus/v1/jobs.grpc.pb.h"
#include "gpu_worker/daemon.h"
#include "nlohmann/json.hpp"
#include "planner/interp_backend.h"
#include "server/server.h"
#include "tests/planner/test_stack.h"

namespace argus::planner {
namespace {

using nlohmann::json;

v1::JobSpec SoftmaxSpec(int64_t r, int64_t n, int max_candidates) {
  v1::JobSpec spec;
  spec.set_kind(v1::JOB_KIND_TUNE);
  spec.set_target("interp");
  spec.set_max_candidates(max_candidates);
  auto* p = spec.mutable_problem();
  p->set_family("softmax");
  p->set_dtype("f32");
  (*p->mutable_shape())["R"] = r;
  (*p->mutable_shape())["N"] = n;
  return spec;
}

v1::JobSpec GemmSpec(int64_t m, int64_t n, int64_t k, int max_candidates) {
  v1::JobSpec spec;
  spec.set_kind(v1::JOB_KIND_TUNE);
  spec.set_target("interp");
  spec.set_max_candidates(max_candidates);
  auto* p = spec.mutable_problem();
  p->set_family("gemm");
  p->set_dtype("f32");
  (*p->mutable_shape())["M"] = m;
  (*p->mutable_shape())["N"] = n;
  (*p->mutable_shape())["K"] = k;
  return spec;
}

// Steps until the trajectory first reaches `target_ratio` (1-based), or 0.
int StepsToReach(store::JobStore* store, const std::string& job, double target_ratio) {
  auto rows = *store->ListTrajectory(job);
  for (size_t i = 0; i < rows.size(); ++i) {
    if (rows[i].reward >= target_ratio * 0.999) return static_cast<int>(i) + 1;
  }
  return 0;
}

double BestRatio(const v1::Job& job) {
  return json::parse(job.result_json())["best"]["speedup"].get<double>();
}

TEST_CASE("a tune job runs verified candidates on a worker and records every step", "[planner]") {
  Stack s("e2e");
  v1::Job job = s.Tune(GemmSpec(64, 64, 64, 8));
  INFO(job.error() << " " << job.result_json());
  REQUIRE(job.state() == v1::JOB_STATE_SUCCEEDED);
  json r = json::parse(job.result_json());
  CHECK(r["tried"].get<int>() == 8);
  CHECK(r["target"] == "interp");
  CHECK(r["best"]["speedup"].get<double>() >= 1.0);  // at least the baseline template itself
  CHECK(!r["best"]["source"].get<std::string>().empty());
  CHECK(!r["best"]["invariants"].empty());
  auto rows = *s.store()->ListTrajectory(job.id());
  REQUIRE(rows.size() == 8);
  CHECK(*s.store()->CountRows("candidates") == 8);
  bool saw_knob = false;
  for (const auto& row : rows) {
    json d = json::parse(row.detail_json);
    for (const char* key : {"parent", "config", "diff", "verifier", "outcome", "reward"}) {
      INFO(key);
      CHECK(d.contains(key));
    }
    CHECK(d["verifier"]["passed"] == true);
    CHECK(d["verifier"]["gate"] == "verifier");  // the Z3 verifier, in-process
    CHECK(d["verifier"]["obligations"].get<int>() > 0);
    CHECK(d["outcome"]["outcome"] == "ok");
    // speed-up = baseline_time / time, the worker's raw times kept beside it
    CHECK(row.reward == Approx(d["outcome"]["speedup"].get<double>()));
    CHECK(row.reward ==
          Approx(d["outcome"]["baseline_time"].get<double>() / d["outcome"]["time"].get<double>()));
    if (row.action == "knob") {
      saw_knob = true;
      CHECK(!d["parent"].get<std::string>().empty());
      CHECK(d["diff"].get<std::string>().find("->") != std::string::npos);
    }
  }
  CHECK(saw_knob);
}

// The verifier is the gate: a KB whose gemm templates include a seeded bug
// from tests/verifier/bugs. That candidate is rejected before any worker
// sees it, its counterexample stored with the step and the candidate; the
// clean templates run.
TEST_CASE("the verifier gate rejects a seeded bug with its counterexample - clean ones run",
          "[planner]") {
  const std::string src = ARGUS_SOURCE_DIR;
  // A copy of the source tree's kb/.
  fs::path root = fs::temp_directory_path() / "argus_planner_test_seeded";
  fs::path kb = root / "kb";
  fs::remove_all(root);
  fs::create_directories(root);
  fs::copy(src + "/kb", kb, fs::copy_options::recursive);
  fs::copy_file(src + "/tests/verifier/bugs/wrong_tile_offset.py", kb / "templates/gemm_seeded.py");
  json t = json::parse(std::ifstream(kb / "templates/gemm_mma.json"));
  t["id"] = "gemm_seeded";
  t["source"] = "gemm_seeded.py";
  std::ofstream(kb / "templates/gemm_seeded.json") << t.dump(2);
  PlannerOptions po;
  po.kb_dir = kb.string();
  po.use_memory = false;
  Stack s("seeded", po);
  v1::JobSpec spec = GemmSpec(128, 128, 128, 6);
  spec.mutable_problem()->set_dtype("bf16");
  v1::Job job = s.Tune(spec);
  INFO(job.error() << " " << job.result_json());
  REQUIRE(job.state() == v1::JOB_STATE_SUCCEEDED);
  bool seeded = false, clean_mma = false;
  auto rows = *s.store()->ListTrajectory(job.id());
  for (const auto& row : rows) {
    json d = json::parse(row.detail_json);
    std::string tmpl = d["config"]["template"];
    INFO(tmpl << ": " << d.dump());
    if (tmpl == "gemm_seeded") {
      seeded = true;
      CHECK(d["outcome"]["outcome"] == "rejected");
      CHECK(row.reward == 0);
      CHECK(d["verifier"]["passed"] == false);
      json v;
      for (const json& x : d["verifier"]["violations"])
        if (x["kind"] == "tag_assert" && v.is_null()) v = x;
      REQUIRE(v.is_object());
      CHECK(v["line"] == 38);
      CHECK(v["counterexample"]["expected"].get<std::string>().find("A(") == 0);
      CHECK(v["counterexample"]["actual"].get<std::string>().find("A(") == 0);
      CHECK(v["message"].get<std::string>().find("iteration k=") != std::string::npos);
      // No task was made for it: the worker never saw it.
    } else if (tmpl == "gemm_mma") {
      clean_mma = true;
      CHECK(d["verifier"]["passed"] == true);
      CHECK(d["outcome"]["outcome"] == "ok");
    }
  }
  CHECK(seeded);
  CHECK(clean_mma);
  // The dashboard's view of the rejected candidate: verdict and diagnostics.
  auto tasks = *s.store()->CountRows("tasks");
  auto cands = *s.store()->CountRows("candidates");
  CHECK(tasks < cands);  // rejected candidates never became tasks
}

TEST_CASE("bad tune requests are refused with a reason", "[planner]") {
  Stack s("bad");
  v1::JobSpec spec = GemmSpec(64, 64, 64, 4);
  spec.mutable_problem()->set_family("conv9d");
  v1::Job job;
  auto st = s.Submit(spec, &job);
  CHECK(st.error_code() == grpc::INVALID_ARGUMENT);
  CHECK(st.error_message().find("unknown problem") != std::string::npos);
  spec = GemmSpec(64, 64, 64, 4);
  spec.set_target("sm_75");
  CHECK(s.Submit(spec, &job).error_code() == grpc::INVALID_ARGUMENT);
  // A problem no template fits on the target fails the job with the reason.
  spec = GemmSpec(64, 64, 64, 4);
  spec.mutable_problem()->set_dtype("e4m3");
  spec.set_target("gfx942");
  spec.mutable_problem()->set_family("rmsnorm");
  spec.mutable_problem()->mutable_shape()->clear();
  (*spec.mutable_problem()->mutable_shape())["R"] = 4;
  (*spec.mutable_problem()->mutable_shape())["N"] = 64;
  spec.mutable_problem()->set_dtype("f32");
  v1::Job failed = s.Tune(spec);
  CHECK(failed.state() == v1::JOB_STATE_FAILED);
  CHECK(failed.error().find("no KB template fits") != std::string::npos);
}

TEST_CASE("a worker that cannot run candidates fails the job with the reason", "[planner]") {
  Stack s("nohandler", {}, true, /*interp_handler=*/false);
  v1::Job job = s.Tune(SoftmaxSpec(8, 512, 3));
  INFO(job.error());
  REQUIRE(job.state() == v1::JOB_STATE_FAILED);
  // Nothing measured: no parent for knob moves, so the policy stops after the
  // family's templates, one step each.
  auto rows = *s.store()->ListTrajectory(job.id());
  REQUIRE(!rows.empty());
  CHECK(rows.size() <= 3);
  CHECK(job.error().find(absl::StrCat("no candidate passed (", rows.size(), " tried)")) !=
        std::string::npos);
  // The template the worker was given failed there, with the worker's reason.
  int worker_errors = 0;
  for (const auto& r : rows) {
    json d = json::parse(r.detail_json);
    CHECK(r.reward == 0);
    if (d["outcome"]["outcome"] != "worker_error") continue;
    ++worker_errors;
    CHECK(d["outcome"].value("message", "").find("no handler for task kind 'candidate'") !=
          std::string::npos);
  }
  CHECK(worker_errors >= 1);
}

TEST_CASE("a tune job interrupted by a server restart resumes from its trajectory", "[planner]") {
  std::string id;
  {
    Stack s("resume");
    v1::Job job;
    REQUIRE(s.Submit(SoftmaxSpec(8, 512, 6), &job).ok());
    id = job.id();
    for (int i = 0; i < 3000 && s.store()->ListTrajectory(id)->size() < 2; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }  // the server stops mid-job
  Stack s("resume", {}, /*fresh=*/false);
  v1::Job job;
  for (int i = 0; i < 3000; ++i) {
    job = *s.store()->GetJob(id, false);
    if (job.state() >= v1::JOB_STATE_SUCCEEDED) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  INFO(job.error());
  REQUIRE(job.state() == v1::JOB_STATE_SUCCEEDED);
  auto rows = *s.store()->ListTrajectory(id);
  REQUIRE(rows.size() >= 4);  // every untried softmax config, no more than the budget
  CHECK(rows.size() <= 6);
  std::set<std::string> configs;
  for (size_t i = 0; i < rows.size(); ++i) {
    CHECK(rows[i].step == static_cast<int>(i));
    configs.insert(json::parse(rows[i].detail_json)["config"].dump());
  }
  CHECK(configs.size() == rows.size());  // nothing re-run after the restart
}

// Memory across jobs: a job of a neighbouring shape, warm-started from the
// first job's trajectory, reaches the best ratio a cold start finds in
// markedly fewer candidates.
TEST_CASE("retrieval of a similar past trajectory warm-starts a job", "[planner]") {
  const int kBudget = 12;
  double cold_best;
  int cold_steps;
  {
    Stack cold("cold");
    v1::Job b = cold.Tune(SoftmaxSpec(8, 1024, kBudget));
    REQUIRE(b.state() == v1::JOB_STATE_SUCCEEDED);
    cold_best = BestRatio(b);
    cold_steps = StepsToReach(cold.store(), b.id(), cold_best);
  }
  Stack warm("warm");
  v1::Job a = warm.Tune(SoftmaxSpec(8, 512, kBudget));
  REQUIRE(a.state() == v1::JOB_STATE_SUCCEEDED);
  v1::Job c = warm.Tune(SoftmaxSpec(8, 1024, kBudget));
  REQUIRE(c.state() == v1::JOB_STATE_SUCCEEDED);
  int warm_steps = StepsToReach(warm.store(), c.id(), cold_best);
  INFO("cold start reached " << cold_best << " after " << cold_steps << " candidates; warm after "
                             << warm_steps);
  REQUIRE(warm_steps > 0);
  CHECK(json::parse(c.result_json())["retrieved"].get<int>() > 0);
  CHECK(warm_steps * 2 <= cold_steps);
  auto rows = *warm.store()->ListTrajectory(c.id());
  CHECK(rows[0].action == "retrieved");
}

}  // namespace
}  // namespace argus::planner
