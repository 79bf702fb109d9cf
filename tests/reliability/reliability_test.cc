// Reliability: server SIGKILL mid-batch, worker SIGKILL holding a lease, a
// full disk under the store, and a load test on loopback. Every test prints
// its figure and counts rows in the SQLite store itself.
#include <grpcpp/grpcpp.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

#include "argus/v1/jobs.grpc.pb.h"
#include "argus/v1/workers.grpc.pb.h"
#include "gpu_worker/dial.h"
#include "nlohmann/json.hpp"
#include "server/server.h"
#include "tests/e2e/harness.h"
#include "tests/reliability/full_disk.h"
#include "tests/reliability/store_count.h"
#include "tests/reliability/submit.h"

namespace argus::reliability {
namespace {

using Clock = std::chrono::steady_clock;
using e2e::Harness;

int AliveWorkers(v1::JobService::Stub* jobs) {
  v1::ListWorkersResponse resp;
  if (!jobs->ListWorkers(Ctx().get(), {}, &resp).ok()) return -1;
  return static_cast<int>(std::count_if(resp.workers().begin(), resp.workers().end(),
                                        [](auto& w) { return w.alive(); }));
}

double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(p * v.size()))];
}

const char* kTasksDone = "SELECT COUNT(*) FROM tasks WHERE state = 'done'";
const char* kJobs = "SELECT COUNT(*) FROM jobs";
const char* kTasks = "SELECT COUNT(*) FROM tasks";
// Jobs whose task count is not exactly one (probe_workers = 1): duplicates.
const char* kBadJobs =
    "SELECT COUNT(*) FROM (SELECT job_id, COUNT(*) n FROM tasks GROUP BY job_id HAVING n != 1)";

