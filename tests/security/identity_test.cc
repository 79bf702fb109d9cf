// Identities from credentials: a worker cannot report, renew, lease or
// register as another worker; a client cannot read, watch or cancel another
// client's job, nor pick its own client name with an unnamed token; the
// dashboard's reads need a read token unless the operator opens them; the
// verifier service checks tokens and TLS like the server, and the server and
// workers that call it pass them. Each attack is run and its refusal printed.
#include <grpcpp/grpcpp.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>

#include "argus/v1/jobs.grpc.pb.h"
#include "argus/v1/verifier.grpc.pb.h"
#include "argus/v1/workers.grpc.pb.h"
#include "base/secret_file.h"
#include "base/subprocess.h"
#include "gpu_worker/dial.h"
#include "server/dashboard/test_client.h"
#include "server/server.h"
#include "tests/e2e/harness.h"
#include "tests/security/secrets.h"

namespace argus::security {
namespace {

using worker::Dial;
using worker::DialOptions;

const std::string kAlice = "alice-0123456789abcdef0123456789";
const std::string kBob = "bob-0123456789abcdef0123456789";
const std::string kUnnamed = "unnamed-0123456789abcdef01234567";
const std::string kAdmin = "admin-0123456789abcdef0123456789";
const std::string kWorkerA = "worker-a-0123456789abcdef0123456";
const std::string kWorkerB = "worker-b-0123456789abcdef0123456";
const std::string kRead = "read-0123456789abcdef0123456789";

server::ServerOptions Options(const std::string& dir) {
  server::ServerOptions o;
  o.db_path = dir + "/argus.db";
  o.token_file = WriteSecret(dir, "client.token",
                             "alice " + kAlice + "\nbob " + kBob + "\n" + kUnnamed + "\n");
  o.worker_token_file =
      WriteSecret(dir, "worker.token", "gpu-a " + kWorkerA + "\ngpu-b " + kWorkerB + "\n");
  o.admin_token_file = WriteSecret(dir, "admin.token", kAdmin);
  o.read_token_file = WriteSecret(dir, "read.token", kRead);
  o.heartbeat_ms = 100;
  o.lease_ms = 5000;
  return o;
}

std::shared_ptr<grpc::Channel> As(const std::string& addr, const std::string& token) {
  DialOptions d;
  d.token = token;
  return Dial(addr, d);
}

v1::Job Submit(const std::shared_ptr<grpc::Channel>& ch, const std::string& client,
               grpc::Status* st_out = nullptr) {
  v1::SubmitJobRequest req;
  req.mutable_spec()->set_kind(v1::JOB_KIND_PROBE);
  req.mutable_spec()->set_probe_workers(1);
  req.mutable_spec()->set_client(client);
  v1::SubmitJobResponse resp;
  grpc::Status st = v1::JobService::NewStub(ch)->SubmitJob(Ctx().get(), req, &resp);
  if (st_out)
    *st_out = st;
  else
    REQUIRE(st.ok());
  return resp.job();
}

TEST_CASE("a worker cannot report, renew, lease or register under another worker's id",
          "[security][identity]") {
  std::string dir = TempDir();
  server::Server server(Options(dir));
  auto addr = server.Start();
  REQUIRE(addr.ok());
  auto wa = v1::WorkerService::NewStub(As(*addr, kWorkerA));
  auto wb = v1::WorkerService::NewStub(As(*addr, kWorkerB));
  v1::RegisterWorkerResponse ra, rb;
  REQUIRE(wa->RegisterWorker(Ctx().get(), {}, &ra).ok());
  REQUIRE(wb->RegisterWorker(Ctx().get(), {}, &rb).ok());
  CHECK(ra.worker_id() != rb.worker_id());
  // Only the victim is polling: it takes the probe task.
  v1::Job job = Submit(As(*addr, kAlice), "");
  v1::LeaseTaskRequest lr;
  lr.set_worker_id(ra.worker_id());
  lr.set_wait_ms(2000);
  v1::LeaseTaskResponse lease;
  REQUIRE(wa->LeaseTask(Ctx().get(), lr, &lease).ok());
  REQUIRE(lease.granted());
  std::printf("victim %s holds task %s; attacker is %s\n", ra.worker_id().c_str(),
              lease.task().task_id().c_str(), rb.worker_id().c_str());

  int refused = 0;
  auto expect_denied = [&](const std::string& what, const grpc::Status& st) {
    INFO(what << ": " << st.error_code() << " " << st.error_message());
    CHECK(st.error_code() == grpc::PERMISSION_DENIED);
    CHECK(st.error_message().find("not a worker id of this credential") != std::string::npos);
    refused += st.error_code() == grpc::PERMISSION_DENIED;
    PrintRefused(what, st);
  };
  v1::ReportResultRequest forged;
  forged.set_worker_id(ra.worker_id());
  forged.set_task_id(lease.task().task_id());
  forged.set_ok(true);
  forged.set_result_json(R"({"forged": true})");
  v1::ReportResultResponse rr;
  expect_denied("forged ReportResult", wb->ReportResult(Ctx().get(), forged, &rr));
  v1::HeartbeatRequest hb;
  hb.set_worker_id(ra.worker_id());
  hb.add_task_ids(lease.task().task_id());
  v1::HeartbeatResponse hr;
  expect_denied("renewal of its lease", wb->Heartbeat(Ctx().get(), hb, &hr));
  expect_denied("LeaseTask as the victim", wb->LeaseTask(Ctx().get(), lr, &lease));
  v1::RegisterWorkerRequest steal;
  steal.set_requested_id(ra.worker_id());
  expect_denied("re-register as the victim", wb->RegisterWorker(Ctx().get(), steal, &rb));
  steal.set_requested_id("w-chosen-by-the-worker");
  expect_denied("register a made-up id", wb->RegisterWorker(Ctx().get(), steal, &rb));

  // The victim's lease is untouched: its own report is the job's result.
  v1::Job now;
  v1::GetJobRequest gr;
  gr.set_id(job.id());
  REQUIRE(v1::JobService::NewStub(As(*addr, kAlice))->GetJob(Ctx().get(), gr, &now).ok());
  REQUIRE(now.tasks_size() == 1);
  CHECK(now.tasks(0).state() == "leased");
  CHECK(now.tasks(0).worker_id() == ra.worker_id());
  v1::ReportResultRequest real = forged;
  real.set_result_json(R"({"real": true})");
  REQUIRE(wa->ReportResult(Ctx().get(), real, &rr).ok());
  CHECK(rr.accepted());
  REQUIRE(v1::JobService::NewStub(As(*addr, kAlice))->GetJob(Ctx().get(), gr, &now).ok());
  CHECK(now.state() == v1::JOB_STATE_SUCCEEDED);
  CHECK(now.tasks(0).result_json().find("real") != std::string::npos);
  // The victim itself may come back under its id (a restarted worker).
  v1::RegisterWorkerRequest again;
  again.set_requested_id(ra.worker_id());
  REQUIRE(wa->RegisterWorker(Ctx().get(), again, &ra).ok());
  CHECK(ra.worker_id() == again.requested_id());
  std::printf(
      "figure: %d impersonations of another worker refused; job %s with the holder's "
      "result\n",
      refused, v1::JobState_Name(now.state()).c_str());
  CHECK(refused == 5);
  server.Shutdown();
}

TEST_CASE("a job is read, watched and cancelled only by its submitter or an admin",
          "[security][identity]") {
  std::string dir = TempDir();
  auto opt = Options(dir);
  server::Server server(opt);
  auto addr = server.Start();
  REQUIRE(addr.ok());
  v1::RegisterWorkerResponse reg;  // a worker that never leases: jobs stay queued
  REQUIRE(
      v1::WorkerService::NewStub(As(*addr, kWorkerA))->RegisterWorker(Ctx().get(), {}, &reg).ok());
  v1::Job job = Submit(As(*addr, kAlice), "");
  CHECK(job.spec().client() == "alice");
  auto bob = v1::JobService::NewStub(As(*addr, kBob));
  int refused = 0;
  auto expect_hidden = [&](const std::string& what, const grpc::Status& st) {
    INFO(what << ": " << st.error_code() << " " << st.error_message());
    CHECK(st.error_code() == grpc::NOT_FOUND);
    CHECK(st.error_message() == "job " + job.id() + " does not exist");
    refused += st.error_code() == grpc::NOT_FOUND;
    PrintRefused(what, st);
  };
  v1::GetJobRequest get;
  get.set_id(job.id());
  v1::Job out;
  expect_hidden("GetJob of alice's job (bob)", bob->GetJob(Ctx().get(), get, &out));
  v1::CancelJobRequest cancel;
  cancel.set_id(job.id());
  expect_hidden("CancelJob of alice's job", bob->CancelJob(Ctx().get(), cancel, &out));
  {
    v1::WatchJobRequest w;
    w.set_id(job.id());
    auto ctx = Ctx();
    auto reader = bob->WatchJob(ctx.get(), w);
    v1::JobEvent ev;
    int events = 0;
    while (reader->Read(&ev)) ++events;
    CHECK(events == 0);
    expect_hidden("WatchJob of alice's job", reader->Finish());
  }
  v1::ListArtifactsRequest arts;
  arts.set_job_id(job.id());
  v1::ListArtifactsResponse arts_out;
  expect_hidden("ListArtifacts of alice's job", bob->ListArtifacts(Ctx().get(), arts, &arts_out));
  v1::ListJobsResponse list;
  REQUIRE(bob->ListJobs(Ctx().get(), {}, &list).ok());
  CHECK(list.jobs_size() == 0);  // bob lists his own jobs only
  REQUIRE(v1::JobService::NewStub(As(*addr, kAlice))->ListJobs(Ctx().get(), {}, &list).ok());
  CHECK(list.jobs_size() == 1);
  // An admin sees and may cancel every job; the owner may too.
  auto admin = v1::JobService::NewStub(As(*addr, kAdmin));
  list.Clear();
  REQUIRE(admin->ListJobs(Ctx().get(), {}, &list).ok());
  CHECK(list.jobs_size() == 1);
  REQUIRE(admin->GetJob(Ctx().get(), get, &out).ok());
  CHECK(out.state() == v1::JOB_STATE_QUEUED);
  REQUIRE(v1::JobService::NewStub(As(*addr, kAlice))->CancelJob(Ctx().get(), cancel, &out).ok());
  CHECK(out.state() == v1::JOB_STATE_CANCELLED);
  std::printf(
      "figure: %d reads/cancels of another client's job refused (NOT_FOUND); bob lists "
      "0 jobs, admin 1\n",
      refused);
  CHECK(refused == 4);
  server.Shutdown();
}

TEST_CASE("an unnamed client token cannot choose its client name", "[security][identity]") {
  std::string dir = TempDir();
  auto opt = Options(dir);
  opt.max_concurrent_jobs_per_client = 1;
  server::Server server(opt);
  auto addr = server.Start();
  REQUIRE(addr.ok());
  v1::RegisterWorkerResponse reg;
  REQUIRE(
      v1::WorkerService::NewStub(As(*addr, kWorkerA))->RegisterWorker(Ctx().get(), {}, &reg).ok());
  v1::Job alices = Submit(As(*addr, kAlice), "");
  auto anon = As(*addr, kUnnamed);
  v1::Job first = Submit(anon, "alice");  // claims to be alice
  CHECK(first.spec().client() != "alice");
  CHECK(first.spec().client().rfind("token-", 0) == 0);
  std::printf("  an unnamed token asking for client 'alice' submits as '%s'\n",
              first.spec().client().c_str());
  grpc::Status st;
  Submit(anon, "someone-else", &st);  // a fresh name does not dodge the limit
  CHECK(st.error_code() == grpc::RESOURCE_EXHAUSTED);
  CHECK(st.error_message().find("'" + first.spec().client() + "' already has 1") !=
        std::string::npos);
  PrintRefused("2nd job under a new name", st);
  v1::GetJobRequest get;
  get.set_id(alices.id());
  v1::Job out;
  st = v1::JobService::NewStub(anon)->GetJob(Ctx().get(), get, &out);
  CHECK(st.error_code() == grpc::NOT_FOUND);
  PrintRefused("GetJob of alice's job", st);
  std::printf("figure: the unnamed token is '%s' whatever it asks; limit 1 holds\n",
              first.spec().client().c_str());
  server.Shutdown();
}

TEST_CASE("the dashboard's reads need a read token unless --open_dashboard",
          "[security][identity]") {
  std::string dir = TempDir();
  auto opt = Options(dir);
  auto start = [&](std::vector<std::string> flags, e2e::Harness* h) {
    flags.insert(flags.end(), {"--http", "127.0.0.1:0"});
    h->StartServer(flags);
    std::string log = h->ServerLog();
    auto pos = log.find("http on ");
    REQUIRE(pos != std::string::npos);
    return http::PortOf(log.substr(pos + 8, log.find('\n', pos) - pos - 8));
  };
  // --http with no read token and no --open_dashboard: refused at start.
  ProcessOptions p;
  p.argv = {e2e::Harness::Bin("argus-server"),
            "--listen",
            "127.0.0.1:0",
            "--db",
            dir + "/x.db",
            "--http",
            "127.0.0.1:0"};
  p.timeout = std::chrono::seconds(10);
  auto r = RunWithTimeout(p);
  REQUIRE(r.ok());
  CHECK(r->exit_code == 2);
  CHECK(r->stderr_text.find("--open_dashboard") != std::string::npos);
  std::printf("  refused to start: %s", r->stderr_text.c_str());
  int refused = 0;
  {
    e2e::Harness h;
    int port = start(
        {"--token_file", opt.token_file, "--worker_token_file", opt.worker_token_file,
         "--admin_token_file", opt.admin_token_file, "--read_token_file", opt.read_token_file},
        &h);
    for (std::string path : {"/", "/api/jobs", "/api/workers", "/api/jobs/j-x"}) {
      for (const std::string& token : {std::string(), kAlice, kWorkerA}) {
        std::string resp = http::HttpGet(
            port, path, token.empty() ? "" : "Authorization: Bearer " + token + "\r\n");
        INFO(path << " " << resp.substr(0, 40));
        CHECK(resp.rfind("HTTP/1.1 401", 0) == 0);
        refused += resp.rfind("HTTP/1.1 401", 0) == 0;
      }
    }
    std::string ok = http::HttpGet(port, "/api/jobs", "Authorization: Bearer " + kRead + "\r\n");
    CHECK(ok.rfind("HTTP/1.1 200", 0) == 0);
  }
  {
    e2e::Harness h;
    int port = start({"--open_dashboard"}, &h);
    CHECK(http::HttpGet(port, "/api/jobs").rfind("HTTP/1.1 200", 0) == 0);
  }
  std::printf(
      "figure: %d dashboard reads without a read/admin token refused (401); "
      "--open_dashboard serves them\n",
      refused);
  CHECK(refused == 12);
}

TEST_CASE("argus-verifier takes tokens and TLS and the server and workers that call it pass them",
          "[security][identity]") {
  e2e::Harness h;
  std::string dir = h.dir();
  Pki pki;
  std::string err = MakePki(dir, &pki);
  REQUIRE(err.empty());  // openssl is a test dependency
  std::string vtoken = "verifier-0123456789abcdef01234567";
  std::string vfile = WriteSecret(dir, "verifier.token", "planner " + vtoken);
  h.verifier_flags = {"--token_file", vfile,          "--tls_cert", pki.server_cert,
                      "--tls_key",    pki.server_key, "--tls_ca",   pki.ca};
  std::string vaddr = h.StartVerifier();
  auto verify = [&](const DialOptions& d) {
    v1::VerifyRequest req;
    req.set_source("@kernel(threads=32)\ndef k(X):\n    pass\n");
    v1::VerifyResponse resp;
    return v1::VerifierService::NewStub(Dial(vaddr, d))->Verify(Ctx().get(), req, &resp);
  };
  auto read = [](const std::string& path) { return *ReadSmallFile(path); };
  DialOptions good;
  good.tls = true;
  good.ca_pem = read(pki.ca);
  good.cert_pem = read(pki.client_cert);
  good.key_pem = read(pki.client_key);
  good.token = vtoken;
  CHECK(verify(good).ok());
  int refused = 0;
  for (auto [what, d] : std::vector<std::pair<std::string, DialOptions>>{{"no token",
                                                                          [&] {
                                                                            auto x = good;
                                                                            x.token.clear();
                                                                            return x;
                                                                          }()},
                                                                         {"a wrong token",
                                                                          [&] {
                                                                            auto x = good;
                                                                            x.token = kAlice;
                                                                            return x;
                                                                          }()},
                                                                         {"no client certificate",
                                                                          [&] {
                                                                            auto x = good;
                                                                            x.cert_pem.clear();
                                                                            x.key_pem.clear();
                                                                            return x;
                                                                          }()},
                                                                         {"plaintext", [&] {
                                                                            DialOptions x;
                                                                            x.token = vtoken;
                                                                            return x;
                                                                          }()}}) {
    grpc::Status st = verify(d);
    INFO(what << ": " << st.error_message());
    CHECK(!st.ok());
    CHECK((st.error_code() == grpc::UNAUTHENTICATED || st.error_code() == grpc::UNAVAILABLE));
    refused += !st.ok();
    PrintRefused("Verify with " + what, st);
  }
  // A real server and worker, each given the verifier's token and TLS files,
  // run a tune job whose every candidate goes through the verifier.
  std::vector<std::string> vdial = {
      "--verifier",         vaddr,         "--verifier_token_file", vfile,
      "--verifier_tls_ca",  pki.ca,        "--verifier_tls_cert",   pki.client_cert,
      "--verifier_tls_key", pki.client_key};
  std::vector<std::string> sflags = {"--heartbeat_ms", "200", "--lease_ms", "5000"};
  sflags.insert(sflags.end(), vdial.begin(), vdial.end());
  h.StartServer(sflags);
  std::vector<std::string> wflags = {"--backend", "interp"};
  wflags.insert(wflags.end(), vdial.begin(), vdial.end());
  h.StartWorker(wflags);
  ProcessResult r = h.Cli({"tune", "softmax", "--shape", "R=4,N=256", "--dtype", "f32", "--target",
                           "interp", "--max_candidates", "2"},
                          240);
  INFO(r.stdout_text << r.stderr_text << h.ServerLog());
  int rc = r.exit_code;
  CHECK(rc == 0);
  CHECK(r.stdout_text.find("speed-up over the baseline") != std::string::npos);
  std::printf(
      "figure: %d verifier calls without its token/certificate refused; a tune job through "
      "the token+mTLS verifier: exit %d\n",
      refused, rc);
  CHECK(refused == 4);
}

}  // namespace
}  // namespace argus::security
