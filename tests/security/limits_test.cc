// Limits: every stored and returned field has a bound checked before
// anything is stored; listings are paged so that no row can make them fail;
// deadlines are clamped; the verifier service's budget is the server's, not
// the client's. Each refusal and figure is printed.
#include <grpcpp/grpcpp.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <set>
#include <sstream>
#include <thread>

#include "absl/strings/str_replace.h"
#include "argus/v1/jobs.grpc.pb.h"
#include "argus/v1/verifier.grpc.pb.h"
#include "argus/v1/workers.grpc.pb.h"
#include "base/subprocess.h"
#include "gpu_worker/dial.h"
#include "server/server.h"
#include "tests/e2e/harness.h"
#include "tests/e2e/proc_stats.h"

namespace argus::security {
namespace {

using Clock = std::chrono::steady_clock;
using worker::Dial;

std::string TempDir() {
  auto dir = std::filesystem::temp_directory_path() /
             ("argus-limits-" + std::to_string(getpid()) + "-" + store::NewId("d"));
  std::filesystem::create_directories(dir);
  return dir.string();
}

std::unique_ptr<grpc::ClientContext> Ctx(int seconds = 10) {
  auto ctx = std::make_unique<grpc::ClientContext>();
  ctx->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(seconds));
  return ctx;
}

int64_t StoreBytes(const std::string& db) {
  int64_t n = 0;
  for (const char* suffix : {"", "-wal"}) {
    std::error_code ec;
    auto size = std::filesystem::file_size(db + suffix, ec);
    if (!ec) n += static_cast<int64_t>(size);
  }
  return n;
}

void Print(const std::string& what, const grpc::Status& st) {
  std::printf("  refused %-34s %d %s\n", what.c_str(), st.error_code(), st.error_message().c_str());
}

TEST_CASE("every request field has a bound, checked before anything is stored", "[security]") {
  std::string dir = TempDir();
  server::ServerOptions opt;
  opt.db_path = dir + "/argus.db";
  server::Server server(opt);
  auto addr = server.Start();
  REQUIRE(addr.ok());
  grpc::ChannelArguments args;
  args.SetMaxSendMessageSize(64 << 20);
  auto ch = Dial(*addr, {}, args);
  auto jobs = v1::JobService::NewStub(ch);
  auto workers = v1::WorkerService::NewStub(ch);
  int64_t bytes_before = StoreBytes(opt.db_path);

  // One field over its bound at a time: refused, naming the field and the bound.
  struct Case {
    std::string what, expect;
    std::function<void(v1::JobSpec*)> set;
  };
  const std::string big(7 << 20, 'm');
  std::vector<Case> cases = {
      {"a 7 MiB llm_model", "spec.llm_model: 7340032 bytes, the limit is 256",
       [&](v1::JobSpec* s) { s->set_llm_model(big); }},
      {"a 4 MiB source", "spec.source: 4194304 bytes, the limit is 262144 (--max_source_bytes)",
       [](v1::JobSpec* s) { s->set_source(std::string(4 << 20, 's')); }},
      {"a 1 KiB client", "spec.client: 1024 bytes, the limit is 256",
       [](v1::JobSpec* s) { s->set_client(std::string(1024, 'c')); }},
      {"a 1 KiB problem family", "spec.problem.family: 1024 bytes, the limit is 256",
       [](v1::JobSpec* s) { s->mutable_problem()->set_family(std::string(1024, 'f')); }},
      {"a 1 KiB dtype", "spec.problem.dtype: 1024 bytes, the limit is 256",
       [](v1::JobSpec* s) { s->mutable_problem()->set_dtype(std::string(1024, 'd')); }},
      {"a 1 KiB target", "spec.target: 1024 bytes, the limit is 256",
       [](v1::JobSpec* s) { s->set_target(std::string(1024, 't')); }},
      {"a 1 KiB policy", "spec.policy: 1024 bytes, the limit is 256",
       [](v1::JobSpec* s) { s->set_policy(std::string(1024, 'p')); }},
      {"a 4 KiB llm_endpoint", "spec.llm_endpoint: 4096 bytes, the limit is 2048",
       [](v1::JobSpec* s) { s->set_llm_endpoint(std::string(4096, 'u')); }},
      {"65 shape dims", "spec.problem.shape: 65 entries, the limit is 64",
       [](v1::JobSpec* s) {
         for (int i = 0; i < 65; ++i)
           (*s->mutable_problem()->mutable_shape())["d" + std::to_string(i)] = 1;
       }},
      {"a 1 KiB option value", "spec.problem.options[causal]: 1024 bytes, the limit is 256",
       [](v1::JobSpec* s) {
         (*s->mutable_problem()->mutable_options())["causal"] = std::string(1024, 'o');
       }},
      {"a 1 KiB constant name", "spec.constants key: 1024 bytes, the limit is 256",
       [](v1::JobSpec* s) { (*s->mutable_constants())[std::string(1024, 'k')] = 1; }},
  };
  for (const Case& c : cases) {
    v1::SubmitJobRequest req;
    req.mutable_spec()->set_kind(v1::JOB_KIND_TUNE);
    c.set(req.mutable_spec());
    v1::SubmitJobResponse resp;
    auto st = jobs->SubmitJob(Ctx().get(), req, &resp);
    INFO(c.what << ": " << st.error_message());
    CHECK(st.error_code() == grpc::INVALID_ARGUMENT);
    CHECK(st.error_message() == c.expect);
    Print(c.what, st);
  }
  // Ids longer than any the server hands out.
  {
    v1::GetJobRequest req;
    req.set_id(std::string(4096, 'j'));
    v1::Job job;
    auto st = jobs->GetJob(Ctx().get(), req, &job);
    CHECK(st.error_code() == grpc::INVALID_ARGUMENT);
    CHECK(st.error_message() == "id: 4096 bytes, the limit is 128");
    Print("a 4 KiB job id", st);
  }
  // The worker service: inventory, heartbeat and report fields.
  {
    v1::RegisterWorkerRequest req;
    req.mutable_inventory()->set_hostname(std::string(1 << 20, 'h'));
    v1::RegisterWorkerResponse resp;
    auto st = workers->RegisterWorker(Ctx().get(), req, &resp);
    CHECK(st.error_code() == grpc::INVALID_ARGUMENT);
    CHECK(st.error_message() == "inventory.hostname: 1048576 bytes, the limit is 256");
    Print("a 1 MiB hostname", st);
  }
  v1::RegisterWorkerResponse reg;
  REQUIRE(workers->RegisterWorker(Ctx().get(), {}, &reg).ok());
  {
    v1::HeartbeatRequest req;
    req.set_worker_id(reg.worker_id());
    for (int i = 0; i < 2000; ++i) req.add_task_ids("t-" + std::to_string(i));
    v1::HeartbeatResponse resp;
    auto st = workers->Heartbeat(Ctx().get(), req, &resp);
    CHECK(st.error_code() == grpc::INVALID_ARGUMENT);
    CHECK(st.error_message() == "task_ids: 2000 entries, the limit is 1024");
    Print("a heartbeat for 2000 tasks", st);
  }
  {
    v1::ReportResultRequest req;
    req.set_worker_id(reg.worker_id());
    req.set_task_id("t-x");
    req.set_result_json(std::string(1 << 20, 'r'));
    v1::ReportResultResponse resp;
    auto st = workers->ReportResult(Ctx().get(), req, &resp);
    CHECK(st.error_code() == grpc::INVALID_ARGUMENT);
    CHECK(st.error_message() ==
          "result_json: 1048576 bytes, the limit is 262144 (--max_result_bytes)");
    Print("a 1 MiB result", st);
    req.set_result_json("{}");
    req.set_error(std::string(1 << 20, 'e'));
    st = workers->ReportResult(Ctx().get(), req, &resp);
    CHECK(st.error_message() == "error: 1048576 bytes, the limit is 16384");
    Print("a 1 MiB error text", st);
  }
  auto count = server.store()->CountRows("jobs");
  REQUIRE(count.ok());
  int64_t grown = StoreBytes(opt.db_path) - bytes_before;
  std::printf("figure: %zu oversized fields refused; jobs stored %lld, store grew %lld bytes\n",
              cases.size() + 6, static_cast<long long>(*count), static_cast<long long>(grown));
  CHECK(*count == 0);
  CHECK(grown < 256 << 10);  // one worker row and the WAL's frames, no payload
  server.Shutdown();
  std::filesystem::remove_all(dir);
}

TEST_CASE("a deadline of 2^63-1 is clamped, said so, and the job still expires", "[security]") {
  std::string dir = TempDir();
  server::ServerOptions opt;
  opt.db_path = dir + "/argus.db";
  opt.max_deadline_ms = 1500;
  server::Server server(opt);
  auto addr = server.Start();
  REQUIRE(addr.ok());
  auto ch = Dial(*addr, {});
  v1::RegisterWorkerResponse reg;  // registered, never leases: the job waits
  REQUIRE(v1::WorkerService::NewStub(ch)->RegisterWorker(Ctx().get(), {}, &reg).ok());
  auto jobs = v1::JobService::NewStub(ch);
  v1::SubmitJobRequest req;
  req.mutable_spec()->set_kind(v1::JOB_KIND_PROBE);
  req.mutable_spec()->set_deadline_ms(INT64_MAX);
  v1::SubmitJobResponse resp;
  auto t0 = std::chrono::system_clock::now();
  REQUIRE(jobs->SubmitJob(Ctx().get(), req, &resp).ok());
  REQUIRE(resp.notices_size() == 1);
  CHECK(resp.notices(0) ==
        "spec.deadline_ms: 9223372036854775807 is past the server's limit; clamped to 1500 "
        "(--max_deadline_ms)");
  const v1::Job& job = resp.job();
  CHECK(job.spec().deadline_ms() == 1500);
  CHECK(job.deadline_unix_ms() == job.created_unix_ms() + 1500);
  std::printf("  notice: %s\n", resp.notices(0).c_str());
  v1::Job now;
  REQUIRE(e2e::Harness::WaitFor(
      [&] {
        v1::GetJobRequest g;
        g.set_id(job.id());
        return jobs->GetJob(Ctx().get(), g, &now).ok() && now.state() == v1::JOB_STATE_FAILED;
      },
      10'000));
  double s = std::chrono::duration<double>(std::chrono::system_clock::now() - t0).count();
  std::printf("figure: a job submitted with deadline_ms 2^63-1 failed after %.1f s: %s\n", s,
              now.error().c_str());
  CHECK(now.error().find("deadline exceeded") != std::string::npos);
  server.Shutdown();
  std::filesystem::remove_all(dir);
}

TEST_CASE("rows past today's bounds never make listing fail: ListJobs pages", "[security]") {
  e2e::Harness h;
  {
    // Rows an older server stored unbounded: two 7 MiB model names (once
    // enough to make every ListJobs fail) and 40 jobs of 256 KiB sources.
    auto store = store::JobStore::Open(h.db());
    REQUIRE(store.ok());
    v1::JobSpec spec;
    spec.set_kind(v1::JOB_KIND_PROBE);
    spec.set_llm_model(std::string(7 << 20, 'm'));
    for (int i = 0; i < 2; ++i) REQUIRE((*store)->CreateJob(spec, {}, 1000 + i, 0).ok());
    spec.clear_llm_model();
    spec.set_source(std::string(256 << 10, 's'));
    for (int i = 0; i < 40; ++i) REQUIRE((*store)->CreateJob(spec, {}, 2000 + i, 0).ok());
  }
  h.StartServer();
  // A client with gRPC's default 4 MiB receive limit.
  auto jobs = v1::JobService::NewStub(Dial(h.address(), {}));
  std::set<std::string> seen;
  int pages = 0;
  size_t largest = 0;
  v1::ListJobsRequest req;
  while (true) {
    v1::ListJobsResponse resp;
    auto st = jobs->ListJobs(Ctx().get(), req, &resp);
    INFO(st.error_message());
    REQUIRE(st.ok());
    ++pages;
    largest = std::max(largest, resp.ByteSizeLong());
    REQUIRE(resp.jobs_size() >= 1);  // every page makes progress
    for (const auto& j : resp.jobs()) CHECK(seen.insert(j.id()).second);
    if (resp.next_page_token().empty()) break;
    req.set_page_token(resp.next_page_token());
    REQUIRE(pages < 100);
  }
  std::printf(
      "figure: 42 jobs (2 with a 7 MiB model name, 40 with a 256 KiB source) listed in "
      "%d pages, the largest %.1f MiB\n",
      pages, largest / 1048576.0);
  CHECK(seen.size() == 42);
  // The CLI follows the pages.
  auto r = h.Cli({"list", "--limit", "100"});
  INFO(r.stderr_text);
  CHECK(r.exit_code == 0);
  CHECK(std::count(r.stdout_text.begin(), r.stdout_text.end(), '\n') == 42);
  // A token that is not one is refused, not a crash.
  req.set_page_token("garbage");
  v1::ListJobsResponse resp;
  auto st = jobs->ListJobs(Ctx().get(), req, &resp);
  CHECK(st.error_code() == grpc::INVALID_ARGUMENT);
  Print("a made-up page token", st);
}

TEST_CASE(
    "a 1 MiB request costs the verifier service its --max_request_ms, not the client's "
    "deadline",
    "[security]") {
  std::string dir = TempDir();
  std::string log = dir + "/verifier.log";
  auto child = Child::Start(
      {e2e::Harness::Bin("argus-verifier"), "--listen", "127.0.0.1:0", "--max_request_ms", "2000"},
      log);
  REQUIRE(child.ok());
  std::string addr;
  REQUIRE(e2e::Harness::WaitFor(
      [&] {
        std::ifstream in(log);
        std::stringstream ss;
        ss << in.rdbuf();
        auto p = ss.str().find("listening on ");
        if (p == std::string::npos) return false;
        addr = ss.str().substr(p + 13, ss.str().find('\n', p) - p - 13);
        return true;
      },
      20'000));
  // 1 MiB of distinct GEMM kernels: every one must be walked and proved.
  std::ifstream in(std::string(ARGUS_SOURCE_DIR) + "/examples/gemm_smem.py");
  std::stringstream ss;
  ss << in.rdbuf();
  std::string one = ss.str(), source;
  for (int i = 0; source.size() < (1 << 20) - one.size(); ++i) {
    source +=
        absl::StrReplaceAll(one, {{"def gemm_smem(", "def gemm_smem_" + std::to_string(i) + "("}});
  }
  grpc::ChannelArguments args;
  args.SetMaxSendMessageSize(4 << 20);
  auto stub = v1::VerifierService::NewStub(Dial(addr, {}, args));
  v1::VerifyRequest req;
  req.set_file_name("flood.py");
  req.set_source(source);
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::hours(1));
  auto cpu = [&] { return e2e::CpuSeconds(child->pid()); };
  double cpu0 = cpu();
  auto t0 = Clock::now();
  v1::VerifyResponse resp;
  auto st = stub->Verify(&ctx, req, &resp);
  double wall = std::chrono::duration<double>(Clock::now() - t0).count();
  double used = cpu() - cpu0;
  INFO(st.error_message());
  REQUIRE(st.ok());
  bool deadline_said = false;
  for (const auto& d : resp.diagnostics()) deadline_said |= d.check() == "deadline";
  std::printf(
      "figure: a %zu-byte request with a 1 h client deadline: %.1f s wall, %.1f s CPU in "
      "the verifier (--max_request_ms 2000); verified=%d, deadline reported: %s\n",
      source.size(), wall, used, resp.verified(), deadline_said ? "yes" : "no");
  CHECK(!resp.verified());
  CHECK(deadline_said);
  CHECK(used < 6);  // was 51 s: the client's deadline set the budget
  child->Kill(SIGTERM);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace argus::security