TEST_CASE("server SIGKILLed mid-batch restarts with every job and result intact", "[reliability]") {
  Harness h;
  h.StartServer({"--heartbeat_ms", "100", "--lease_ms", "1500", "--max_jobs_per_client", "0"});
  std::string addr = h.address();
  for (int i = 0; i < 3; ++i) h.StartWorker({"--task_delay_ms", "40"});
  auto jobs = v1::JobService::NewStub(worker::Dial(addr, {}));
  REQUIRE(Harness::WaitFor([&] { return AliveWorkers(jobs.get()) == 3; }, 20'000));
  const int kJobsN = 120;
  for (int i = 0; i < kJobsN; ++i) REQUIRE(SubmitProbe(jobs.get(), "batch").ok());
  REQUIRE(Harness::WaitFor([&] { return Count(h.db(), kTasksDone) >= 20; }, 30'000));
  h.KillServer(SIGKILL);
  int64_t jobs_before = Count(h.db(), kJobs), done_before = Count(h.db(), kTasksDone);
  int64_t results_before =
      Count(h.db(), "SELECT COUNT(*) FROM tasks WHERE state = 'done' AND result_json != ''");
  std::printf("server SIGKILLed with %lld jobs, %lld tasks done (%lld results stored)\n",
              (long long)jobs_before, (long long)done_before, (long long)results_before);
  CHECK(jobs_before == kJobsN);
  CHECK(done_before < kJobsN);  // really mid-batch
  h.StartServer({"--heartbeat_ms", "100", "--lease_ms", "1500", "--max_jobs_per_client", "0"},
                addr);
  REQUIRE(Harness::WaitFor([&] { return Count(h.db(), kTasksDone) == kJobsN; }, 60'000));
  int64_t succeeded = Count(h.db(), "SELECT COUNT(*) FROM jobs WHERE state = 3");
  std::printf(
      "figure: after restart %lld jobs, %lld tasks, %lld done, %lld jobs succeeded, "
      "%lld jobs with duplicate tasks\n",
      (long long)Count(h.db(), kJobs), (long long)Count(h.db(), kTasks),
      (long long)Count(h.db(), kTasksDone), (long long)succeeded,
      (long long)Count(h.db(), kBadJobs));
  CHECK(Count(h.db(), kJobs) == kJobsN);
  CHECK(Count(h.db(), kTasks) == kJobsN);
  CHECK(Count(h.db(), kBadJobs) == 0);
  CHECK(Harness::WaitFor(
      [&] { return Count(h.db(), "SELECT COUNT(*) FROM jobs WHERE state = 3") == kJobsN; },
      10'000));
}

TEST_CASE("a worker SIGKILLed holding a lease: the task is re-leased and finished once",
          "[reliability]") {
  Harness h;
  h.StartServer({"--heartbeat_ms", "100", "--lease_ms", "800"});
  auto jobs = v1::JobService::NewStub(worker::Dial(h.address(), {}));
  int slow = h.StartWorker({"--task_delay_ms", "30000"});
  REQUIRE(Harness::WaitFor([&] { return AliveWorkers(jobs.get()) == 1; }, 20'000));
  std::string id;
  REQUIRE(SubmitProbe(jobs.get(), "kill", &id).ok());
  std::string leased =
      "SELECT COUNT(*) FROM tasks WHERE state = 'leased' AND job_id = '" + id + "'";
  REQUIRE(Harness::WaitFor([&] { return Count(h.db(), leased) == 1; }, 10'000));
  h.KillWorker(slow, SIGKILL);
  auto killed = Clock::now();
  h.StartWorker();
  std::string done = "SELECT COUNT(*) FROM tasks WHERE state = 'done' AND job_id = '" + id + "'";
  REQUIRE(Harness::WaitFor([&] { return Count(h.db(), done) == 1; }, 20'000));
  double s = std::chrono::duration<double>(Clock::now() - killed).count();
  int64_t attempts = Count(h.db(), "SELECT attempts FROM tasks WHERE job_id = '" + id + "'");
  int64_t rows = Count(h.db(), "SELECT COUNT(*) FROM tasks WHERE job_id = '" + id + "'");
  std::printf(
      "figure: lease of a SIGKILLed worker re-leased and done %.2f s later; "
      "attempts %lld, task rows %lld\n",
      s, (long long)attempts, (long long)rows);
  CHECK(attempts == 2);
  CHECK(rows == 1);
}

TEST_CASE(
    "a candidate's runner that hangs and one that faults: watchdog outcomes and the worker "
    "goes on",
    "[reliability]") {
  Harness h;
  h.StartServer({"--heartbeat_ms", "200", "--lease_ms", "5000"});
  // A stand-in argus-runner (no GPU here): the first candidate it is given
  // hangs, the second dies of SIGSEGV, the rest report a result. The real
  // worker compiles each candidate to PTX and runs this under its watchdog.
  std::string calls = h.dir() + "/calls";
  std::filesystem::create_directory(calls);
  std::string runner = h.dir() + "/fake-runner.sh";
  std::ofstream(runner)
      << "#!/bin/sh\n"
      << "case \" $* \" in *\" --inventory \"*) exit 3;; esac\n"
      << "n=$(ls " << calls << " | wc -l); touch " << calls << "/$$\n"
      << "case $n in\n"
      << "  0) exec sleep 600;;\n"
      << "  1) kill -SEGV $$;;\n"
      << "  *) echo '{\"outcome\":\"ok\",\"message\":\"stand-in\",\"ratio\":1.5}' "
         "> \"$4\"; exit 0;;\n"
      << "esac\n";
  chmod(runner.c_str(), 0755);
  std::ifstream src(std::string(ARGUS_SOURCE_DIR) + "/examples/rmsnorm.py");
  std::stringstream ss;
  ss << src.rdbuf();
  nlohmann::json payload = {{"source", ss.str()},
                            {"kernel", "rmsnorm"},
                            {"target", "sm_90a"},
                            {"backend", "gpu"},
                            {"dims", {{"R", 4}, {"N", 64}}},
                            {"check", {{"op", "rmsnorm"}, {"a", "X"}, {"b", "W"}, {"c", "Y"}}},
                            {"timeout_s", 1}};
  constexpr int kCandidates = 4;
  std::string job_id;
  {
    // Candidate tasks go into the store as the planner adds them; the server
    // hands them out like any other.
    auto store = store::JobStore::Open(h.db());
    REQUIRE(store.ok());
    v1::JobSpec spec;
    spec.set_kind(v1::JOB_KIND_PROBE);
    spec.set_client("faults");
    std::vector<store::NewTask> tasks(kCandidates, {"candidate", payload.dump(), "", false});
    int64_t now = std::chrono::duration_cast<std::chrono::milliseconds>(
                      std::chrono::system_clock::now().time_since_epoch())
                      .count();
    auto job = (*store)->CreateJob(spec, tasks, now, now + 120'000);
    REQUIRE(job.ok());
    job_id = job->id();
  }
  auto t0 = Clock::now();
  h.StartWorker({"--runner", runner, "--runner_grace_s", "1"});
  std::string finished =
      "SELECT COUNT(*) FROM jobs WHERE state IN (3, 4) AND id = '" + job_id + "'";
  REQUIRE(Harness::WaitFor([&] { return Count(h.db(), finished) == 1; }, 60'000));
  double s = std::chrono::duration<double>(Clock::now() - t0).count();
  auto store = store::JobStore::Open(h.db());
  REQUIRE(store.ok());
  auto job = (*store)->GetJob(job_id);
  REQUIRE(job.ok());
  std::map<std::string, int> outcomes;
  std::set<std::string> workers;
  std::string timeout_msg, crash_msg;
  for (const auto& t : job->tasks()) {
    auto r = nlohmann::json::parse(t.result_json(), nullptr, false);
    std::string o = r.is_object() ? r.value("outcome", "?") : "?";
    ++outcomes[o];
    workers.insert(t.worker_id());
    if (o == "timeout") timeout_msg = r.value("message", "");
    if (o == "crash") crash_msg = r.value("message", "");
    CHECK(t.state() == "done");
    CHECK(t.attempts() == 1);
  }
  CHECK(job->state() == v1::JOB_STATE_SUCCEEDED);
  CHECK(outcomes["timeout"] == 1);
  CHECK(outcomes["crash"] == 1);
  CHECK(outcomes["ok"] == kCandidates - 2);
  CHECK(workers.size() == 1);  // one worker did all four: it went on after both faults
  CHECK(timeout_msg.find("watchdog") != std::string::npos);
  CHECK(crash_msg.find("signal 11") != std::string::npos);
  auto jobs = v1::JobService::NewStub(worker::Dial(h.address(), {}));
  CHECK(AliveWorkers(jobs.get()) == 1);
  std::printf(
      "figure: %d candidates on one worker: hang -> %s; fault -> %s; %d more ok; all done in "
      "%.1f s, worker alive\n",
      kCandidates, timeout_msg.c_str(), crash_msg.substr(0, crash_msg.find(" without")).c_str(),
      outcomes["ok"], s);
}

TEST_CASE("cancelling a job stops its running candidate within a second and the worker goes on",
          "[reliability]") {
  Harness h;
  h.StartServer();  // default heartbeat (2 s): a worker with a task heartbeats faster itself
  // A stand-in argus-runner that records its pid and hangs (no GPU here).
  std::string pid_file = h.dir() + "/runner.pid";
  std::string runner = h.dir() + "/hanging-runner.sh";
  std::ofstream(runner) << "#!/bin/sh\n"
                        << "case \" $* \" in *\" --inventory \"*) exit 3;; esac\n"
                        << "echo $$ > " << pid_file << ".tmp && mv " << pid_file << ".tmp "
                        << pid_file << "\nexec sleep 600\n";
  chmod(runner.c_str(), 0755);
  std::ifstream src(std::string(ARGUS_SOURCE_DIR) + "/examples/rmsnorm.py");
  std::stringstream ss;
  ss << src.rdbuf();
  nlohmann::json payload = {{"source", ss.str()},
                            {"kernel", "rmsnorm"},
                            {"target", "sm_90a"},
                            {"backend", "gpu"},
                            {"dims", {{"R", 4}, {"N", 64}}},
                            {"check", {{"op", "rmsnorm"}, {"a", "X"}, {"b", "W"}, {"c", "Y"}}},
                            {"timeout_s", 300}};
  std::string job_id;
  {
    auto store = store::JobStore::Open(h.db());
    REQUIRE(store.ok());
    v1::JobSpec spec;
    spec.set_kind(v1::JOB_KIND_PROBE);
    spec.set_client("cancel");
    int64_t now = std::chrono::duration_cast<std::chrono::milliseconds>(
                      std::chrono::system_clock::now().time_since_epoch())
                      .count();
    auto job =
        (*store)->CreateJob(spec, {{"candidate", payload.dump(), "", false}}, now, now + 600'000);
    REQUIRE(job.ok());
    job_id = job->id();
  }
  h.StartWorker({"--runner", runner});
  int pid = 0;
  REQUIRE(Harness::WaitFor(
      [&] {
        std::ifstream f(pid_file);
        return static_cast<bool>(f >> pid);
      },
      60'000));
  auto runner_alive = [&] {
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string line;
    // Gone, or a zombie the worker has not reaped yet: either way not running.
    return std::getline(stat, line) && line.find(") Z ") == std::string::npos;
  };
  REQUIRE(runner_alive());
  auto jobs = v1::JobService::NewStub(worker::Dial(h.address(), {}));
  grpc::ClientContext ctx;
  v1::CancelJobRequest req;
  req.set_id(job_id);
  v1::Job cancelled;
  auto t0 = Clock::now();
  REQUIRE(jobs->CancelJob(&ctx, req, &cancelled).ok());
  REQUIRE(Harness::WaitFor([&] { return !runner_alive(); }, 10'000));
  double stopped_s = std::chrono::duration<double>(Clock::now() - t0).count();
  CHECK(stopped_s < 1.0);
  // The worker is free: the next job runs at once.
  auto probe = h.Cli({"probe"});
  CHECK(probe.exit_code == 0);
  double next_s = std::chrono::duration<double>(Clock::now() - t0).count();
  std::printf(
      "figure: job cancelled while its candidate's runner ran: runner stopped %.2f s after "
      "CancelJob answered; the next job (a probe) done %.2f s after it\n",
      stopped_s, next_s);
}

TEST_CASE("a full disk: the server refuses new work clearly and loses nothing committed",
          "[reliability]") {
  Harness h;
  FullDisk disk(&h);
  auto start = [&] {
    h.StartServer({"--db", disk.db(), "--heartbeat_ms", "100", "--lease_ms", "1500",
                   "--max_jobs_per_client", "0"});
  };
  start();
  auto jobs = v1::JobService::NewStub(worker::Dial(h.address(), {}));
  auto workers = v1::WorkerService::NewStub(worker::Dial(h.address(), {}));
  v1::RegisterWorkerResponse reg;
  REQUIRE(workers->RegisterWorker(Ctx().get(), {}, &reg).ok());
  constexpr int kBefore = 50;
  std::set<std::string> ids;
  for (int i = 0; i < kBefore; ++i) {
    std::string id;
    REQUIRE(SubmitProbe(jobs.get(), "filler-" + std::string(200, 'x'), &id).ok());
    ids.insert(id);
  }
  disk.Fill();
  grpc::Status refused = SubmitProbe(jobs.get(), "full");
  std::printf("figure: disk full after %d jobs; next submit: code %d \"%s\"\n", kBefore,
              refused.error_code(), refused.error_message().c_str());
  CHECK(refused.error_code() == grpc::UNAVAILABLE);
  CHECK(refused.error_message().find("full") != std::string::npos);
  // Reads still work while full, and every accepted job is there.
  int readable = 0;
  for (const auto& id : ids) {
    v1::GetJobRequest get;
    get.set_id(id);
    v1::Job job;
    readable += jobs->GetJob(Ctx().get(), get, &job).ok();
  }
  CHECK(readable == kBefore);
  h.KillServer(SIGKILL);
  // The committed jobs survive; with space back the restarted server takes work.
  CHECK(Count(disk.db(), kJobs) == kBefore);
  disk.Free();
  start();
  jobs = v1::JobService::NewStub(worker::Dial(h.address(), {}));
  CHECK(SubmitProbe(jobs.get(), "after").ok());
  std::printf(
      "figure: while full %d of %d jobs readable; after SIGKILL and restart with space: %lld "
      "jobs (%d committed before + 1)\n",
      readable, kBefore, (long long)Count(disk.db(), kJobs), kBefore);
  CHECK(Count(disk.db(), kJobs) == kBefore + 1);
}

TEST_CASE("load: 10,000 jobs from 20 clients against 8 workers on loopback", "[reliability]") {
  // The store lives on tmpfs when there is one: this measures the server,
  // not the disk's fsync.
  std::string base = std::filesystem::exists("/dev/shm") ? "/dev/shm" : "/tmp";
  std::string dir = base + "/argus-load-" + std::to_string(getpid());
  std::filesystem::create_directories(dir);
  server::ServerOptions opt;
  opt.db_path = dir + "/argus.db";
  opt.heartbeat_ms = 30'000;  // alive for the whole test without heartbeats
  opt.lease_ms = 120'000;
  opt.max_concurrent_jobs_per_client = 0;
  server::Server server(opt);
  auto addr = server.Start();
  REQUIRE(addr.ok());
  const int kClients = 20, kWorkers = 8, kPerClient = 500, kTotal = kClients * kPerClient;

  std::atomic<int> reported{0}, refused_reports{0};
  std::atomic<bool> stop{false}, go{false};
  std::mutex mu;
  std::vector<double> lease_ms, submit_ms;
  std::map<std::string, int> reports_per_task;
  std::vector<std::thread> threads;
  for (int w = 0; w < kWorkers; ++w) {
    threads.emplace_back([&] {
      auto stub = v1::WorkerService::NewStub(worker::Dial(*addr, {}));
      v1::RegisterWorkerResponse reg;
      REQUIRE(stub->RegisterWorker(Ctx().get(), {}, &reg).ok());
      std::vector<double> mine;
      std::map<std::string, int> seen;
      while (!go.load()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
      while (!stop.load()) {
        auto t0 = Clock::now();
        v1::LeaseTaskRequest lr;
        lr.set_worker_id(reg.worker_id());
        lr.set_wait_ms(200);
        v1::LeaseTaskResponse lease;
        if (!stub->LeaseTask(Ctx().get(), lr, &lease).ok() || !lease.granted()) continue;
        v1::ReportResultRequest rr;
        rr.set_worker_id(reg.worker_id());
        rr.set_task_id(lease.task().task_id());
        rr.set_ok(true);
        rr.set_result_json("{\"hostname\":\"load\"}");
        v1::ReportResultResponse rep;
        if (stub->ReportResult(Ctx().get(), rr, &rep).ok() && rep.accepted()) {
          mine.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
          seen[lease.task().task_id()]++;
          reported.fetch_add(1);
        } else {
          refused_reports.fetch_add(1);
        }
      }
      std::lock_guard lock(mu);
      lease_ms.insert(lease_ms.end(), mine.begin(), mine.end());
      for (auto& [k, v] : seen) reports_per_task[k] += v;
    });
  }
  auto jobs0 = v1::JobService::NewStub(worker::Dial(*addr, {}));
  REQUIRE(Harness::WaitFor([&] { return AliveWorkers(jobs0.get()) == kWorkers; }, 20'000));
  auto t_start = Clock::now();
  std::atomic<int> submit_errors{0};
  std::vector<std::thread> clients;
  for (int c = 0; c < kClients; ++c) {
    clients.emplace_back([&, c] {
      auto stub = v1::JobService::NewStub(worker::Dial(*addr, {}));
      std::vector<double> mine;
      for (int i = 0; i < kPerClient; ++i) {
        auto t0 = Clock::now();
        if (!SubmitProbe(stub.get(), "client-" + std::to_string(c)).ok()) submit_errors++;
        mine.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
      }
      std::lock_guard lock(mu);
      submit_ms.insert(submit_ms.end(), mine.begin(), mine.end());
    });
  }
  for (auto& t : clients) t.join();
  double submit_s = std::chrono::duration<double>(Clock::now() - t_start).count();
  // Then the workers drain the queue: a lease round trip never waits for work.
  auto t_drain = Clock::now();
  go.store(true);
  bool all = Harness::WaitFor([&] { return reported.load() >= kTotal; }, 120'000);
  double drain_s = std::chrono::duration<double>(Clock::now() - t_drain).count();
  stop.store(true);
  for (auto& t : threads) t.join();
  server.Shutdown();
  int dup = 0;
  for (auto& [k, v] : reports_per_task) dup += v > 1;
  std::printf(
      "figure: load %d jobs from %d clients: %.1f s, %.0f submits/s, submit p50 %.2f ms, p99 %.2f "
      "ms\nfigure: %d workers drained them in %.1f s, %.0f tasks/s, lease+report round trip p50 "
      "%.2f ms, p99 %.2f ms (store on %s)\n",
      kTotal, kClients, submit_s, kTotal / submit_s, Percentile(submit_ms, 0.5),
      Percentile(submit_ms, 0.99), kWorkers, drain_s, reported.load() / drain_s,
      Percentile(lease_ms, 0.5), Percentile(lease_ms, 0.99), base.c_str());
  int64_t jobs_n = Count(opt.db_path, kJobs), tasks_n = Count(opt.db_path, kTasks),
          done_n = Count(opt.db_path, kTasksDone), bad = Count(opt.db_path, kBadJobs);
  std::printf(
      "figure: rows: %lld jobs, %lld tasks, %lld done; lost %lld, duplicated %d "
      "(reports accepted twice), jobs with != 1 task %lld, submit errors %d\n",
      (long long)jobs_n, (long long)tasks_n, (long long)done_n, (long long)(kTotal - done_n), dup,
      (long long)bad, submit_errors.load());
  CHECK(all);
  CHECK(submit_errors.load() == 0);
  CHECK(jobs_n == kTotal);
  CHECK(tasks_n == kTotal);
  CHECK(done_n == kTotal);
  CHECK(dup == 0);
  CHECK(bad == 0);
  CHECK(static_cast<int>(reports_per_task.size()) == kTotal);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace argus::reliability
