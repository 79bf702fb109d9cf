// Starvation: cheap requests must not starve the service. Dashboard listings
// over 10,000 stored jobs against gRPC GetJob latency; idle (slowloris) and
// flooding HTTP connections against dashboard latency; 200 WatchJob streams
// against the server's thread count; 64 tune jobs waiting for a worker
// against the idle server's CPU. Each test prints its figure.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "argus/v1/jobs.grpc.pb.h"
#include "argus/v1/workers.grpc.pb.h"
#include "gpu_worker/dial.h"
#include "server/dashboard/dashboard.h"
#include "server/dashboard/test_client.h"
#include "server/server.h"
#include "tests/e2e/harness.h"
#include "tests/e2e/proc_stats.h"
#include "tests/reliability/store_count.h"

namespace argus::reliability {
namespace {

using Clock = std::chrono::steady_clock;
using e2e::CpuSeconds;
using e2e::Threads;

double MsSince(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

double Pct(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(p * v.size()))];
}

std::string TempDir() {
  std::string base = std::filesystem::exists("/dev/shm") ? "/dev/shm" : "/tmp";
  auto dir = std::filesystem::path(base) /
             ("argus-starve-" + std::to_string(getpid()) + "-" + store::NewId("d"));
  std::filesystem::create_directories(dir);
  return dir.string();
}

std::unique_ptr<grpc::ClientContext> Ctx(int seconds = 10) {
  auto ctx = std::make_unique<grpc::ClientContext>();
  ctx->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(seconds));
  return ctx;
}

// A connection that sends `data` and then nothing.
int IdleConnection(int port, const std::string& data) {
  int fd = http::ConnectLoopback(port);
  if (fd >= 0 && !data.empty()) (void)!send(fd, data.data(), data.size(), MSG_NOSIGNAL);
  return fd;
}

