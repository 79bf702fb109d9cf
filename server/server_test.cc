// argus-server in-process: health, reflection-visible services, limits.
#include "server/server.h"

#include <grpcpp/grpcpp.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>

#include "argus/v1/jobs.grpc.pb.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "server/clock.h"
#include "server/services.h"

namespace argus::server {
namespace {

std::string TempDbPath() {
  auto dir = std::filesystem::temp_directory_path() / ("argus-server-test-" + store::NewId("d"));
  std::filesystem::create_directories(dir);
  return (dir / "argus.db").string();
}

TEST_CASE("the server answers grpc.health.v1 and refuses what it cannot do", "[server]") {
  ServerOptions opt;
  opt.db_path = TempDbPath();
  opt.max_concurrent_jobs_per_client = 1;
  Server server(opt);
  auto addr = server.Start();
  REQUIRE(addr.ok());
  auto channel = grpc::CreateChannel(*addr, grpc::InsecureChannelCredentials());

  auto health = grpc::health::v1::Health::NewStub(channel);
  grpc::ClientContext hctx;
  grpc::health::v1::HealthCheckRequest hreq;
  grpc::health::v1::HealthCheckResponse hresp;
  REQUIRE(health->Check(&hctx, hreq, &hresp).ok());
  CHECK(hresp.status() == grpc::health::v1::HealthCheckResponse::SERVING);

  auto jobs = v1::JobService::NewStub(channel);
  // Unknown job: NOT_FOUND with the id in the message.
  {
    grpc::ClientContext ctx;
    v1::GetJobRequest req;
    req.set_id("j-missing");
    v1::Job job;
    auto st = jobs->GetJob(&ctx, req, &job);
    CHECK(st.error_code() == grpc::NOT_FOUND);
    CHECK(st.error_message().find("j-missing") != std::string::npos);
  }
  // A tune job without a valid problem: a clear refusal from the planner.
  {
    grpc::ClientContext ctx;
    v1::SubmitJobRequest req;
    req.mutable_spec()->set_kind(v1::JOB_KIND_TUNE);
    v1::SubmitJobResponse resp;
    auto st = jobs->SubmitJob(&ctx, req, &resp);
    CHECK(st.error_code() == grpc::INVALID_ARGUMENT);
    CHECK(st.error_message().find("unknown problem") != std::string::npos);
  }
  // A message over the size limit is refused, and the server keeps serving.
  {
    grpc::ClientContext ctx;
    v1::GetJobRequest req;
    req.set_id(std::string(opt.max_message_bytes + 1, 'x'));
    v1::Job job;
    CHECK(jobs->GetJob(&ctx, req, &job).error_code() == grpc::RESOURCE_EXHAUSTED);
  }
  {
    grpc::ClientContext ctx;
    v1::ListJobsResponse resp;
    CHECK(jobs->ListJobs(&ctx, {}, &resp).ok());
  }
  server.Shutdown();
}

TEST_CASE("per-client limit on unfinished jobs", "[server]") {
  ServerOptions opt;
  opt.db_path = TempDbPath();
  opt.max_concurrent_jobs_per_client = 1;
  Server server(opt);
  auto addr = server.Start();
  REQUIRE(addr.ok());
  // A registered worker so that probes are accepted.
  v1::Inventory inv;
  inv.add_devices()->set_arch("interp");
  REQUIRE(server.store()->RegisterWorker(inv, "", NowMs()).ok());
  auto jobs =
      v1::JobService::NewStub(grpc::CreateChannel(*addr, grpc::InsecureChannelCredentials()));
  auto submit = [&] {
    grpc::ClientContext ctx;
    v1::SubmitJobRequest req;
    req.mutable_spec()->set_kind(v1::JOB_KIND_PROBE);
    req.mutable_spec()->set_client("alice");
    v1::SubmitJobResponse resp;
    return jobs->SubmitJob(&ctx, req, &resp);
  };
  CHECK(submit().ok());
  auto second = submit();
  CHECK(second.error_code() == grpc::RESOURCE_EXHAUSTED);
  CHECK(second.error_message().find("alice") != std::string::npos);
}

TEST_CASE("a finished job's elapsed time stops at its last change", "[server]") {
  const int64_t now = NowMs();
  v1::Job job;
  job.set_id("j-1");
  job.set_created_unix_ms(now - 60'000);
  job.set_updated_unix_ms(now - 50'000);
  job.set_state(v1::JOB_STATE_SUCCEEDED);
  CHECK(MakeJobEvent(job, "", 16).elapsed_ms() == 10'000);
  job.set_state(v1::JOB_STATE_RUNNING);
  CHECK(MakeJobEvent(job, "", 16).elapsed_ms() >= 60'000);
}

}  // namespace
}  // namespace argus::server
