// Security: tokens on every call, TLS and mTLS with openssl-made
// certificates, input limits, and a worker whose children see no credential.
// Each refusal is checked for its code and its message, and printed.
#include <grpcpp/grpcpp.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "absl/strings/str_replace.h"
#include "argus/v1/jobs.grpc.pb.h"
#include "argus/v1/workers.grpc.pb.h"
#include "gpu_worker/dial.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "server/auth.h"
#include "server/server.h"
#include "tests/e2e/harness.h"
#include "tests/security/secrets.h"

namespace argus::security {
namespace {

using worker::Dial;
using worker::DialOptions;

const std::string kClientToken = "client-0123456789abcdef0123456789";
const std::string kWorkerToken = "worker-0123456789abcdef0123456789";
const std::string kAdminToken = "admin-0123456789abcdef0123456789";

struct Tokens {
  std::string client, worker, admin;
};
Tokens WriteTokens(const std::string& dir) {
  return {WriteSecret(dir, "client.token", "# clients\nalice " + kClientToken),
          WriteSecret(dir, "worker.token", kWorkerToken),
          WriteSecret(dir, "admin.token", kAdminToken)};
}

// Calls every RPC of both services once; returns their statuses by name.
std::map<std::string, grpc::Status> CallEverything(const std::shared_ptr<grpc::Channel>& ch) {
  auto jobs = v1::JobService::NewStub(ch);
  auto workers = v1::WorkerService::NewStub(ch);
  std::map<std::string, grpc::Status> out;
  {
    v1::SubmitJobRequest req;
    req.mutable_spec()->set_kind(v1::JOB_KIND_PROBE);
    v1::SubmitJobResponse resp;
    out["SubmitJob"] = jobs->SubmitJob(Ctx().get(), req, &resp);
  }
  {
    v1::GetJobRequest req;
    req.set_id("j-x");
    v1::Job job;
    out["GetJob"] = jobs->GetJob(Ctx().get(), req, &job);
  }
  {
    v1::ListJobsResponse resp;
    out["ListJobs"] = jobs->ListJobs(Ctx().get(), {}, &resp);
  }
  {
    v1::CancelJobRequest req;
    req.set_id("j-x");
    v1::Job job;
    out["CancelJob"] = jobs->CancelJob(Ctx().get(), req, &job);
  }
  {
    v1::WatchJobRequest req;
    req.set_id("j-x");
    auto ctx = Ctx();
    auto reader = jobs->WatchJob(ctx.get(), req);
    v1::JobEvent ev;
    while (reader->Read(&ev)) {
    }
    out["WatchJob"] = reader->Finish();
  }
  {
    v1::ListWorkersResponse resp;
    out["ListWorkers"] = jobs->ListWorkers(Ctx().get(), {}, &resp);
  }
  {
    v1::ListArtifactsRequest req;
    req.set_job_id("j-x");
    v1::ListArtifactsResponse resp;
    out["ListArtifacts"] = jobs->ListArtifacts(Ctx().get(), req, &resp);
  }
  {
    v1::RegisterWorkerResponse resp;
    out["RegisterWorker"] = workers->RegisterWorker(Ctx().get(), {}, &resp);
  }
  {
    v1::LeaseTaskRequest req;
    req.set_worker_id("w-x");
    v1::LeaseTaskResponse resp;
    out["LeaseTask"] = workers->LeaseTask(Ctx().get(), req, &resp);
  }
  {
    v1::HeartbeatRequest req;
    req.set_worker_id("w-x");
    v1::HeartbeatResponse resp;
    out["Heartbeat"] = workers->Heartbeat(Ctx().get(), req, &resp);
  }
  {
    v1::ReportResultRequest req;
    req.set_task_id("t-x");
    v1::ReportResultResponse resp;
    out["ReportResult"] = workers->ReportResult(Ctx().get(), req, &resp);
  }
  return out;
}

bool IsWorkerRpc(const std::string& name) {
  return name == "RegisterWorker" || name == "LeaseTask" || name == "Heartbeat" ||
         name == "ReportResult";
}

bool Authenticated(const grpc::Status& st) {
  // The token passed; the worker id "w-x" is then refused as not this credential's.
  if (st.error_message().find("is not a worker id of this credential") != std::string::npos) {
    return true;
  }
  return st.error_code() != grpc::UNAUTHENTICATED && st.error_code() != grpc::PERMISSION_DENIED &&
         st.error_code() != grpc::UNAVAILABLE;
}

void Print(const std::string& what, const grpc::Status& st) { PrintRefused(what, st); }

bool HealthServing(const std::shared_ptr<grpc::Channel>& ch) {
  auto health = grpc::health::v1::Health::NewStub(ch);
  grpc::health::v1::HealthCheckResponse resp;
  return health->Check(Ctx().get(), {}, &resp).ok() &&
         resp.status() == grpc::health::v1::HealthCheckResponse::SERVING;
}

server::ServerOptions TokenOptions(const std::string& dir) {
  Tokens t = WriteTokens(dir);
  server::ServerOptions opt;
  opt.db_path = dir + "/argus.db";
  opt.token_file = t.client;
  opt.worker_token_file = t.worker;
  opt.admin_token_file = t.admin;
  return opt;
}

TEST_CASE("with tokens configured every call needs the token of its service", "[security]") {
  std::string dir = TempDir();
  server::Server server(TokenOptions(dir));
  auto addr = server.Start();
  REQUIRE(addr.ok());
  std::printf("token check of every RPC on %s\n", addr->c_str());
  int refused = 0, allowed = 0;

  // No token: UNAUTHENTICATED, saying which token is needed.
  for (auto& [name, st] : CallEverything(Dial(*addr, {}))) {
    INFO(name << ": " << st.error_message());
    CHECK(st.error_code() == grpc::UNAUTHENTICATED);
    CHECK(st.error_message().find(IsWorkerRpc(name) ? "worker token" : "requires a token") !=
          std::string::npos);
    Print(name + " (no token)", st);
    ++refused;
  }
  // A wrong token: UNAUTHENTICATED.
  DialOptions wrong;
  wrong.token = "not-a-token-of-this-server-at-all";
  for (auto& [name, st] : CallEverything(Dial(*addr, wrong))) {
    INFO(name << ": " << st.error_message());
    CHECK(st.error_code() == grpc::UNAUTHENTICATED);
    CHECK(st.error_message() == "the token is not valid for this server");
    ++refused;
  }
  Print("any RPC (wrong token)",
        grpc::Status(grpc::UNAUTHENTICATED, "the token is not valid for this server"));
  // Each token opens its own service only.
  for (auto [token, role] :
       {std::pair{kClientToken, "client"}, {kWorkerToken, "worker"}, {kAdminToken, "admin"}}) {
    DialOptions d;
    d.token = token;
    for (auto& [name, st] : CallEverything(Dial(*addr, d))) {
      INFO(role << " token, " << name << ": " << st.error_code() << " " << st.error_message());
      bool should_pass =
          IsWorkerRpc(name) ? std::string(role) == "worker" : std::string(role) != "worker";
      if (should_pass) {
        CHECK(Authenticated(st));
        ++allowed;
      } else {
        CHECK(st.error_code() == grpc::PERMISSION_DENIED);
        CHECK(st.error_message().find("token cannot make") != std::string::npos);
        if (name == "SubmitJob" || name == "LeaseTask") Print(name + " (" + role + " token)", st);
        ++refused;
      }
    }
  }
  // Health stays open for probes (systemd, Kubernetes).
  CHECK(HealthServing(Dial(*addr, {})));
  std::printf("figure: %d calls refused, %d let through, health open\n", refused, allowed);
  CHECK(refused == 11 + 11 + 4 + 7 + 4);  // none, wrong, client, worker, admin
  CHECK(allowed == 7 + 4 + 7);
  server.Shutdown();
}

TEST_CASE("a named client token decides who submits, for the per-client limit", "[security]") {
  std::string dir = TempDir();
  auto opt = TokenOptions(dir);
  opt.max_concurrent_jobs_per_client = 1;
  opt.heartbeat_ms = 100;
  opt.lease_ms = 1000;
  server::Server server(opt);
  auto addr = server.Start();
  REQUIRE(addr.ok());
  // A worker that registers but never leases, so probe jobs stay unfinished.
  DialOptions wd;
  wd.token = kWorkerToken;
  auto workers = v1::WorkerService::NewStub(Dial(*addr, wd));
  v1::RegisterWorkerResponse reg;
  REQUIRE(workers->RegisterWorker(Ctx().get(), {}, &reg).ok());

  DialOptions cd;
  cd.token = kClientToken;
  auto jobs = v1::JobService::NewStub(Dial(*addr, cd));
  v1::SubmitJobRequest req;
  req.mutable_spec()->set_kind(v1::JOB_KIND_PROBE);
  req.mutable_spec()->set_client("mallory");
  v1::SubmitJobResponse resp;
  REQUIRE(jobs->SubmitJob(Ctx().get(), req, &resp).ok());
  CHECK(resp.job().spec().client() == "alice");    // from the token, not the request
  req.mutable_spec()->set_client("someone-else");  // dodging the limit does not work
  auto st = jobs->SubmitJob(Ctx().get(), req, &resp);
  CHECK(st.error_code() == grpc::RESOURCE_EXHAUSTED);
  CHECK(st.error_message() == "client 'alice' already has 1 unfinished jobs (limit 1)");
  Print("2nd job of alice (limit 1)", st);
  server.Shutdown();
}

TEST_CASE("admin actions (dashboard writes) need the admin token", "[security]") {
  std::string dir = TempDir();
  Tokens t = WriteTokens(dir);
  auto auth = server::Authenticator::FromFiles({t.client, t.worker, t.admin, ""});
  REQUIRE(auth.ok());
  auto header = [](const std::string& tok) { return "Bearer " + tok; };
  std::string client = header(kClientToken), admin = header(kAdminToken),
              worker_h = header(kWorkerToken);
  server::Principal name;
  auto st = (*auth)->CheckHeader(nullptr, server::Role::kAdmin, &name);
  CHECK(st.error_code() == grpc::UNAUTHENTICATED);
  st = (*auth)->CheckHeader(&client, server::Role::kAdmin, &name);
  CHECK(st.error_code() == grpc::PERMISSION_DENIED);
  CHECK(st.error_message() == "a client token cannot make admin calls; use the admin token");
  Print("admin action (client token)", st);
  CHECK((*auth)->CheckHeader(&worker_h, server::Role::kAdmin, &name).error_code() ==
        grpc::PERMISSION_DENIED);
  CHECK((*auth)->CheckHeader(&admin, server::Role::kAdmin, &name).ok());
  CHECK((*auth)->CheckHeader(&client, server::Role::kClient, &name).ok());
  CHECK(name.name == "alice");
  CHECK(!name.admin);
}

TEST_CASE("the server refuses token setups that would leave a door open", "[security]") {
  std::string dir = TempDir();
  Tokens t = WriteTokens(dir);
  auto start = [&](const std::vector<std::string>& flags) {
    ProcessOptions p;
    p.argv = {e2e::Harness::Bin("argus-server"), "--listen", "127.0.0.1:0", "--db", dir + "/x.db"};
    p.argv.insert(p.argv.end(), flags.begin(), flags.end());
    p.timeout = std::chrono::seconds(10);
    auto r = RunWithTimeout(p);
    REQUIRE(r.ok());
    CHECK(r->end == ProcessResult::End::kExited);
    CHECK(r->exit_code == 1);
    std::printf("  refused to start: %s", r->stderr_text.c_str());
    return r->stderr_text;
  };
  CHECK(start({"--token_file", t.client}).find("workers need their own token") !=
        std::string::npos);
  CHECK(start({"--worker_token_file", t.worker}).find("leave the job service open") !=
        std::string::npos);
  CHECK(start({"--token_file", t.client, "--worker_token_file", t.client})
            .find("each kind needs its own") != std::string::npos);
  std::string shorty = WriteSecret(dir, "short.token", "abc");
  CHECK(start({"--token_file", shorty, "--worker_token_file", t.worker})
            .find("at least 16 characters") != std::string::npos);
  CHECK(start({"--token_file", dir + "/missing", "--worker_token_file", t.worker})
            .find("no such file") != std::string::npos);
  CHECK(start({"--tls_cert", t.client}).find("go together") != std::string::npos);
}

TEST_CASE("TLS and mTLS with certificates made by openssl", "[security]") {
  std::string dir = TempDir();
  Pki pki;
  std::string err = MakePki(dir, &pki);
  if (!err.empty()) {
    WARN("SKIPPED: cannot make certificates: " << err);
    return;
  }
  auto opt = TokenOptions(dir);
  opt.tls_cert = pki.server_cert;
  opt.tls_key = pki.server_key;
  auto read = [](const std::string& p) {
    std::ifstream in(p);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  };
  auto list_jobs = [](const std::shared_ptr<grpc::Channel>& ch) {
    v1::ListJobsResponse resp;
    return v1::JobService::NewStub(ch)->ListJobs(Ctx().get(), {}, &resp);
  };
  DialOptions good;
  good.tls = true;
  good.token = kClientToken;
  good.ca_pem = read(pki.ca);

  SECTION("TLS: the server's CA is needed, plaintext is refused, tokens still checked") {
    server::Server server(opt);
    auto addr = server.Start();
    REQUIRE(addr.ok());
    CHECK(list_jobs(Dial(*addr, good)).ok());
    DialOptions plain;
    plain.token = kClientToken;
    auto st = list_jobs(Dial(*addr, plain));
    CHECK(st.error_code() == grpc::UNAVAILABLE);
    Print("plaintext to a TLS server", st);
    DialOptions other_ca = good;
    other_ca.ca_pem = read(pki.rogue_ca);
    st = list_jobs(Dial(*addr, other_ca));
    CHECK(st.error_code() == grpc::UNAVAILABLE);
    Print("server cert of an unknown CA", st);
    DialOptions no_token = good;
    no_token.token.clear();
    st = list_jobs(Dial(*addr, no_token));
    CHECK(st.error_code() == grpc::UNAUTHENTICATED);
    Print("TLS without a token", st);
    server.Shutdown();
  }
  SECTION("mTLS: only clients with a certificate of the server's CA get in") {
    opt.tls_ca = pki.ca;
    server::Server server(opt);
    auto addr = server.Start();
    REQUIRE(addr.ok());
    auto st = list_jobs(Dial(*addr, good));  // no client certificate
    CHECK(st.error_code() == grpc::UNAVAILABLE);
    Print("mTLS without a client cert", st);
    DialOptions rogue = good;
    rogue.cert_pem = read(pki.rogue_cert);
    rogue.key_pem = read(pki.rogue_key);
    st = list_jobs(Dial(*addr, rogue));
    CHECK(st.error_code() == grpc::UNAVAILABLE);
    Print("client cert of another CA", st);
    DialOptions with_cert = good;
    with_cert.cert_pem = read(pki.client_cert);
    with_cert.key_pem = read(pki.client_key);
    CHECK(list_jobs(Dial(*addr, with_cert)).ok());
    CHECK(HealthServing(Dial(*addr, with_cert)));
    server.Shutdown();
  }
  SECTION("real worker and CLI processes over mTLS with tokens") {
    e2e::Harness h;
    h.StartServer({"--token_file", opt.token_file, "--worker_token_file", opt.worker_token_file,
                   "--tls_cert", pki.server_cert, "--tls_key", pki.server_key, "--tls_ca", pki.ca,
                   "--heartbeat_ms", "200", "--lease_ms", "2000"});
    std::vector<std::string> tls = {"--tls_ca",      pki.ca,      "--tls_cert",
                                    pki.client_cert, "--tls_key", pki.client_key};
    h.worker_flags = tls;
    h.worker_flags.insert(h.worker_flags.end(), {"--worker_token_file", opt.worker_token_file});
    h.StartWorker();
    h.cli_flags = tls;
    h.cli_env = {"ARGUS_TOKEN=" + kClientToken};
    REQUIRE(e2e::Harness::WaitFor(
        [&] { return h.Cli({"workers"}).stdout_text.find("alive") != std::string::npos; }, 20'000));
    int rc = -1;
    auto job = h.CliJson({"probe", "--count", "1"}, &rc);
    CHECK(rc == 0);
    CHECK(job.value("state", "") == "JOB_STATE_SUCCEEDED");
    CHECK(job["spec"].value("client", "") == "alice");
    // The CLI without the token is refused with the message.
    h.cli_env = {};
    auto r = h.Cli({"list"});
    CHECK(r.exit_code != 0);
    CHECK(r.stderr_text.find("requires a token") != std::string::npos);
    std::printf("  CLI without token: %s", r.stderr_text.c_str());
  }
}

TEST_CASE("input limits: source size, candidates, message size", "[security]") {
  std::string dir = TempDir();
  server::ServerOptions opt;
  opt.db_path = dir + "/argus.db";
  opt.max_source_bytes = 1000;
  opt.max_candidates = 8;
  server::Server server(opt);
  auto addr = server.Start();
  REQUIRE(addr.ok());
  grpc::ChannelArguments args;
  args.SetMaxSendMessageSize(64 << 20);
  auto jobs = v1::JobService::NewStub(Dial(*addr, {}, args));
  auto submit = [&](const v1::JobSpec& spec) {
    v1::SubmitJobRequest req;
    *req.mutable_spec() = spec;
    v1::SubmitJobResponse resp;
    return jobs->SubmitJob(Ctx().get(), req, &resp);
  };
  v1::JobSpec spec;
  spec.set_kind(v1::JOB_KIND_TUNE);
  spec.set_source(std::string(1001, 'x'));
  auto st = submit(spec);
  CHECK(st.error_code() == grpc::INVALID_ARGUMENT);
  CHECK(st.error_message() == "spec.source: 1001 bytes, the limit is 1000 (--max_source_bytes)");
  Print("source of 1001 bytes", st);
  spec.set_source("x");
  spec.set_max_candidates(9);
  st = submit(spec);
  CHECK(st.error_code() == grpc::INVALID_ARGUMENT);
  CHECK(st.error_message() == "spec.max_candidates: 9, the limit is 8 (--max_candidates)");
  Print("9 candidates", st);
  spec.set_max_candidates(-1);
  CHECK(submit(spec).error_code() == grpc::INVALID_ARGUMENT);
  spec.set_max_candidates(8);
  spec.set_source(std::string(9 << 20, 'x'));  // over the 8 MiB message limit
  st = submit(spec);
  CHECK(st.error_code() == grpc::RESOURCE_EXHAUSTED);
  Print("a 9 MiB message", st);
  server.Shutdown();
}

TEST_CASE("run time per task: the worker stops a task past --max_task_ms", "[security]") {
  e2e::Harness h;
  h.StartServer({"--heartbeat_ms", "200", "--lease_ms", "2000"});
  h.StartWorker({"--task_delay_ms", "20000", "--max_task_ms", "300"});
  REQUIRE(e2e::Harness::WaitFor(
      [&] { return h.Cli({"workers"}).stdout_text.find("alive") != std::string::npos; }, 20'000));
  auto t0 = std::chrono::steady_clock::now();
  int rc = -1;
  auto job = h.CliJson({"probe", "--count", "1", "--timeout_s", "60"}, &rc);
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  CHECK(rc != 0);
  std::string dump = job.dump();
  CHECK(dump.find("run-time limit of 300 ms (--max_task_ms)") != std::string::npos);
  std::printf("figure: a 20 s task stopped by --max_task_ms=300 after %.2f s; job %s\n", s,
              job.value("state", "").c_str());
  CHECK(s < 15);
}

TEST_CASE("the worker's children see none of its credentials", "[security]") {
  e2e::Harness h;
  std::string dir = h.dir();
  Tokens t = WriteTokens(dir);
  h.StartServer({"--token_file", t.client, "--worker_token_file", t.worker, "--heartbeat_ms", "200",
                 "--lease_ms", "2000"});
  // A stand-in runner that records what a child of the worker can see.
  std::string runner = dir + "/spy-runner.sh";
  std::ofstream(runner) << "#!/bin/sh\nenv > " << dir << "/child-env.txt\n"
                        << "cat /proc/$PPID/environ | tr '\\0' '\\n' > " << dir
                        << "/parent-env.txt\nexit 3\n";
  chmod(runner.c_str(), 0755);
  h.worker_env = {"ARGUS_TOKEN=" + kClientToken, "ARGUS_WORKER_TOKEN=" + kWorkerToken,
                  "AWS_SECRET_ACCESS_KEY=leaky-secret-value", "HARMLESS_SETTING=kept"};
  h.StartWorker({"--worker_token_file", t.worker, "--runner", runner});
  REQUIRE(e2e::Harness::WaitFor([&] { return std::filesystem::exists(dir + "/parent-env.txt"); },
                                20'000));
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  auto read = [](const std::string& p) {
    std::ifstream in(p);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  };
  std::string child = read(dir + "/child-env.txt"), parent = read(dir + "/parent-env.txt");
  CHECK(child.find("HARMLESS_SETTING=kept") != std::string::npos);  // the spy did run
  int leaks = 0;
  for (const std::string& secret : {kClientToken, kWorkerToken, std::string("leaky-secret")}) {
    leaks += child.find(secret) != std::string::npos;
    leaks += parent.find(secret) != std::string::npos;
  }
  CHECK(child.find("ARGUS_TOKEN") == std::string::npos);
  CHECK(leaks == 0);
  std::printf("figure: %d credentials visible to the worker's child (env and /proc/PPID/environ)\n",
              leaks);
}

TEST_CASE("a worker started as root runs argus-runner as --run_as", "[security]") {
  if (geteuid() != 0 || getpwnam("nobody") == nullptr) {
    std::printf("SKIPPED: dropping privileges needs root and the user nobody\n");
    return;
  }
  e2e::Harness h;
  std::string dir = h.dir();
  Tokens t = WriteTokens(dir);  // root's files, in root's directory
  h.StartServer({"--token_file", t.client, "--worker_token_file", t.worker, "--heartbeat_ms", "200",
                 "--lease_ms", "2000"});
  // The spy runner lives where nobody may run it and write what it saw.
  char tmpl[] = "/tmp/argus-spy-XXXXXX";
  REQUIRE(mkdtemp(tmpl) != nullptr);
  std::string spy_dir = tmpl;
  chmod(spy_dir.c_str(), 0755);
  std::filesystem::create_directory(spy_dir + "/out");
  chmod((spy_dir + "/out").c_str(), 0777);
  std::string runner = spy_dir + "/spy-runner.sh";
  std::string out = spy_dir + "/out/seen.txt";
  std::ofstream(runner) << "#!/bin/sh\n{ echo uid=$(id -u) gid=$(id -g) groups=$(id -G)\n"
                        << "  cat " << t.worker << " >/dev/null 2>&1 && echo token=read || "
                        << "echo token=denied\n"
                        << "  cat /proc/$PPID/environ >/dev/null 2>&1 && echo environ=read || "
                        << "echo environ=denied\n"
                        << "  touch /root/argus-spy 2>/dev/null && echo root_write=yes || "
                        << "echo root_write=denied\n"
                        << "  echo sockets=$(ls -l /proc/$$/fd | grep -c socket:)\n} > " << out
                        << ".tmp; mv " << out << ".tmp " << out << "\nexit 3\n";
  chmod(runner.c_str(), 0755);
  h.StartWorker({"--worker_token_file", t.worker, "--runner", runner, "--run_as", "nobody"});
  REQUIRE(e2e::Harness::WaitFor([&] { return std::filesystem::exists(out); }, 20'000));
  std::ifstream in(out);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string seen = ss.str();
  passwd* nobody = getpwnam("nobody");
  std::string ids = "uid=" + std::to_string(nobody->pw_uid) +
                    " gid=" + std::to_string(nobody->pw_gid) +
                    " groups=" + std::to_string(nobody->pw_gid) + "\n";
  // No socket of the worker's (its authenticated gRPC channel) is inherited.
  CHECK(seen == ids + "token=denied\nenviron=denied\nroot_write=denied\nsockets=0\n");
  std::printf(
      "figure: the runner of a root worker ran as %s; worker token file, worker environ, "
      "/root, inherited sockets: %s\n",
      ids.substr(0, ids.size() - 1).c_str(),
      absl::StrReplaceAll(seen.substr(ids.size()), {{"\n", " "}}).c_str());
  // --run_as root and unknown users are refused at start-up.
  for (const char* bad : {"root", "no-such-user-argus"}) {
    ProcessOptions o;
    o.argv = {std::string(ARGUS_BINARY_DIR) + "/bin/argus-worker", "--server", "127.0.0.1:1",
              "--run_as", bad};
    o.timeout = std::chrono::seconds(20);
    auto r = RunWithTimeout(o);
    REQUIRE(r.ok());
    CHECK(r->exit_code == 2);
    CHECK(r->stderr_text.find("--run_as") != std::string::npos);
    std::printf("  refused --run_as %-20s %s", bad, r->stderr_text.c_str());
  }
  std::filesystem::remove_all(spy_dir);
}

}  // namespace
}  // namespace argus::security