TEST_CASE("dashboard listings over 10,000 jobs do not starve gRPC GetJob", "[reliability]") {
  std::string dir = TempDir();
  server::ServerOptions opt;
  opt.db_path = dir + "/argus.db";
  {
    auto store = store::JobStore::Open(opt.db_path);
    REQUIRE(store.ok());
    v1::JobSpec spec;
    spec.set_kind(v1::JOB_KIND_PROBE);
    spec.set_client("filler");
    auto t0 = Clock::now();
    for (int i = 0; i < 10'000; ++i) {
      REQUIRE((*store)->CreateJob(spec, {{"probe", "{}", "", true}}, 1'000 + i, 0).ok());
    }
    std::printf("stored 10,000 probe jobs in %.1f s\n", MsSince(t0) / 1000);
  }
  server::Server server(opt);
  auto addr = server.Start();
  REQUIRE(addr.ok());
  dashboard::DashboardOptions dash;
  dash.open_reads = true;  // the operator's open dashboard: no token to manage here
  std::string http_addr;
  auto http = dashboard::StartDashboard(server.store(), dash, "127.0.0.1:0", &http_addr);
  REQUIRE(http.ok());
  int port = http::PortOf(http_addr);
  auto jobs = v1::JobService::NewStub(worker::Dial(*addr, {}));
  auto newest = server.store()->ListJobs(1, v1::JOB_STATE_UNSPECIFIED);
  REQUIRE(newest.ok());
  std::string id = newest->at(0).id();
  auto sample = [&](int n) {
    std::vector<double> ms;
    for (int i = 0; i < n; ++i) {
      v1::GetJobRequest req;
      req.set_id(id);
      v1::Job job;
      auto t0 = Clock::now();
      REQUIRE(jobs->GetJob(Ctx().get(), req, &job).ok());
      ms.push_back(MsSince(t0));
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return ms;
  };
  auto quiet = sample(100);

  // Four loops of the listing that used to hold the store's one lock.
  std::atomic<bool> stop{false};
  std::atomic<int> listings{0}, bad{0};
  std::vector<double> listing_ms[4];
  std::vector<std::thread> loops;
  for (int i = 0; i < 4; ++i) {
    loops.emplace_back([&, i] {
      while (!stop.load()) {
        auto t0 = Clock::now();
        std::string r = http::HttpGet(port, "/api/jobs?kind=probe", "");
        listing_ms[i].push_back(MsSince(t0));
        if (r.rfind("HTTP/1.1 200", 0) != 0 || r.find("\"kind\":\"probe\"") == std::string::npos) {
          ++bad;
        }
        ++listings;
      }
    });
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  auto loaded = sample(200);
  stop = true;
  for (auto& t : loops) t.join();
  std::vector<double> all_listings;
  for (auto& v : listing_ms) all_listings.insert(all_listings.end(), v.begin(), v.end());
  std::printf(
      "figure: GetJob p50/p99 %.2f/%.2f ms quiet, %.2f/%.2f ms under 4 loops of GET "
      "/api/jobs?kind=probe over 10,000 jobs (%d listings, p50 %.1f ms each)\n",
      Pct(quiet, 0.5), Pct(quiet, 0.99), Pct(loaded, 0.5), Pct(loaded, 0.99), listings.load(),
      Pct(all_listings, 0.5));
  CHECK(bad == 0);
  CHECK(listings > 4);
  // Before read connections a listing held the lock 0.37 s and GetJob's p50 was 735 ms.
  CHECK(Pct(loaded, 0.5) < 50);
  (*http)->Shutdown();
  server.Shutdown();
  std::filesystem::remove_all(dir);
}

TEST_CASE("idle and flooding HTTP connections do not stall the dashboard", "[reliability]") {
  std::string dir = TempDir();
  auto store = store::JobStore::Open(dir + "/argus.db");
  REQUIRE(store.ok());
  std::string bound;
  dashboard::DashboardOptions open;
  open.open_reads = true;
  auto http = dashboard::StartDashboard(store->get(), open, "127.0.0.1:0", &bound);
  REQUIRE(http.ok());
  int port = http::PortOf(bound);
  auto timed_get = [&] {
    auto t0 = Clock::now();
    std::string r = http::HttpGet(port, "/api/info");
    CHECK(r.rfind("HTTP/1.1 200", 0) == 0);
    return MsSince(t0);
  };
  // 20 slowloris connections: 10 send nothing, 10 half a request head.
  std::vector<int> idle;
  for (int i = 0; i < 20; ++i) {
    idle.push_back(IdleConnection(port, i % 2 ? "GET /api/jobs HTTP/1.1\r\nHost: x\r\n" : ""));
    REQUIRE(idle.back() >= 0);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  std::vector<double> ms;
  for (int i = 0; i < 20; ++i) ms.push_back(timed_get());
  std::printf(
      "figure: dashboard GET /api/info with 20 idle connections open: p50 %.2f ms, max "
      "%.2f ms\n",
      Pct(ms, 0.5), *std::max_element(ms.begin(), ms.end()));
  CHECK(*std::max_element(ms.begin(), ms.end()) < 1000);  // was 24 s
  // A flood past the connection cap (256): the oldest unfinished requests
  // are closed and a fresh client is still served.
  for (int i = 0; i < 300; ++i) {
    int fd = IdleConnection(port, "GET / HTTP/1.1\r\n");
    if (fd >= 0) idle.push_back(fd);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  std::vector<double> flood;
  for (int i = 0; i < 10; ++i) flood.push_back(timed_get());
  int evicted = 0;
  for (int fd : idle) {
    pollfd p{fd, POLLIN, 0};
    char c;
    if (poll(&p, 1, 0) == 1 && recv(fd, &c, 1, MSG_DONTWAIT) == 0) ++evicted;
    close(fd);
  }
  std::printf(
      "figure: with %zu idle connections opened (cap 256): GET /api/info max %.2f ms, %d "
      "oldest idle connections closed by the server\n",
      idle.size(), *std::max_element(flood.begin(), flood.end()), evicted);
  CHECK(*std::max_element(flood.begin(), flood.end()) < 1000);
  CHECK(evicted >= 320 - 256);
  (*http)->Shutdown();
  std::filesystem::remove_all(dir);
}

TEST_CASE("200 WatchJob streams take a bounded number of threads", "[reliability]") {
  std::string dir = TempDir();
  server::ServerOptions opt;
  opt.db_path = dir + "/argus.db";
  opt.max_watchers = 32;
  server::Server server(opt);
  auto addr = server.Start();
  REQUIRE(addr.ok());
  auto ch = worker::Dial(*addr, {});
  auto workers = v1::WorkerService::NewStub(ch);
  v1::RegisterWorkerResponse reg;
  REQUIRE(workers->RegisterWorker(Ctx().get(), {}, &reg).ok());  // never leases: jobs stay queued
  auto jobs = v1::JobService::NewStub(ch);
  v1::SubmitJobRequest sreq;
  sreq.mutable_spec()->set_kind(v1::JOB_KIND_PROBE);
  v1::SubmitJobResponse sresp;
  REQUIRE(jobs->SubmitJob(Ctx().get(), sreq, &sresp).ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  int before = Threads(getpid());
  struct Stream {
    std::unique_ptr<grpc::ClientContext> ctx;
    std::unique_ptr<grpc::ClientReader<v1::JobEvent>> reader;
  };
  std::vector<Stream> streams;
  v1::WatchJobRequest wreq;
  wreq.set_id(sresp.job().id());
  int served = 0, refused = 0;
  std::string refusal;
  for (int i = 0; i < 200; ++i) {
    Stream s{std::make_unique<grpc::ClientContext>(), nullptr};
    s.reader = jobs->WatchJob(s.ctx.get(), wreq);
    v1::JobEvent ev;
    if (s.reader->Read(&ev)) {
      ++served;
      streams.push_back(std::move(s));
    } else {
      auto st = s.reader->Finish();
      if (st.error_code() == grpc::RESOURCE_EXHAUSTED) ++refused;
      refusal = st.error_message();
    }
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  int during = Threads(getpid());
  std::printf(
      "figure: 200 WatchJob streams: %d served, %d refused (RESOURCE_EXHAUSTED: %s); "
      "threads of the process %d before, %d with the streams open\n",
      served, refused, refusal.c_str(), before, during);
  CHECK(served == 32);
  CHECK(refused == 168);
  CHECK(during - before < 32 + 40);  // the streams' threads plus gRPC's own, not 200
  for (auto& s : streams) s.ctx->TryCancel();
  for (auto& s : streams) s.reader->Finish();
  // A stream slot is free again once a watcher leaves.
  Stream again{std::make_unique<grpc::ClientContext>(), nullptr};
  again.reader = jobs->WatchJob(again.ctx.get(), wreq);
  v1::JobEvent ev;
  bool reopened = false;
  for (int i = 0; i < 20 && !reopened; ++i) {
    reopened = again.reader->Read(&ev);
    if (!reopened) {
      again.reader->Finish();
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      again = {std::make_unique<grpc::ClientContext>(), nullptr};
      again.reader = jobs->WatchJob(again.ctx.get(), wreq);
    }
  }
  CHECK(reopened);
  again.ctx->TryCancel();
  again.reader->Finish();
  server.Shutdown();
  std::filesystem::remove_all(dir);
}

TEST_CASE("64 tune jobs waiting for a worker leave the server idle", "[reliability]") {
  e2e::Harness h;
  h.StartServer({"--max_jobs_per_client", "0"});
  auto jobs = v1::JobService::NewStub(worker::Dial(h.address(), {}));
  auto queued = [&] { return Count(h.db(), "SELECT COUNT(*) FROM tasks WHERE state = 'queued'"); };
  for (int i = 0; i < 64; ++i) {
    // The first job fills the verifier's cache; the other 63 verify the same
    // candidate from it instead of 64 solvers racing on the test machine.
    if (i == 1) REQUIRE(e2e::Harness::WaitFor([&] { return queued() == 1; }, 120'000));
    v1::SubmitJobRequest req;
    v1::JobSpec* spec = req.mutable_spec();
    spec->set_kind(v1::JOB_KIND_TUNE);
    spec->set_target("interp");
    spec->set_max_candidates(2);
    spec->mutable_problem()->set_family("softmax");
    spec->mutable_problem()->set_dtype("f32");
    (*spec->mutable_problem()->mutable_shape())["R"] = 4;
    (*spec->mutable_problem()->mutable_shape())["N"] = 64;
    v1::SubmitJobResponse resp;
    auto st = jobs->SubmitJob(Ctx().get(), req, &resp);
    INFO(st.error_message());
    REQUIRE(st.ok());
  }
  // Every job's planner has verified its first candidate and waits for a worker.
  REQUIRE(e2e::Harness::WaitFor([&] { return queued() == 64; }, 120'000));
  pid_t pid = h.server_pid();
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  double cpu0 = CpuSeconds(pid);
  auto t0 = Clock::now();
  std::this_thread::sleep_for(std::chrono::seconds(3));
  double pct = 100 * (CpuSeconds(pid) - cpu0) / (MsSince(t0) / 1000);
  std::printf(
      "figure: idle server with 64 queued tune jobs and no worker: %.1f%% of a core over "
      "3 s, %d threads\n",
      pct, Threads(pid));
  CHECK(pct < 5);  // was 34% (each planner thread polled its task every 10 ms)
}

}  // namespace
}  // namespace argus::reliability
