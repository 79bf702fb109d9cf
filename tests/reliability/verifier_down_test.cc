// Reliability: the verifier service down mid-job (issue 9.4). The server's
// planner gates every candidate with a separate argus-verifier process and
// the worker re-verifies before it runs one; the verifier is SIGKILLed while
// tune jobs run and restarted on the same address seconds later. Jobs wait
// and resume: every one finishes, none fails for it. Prints its figure.
#include <signal.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdio>
#include <thread>

#include "argus/v1/jobs.grpc.pb.h"
#include "gpu_worker/dial.h"
#include "tests/e2e/harness.h"
#include "tests/reliability/store_count.h"
#include "tests/reliability/submit.h"

namespace argus::reliability {
namespace {

using Clock = std::chrono::steady_clock;
using e2e::Harness;

TEST_CASE("the verifier service down mid-job: jobs wait and resume, none fails", "[reliability]") {
  constexpr int kJobs = 3;
  Harness h;
  std::string verifier = h.StartVerifier();
  h.StartServer({"--heartbeat_ms", "200", "--lease_ms", "5000", "--verifier", verifier});
  h.StartWorker({"--backend", "interp", "--verifier", verifier});
  auto jobs = v1::JobService::NewStub(worker::Dial(h.address(), {}));
  for (int i = 0; i < kJobs; ++i) {
    std::string id;
    REQUIRE(SubmitTune(jobs.get(), 256 << i, 4, "verifier-down", &id).ok());
  }
  const std::string steps = "SELECT COUNT(*) FROM trajectory_steps";
  REQUIRE(Harness::WaitFor([&] { return Count(h.db(), steps) >= 1; }, 60'000));
  h.KillVerifier(SIGKILL);
  auto killed = Clock::now();
  int64_t steps_at_kill = Count(h.db(), steps);
  // While it is down nothing is gated: at most the candidates already past
  // the gate finish; no job fails.
  std::this_thread::sleep_for(std::chrono::seconds(4));
  int64_t steps_while_down = Count(h.db(), steps) - steps_at_kill;
  int64_t failed_while_down = Count(h.db(), "SELECT COUNT(*) FROM jobs WHERE state = 4");
  CHECK(failed_while_down == 0);
  CHECK(steps_while_down <= kJobs);  // each job's in-flight candidate at most
  REQUIRE(h.StartVerifier(verifier) == verifier);
  double down_s = std::chrono::duration<double>(Clock::now() - killed).count();
  auto restarted = Clock::now();
  REQUIRE(Harness::WaitFor(
      [&] { return Count(h.db(), "SELECT COUNT(*) FROM jobs WHERE state >= 3") == kJobs; },
      180'000));
  double resume_s = std::chrono::duration<double>(Clock::now() - restarted).count();
  int64_t succeeded = Count(h.db(), "SELECT COUNT(*) FROM jobs WHERE state = 3");
  int64_t failed = Count(h.db(), "SELECT COUNT(*) FROM jobs WHERE state = 4");
  int64_t total_steps = Count(h.db(), steps);
  int64_t waited = Count(h.db(),
                         "SELECT COUNT(*) FROM trajectory_steps WHERE "
                         "json_extract(detail_json, '$.verifier.waited_ms') > 0");
  int64_t max_wait_ms = Count(h.db(),
                              "SELECT COALESCE(MAX(json_extract(detail_json, "
                              "'$.verifier.waited_ms')), 0) FROM trajectory_steps");
  // Steps recorded as failed because of the outage (the gate or the worker
  // could not reach the verifier): there must be none.
  int64_t not_ok = Count(h.db(),
                         "SELECT COUNT(*) FROM trajectory_steps WHERE "
                         "json_extract(detail_json, '$.verifier.violations[0].kind') IN "
                         "('unavailable', 'verifier_error') OR json_extract(detail_json, "
                         "'$.outcome.outcome') IN ('worker_error', 'verifier_unavailable')");
  std::printf(
      "figure: argus-verifier SIGKILLed mid-job, down %.1f s, restarted on %s: %d tune jobs, "
      "%lld finished (%lld succeeded, %lld failed) %.1f s after the restart; %lld steps, "
      "%lld of them waited for the verifier (longest wait %.1f s), %lld failed for it\n",
      down_s, verifier.c_str(), kJobs, (long long)(succeeded + failed), (long long)succeeded,
      (long long)failed, resume_s, (long long)total_steps, (long long)waited, max_wait_ms / 1000.0,
      (long long)not_ok);
  CHECK(succeeded == kJobs);
  CHECK(failed == 0);
  CHECK(waited >= 1);  // at least one gate call spanned the outage
  CHECK(not_ok == 0);  // no candidate was recorded as failed for it
  CHECK(total_steps >= kJobs);
}

}  // namespace
}  // namespace argus::reliability
