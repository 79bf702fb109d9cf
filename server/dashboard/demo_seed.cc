#include "server/dashboard/demo_seed.h"

#include <chrono>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "base/status.h"
#include "nlohmann/json.hpp"

namespace argus::dashboard {

absl::StatusOr<SeededJob> SeedTuneJob(store::JobStore* store, const std::string& source, int n) {
  using nlohmann::json;
  int64_t now = std::chrono::duration_cast<std::chrono::milliseconds>(
                    std::chrono::system_clock::now().time_since_epoch())
                    .count();
  v1::JobSpec spec;
  spec.set_kind(v1::JOB_KIND_TUNE);
  spec.set_target("sm_90a");
  spec.set_client("demo");
  spec.set_max_candidates(n);
  spec.mutable_problem()->set_family("gemm");
  spec.mutable_problem()->set_dtype("bf16");
  for (const char* d : {"M", "N", "K"}) (*spec.mutable_problem()->mutable_shape())[d] = 4096;
  ASSIGN_OR_RETURN(v1::Job job, store->CreateJob(spec, {}, now, now + 3'600'000));

  // Lines of the source that carry an assertion: the verified invariants.
  json invariants = json::array();
  int line_no = 0, assert_line = 1;
  for (absl::string_view line : absl::StrSplit(source, '\n')) {
    ++line_no;
    if (line.find("assert_tag") != absl::string_view::npos) {
      invariants.push_back({{"line", line_no},
                            {"text", "A/B operand tags hold for every thread, element and k"},
                            {"status", "proved"}});
      assert_line = line_no;
    }
  }
  SeededJob out;
  out.job_id = job.id();
  std::string parent;
  const char* actions[] = {"template:gemm_mma",     "knob:BK=64",
                           "technique:swizzle",     "knob:STAGES=3",
                           "repair:counterexample", "knob:warps=(4,2)"};
  for (int i = 0; i < n; ++i) {
    std::string id = absl::StrCat(job.id(), "-c", i + 1);
    bool rejected = i % 4 == 2;
    json detail;
    detail["action"] = actions[i % 6];
    detail["constants"] = {{"BM", 128}, {"BN", 128}, {"BK", i % 2 ? 64 : 32}};
    double speedup = 0;
    if (rejected) {
      detail["verdict"] = "rejected";
      detail["diagnostics"] = json::array(
          {{{"file", "gemm.py"},
            {"line", assert_line},
            {"col", 9},
            {"message", "tag assertion refuted: A operand from the wrong pipeline stage"},
            {"counterexample",
             {{"thread", 37},
              {"element", 5},
              {"iteration", {{"k", 2}}},
              {"expected", "A(13,70)"},
              {"found", "A(13,38) written at gemm.py:30 in iteration 1"}}}}});
      ++out.rejected;
    } else {
      // A rising, noisy curve that settles above the vendor baseline.
      speedup = 0.55 + 0.65 * (1.0 - 1.0 / (1.0 + 0.35 * i)) + ((i * 7) % 5) * 0.03;
      detail["verdict"] = "verified";
      detail["invariants"] = invariants;
      detail["speedup"] = speedup;
      detail["time_us"] = 512.0 / speedup;
      detail["baseline_us"] = 512.0;
    }
    std::string src = absl::StrCat("# candidate ", i + 1, " (", actions[i % 6], ")\n", source);
    // The header line shifts every source line by one.
    if (detail.contains("invariants")) {
      for (auto& inv : detail["invariants"]) inv["line"] = inv["line"].get<int>() + 1;
    }
    if (detail.contains("diagnostics")) {
      for (auto& d : detail["diagnostics"]) d["line"] = d["line"].get<int>() + 1;
    }
    RETURN_IF_ERROR(store->AddCandidate(id, job.id(), parent, src, detail.dump(), now + i));
    RETURN_IF_ERROR(store->AddTrajectoryStep(job.id(), i, id, actions[i % 6],
                                             json{{"verdict", detail["verdict"]}}.dump(),
                                             rejected ? -1.0 : speedup, now + i));
    if (!rejected && speedup > out.best_speedup) {
      out.best_speedup = speedup;
      out.best_candidate_id = id;
    }
    if (!rejected) parent = id;
    ++out.candidates;
  }
  return out;
}

}  // namespace argus::dashboard
