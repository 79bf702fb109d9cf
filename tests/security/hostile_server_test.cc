// The CLI against a hostile server: an in-process gRPC JobService that
// answers with strings chosen to escape into the user's files (a job id of
// ../../../x, a kernel name that is Python code, bytes that are not UTF-8).
// The real argus binary runs against it; the test prints what it refused.
#include <grpcpp/grpcpp.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include "argus/v1/jobs.grpc.pb.h"
#include "nlohmann/json.hpp"
#include "tests/e2e/harness.h"

namespace argus::security {
namespace {

using e2e::Harness;
using nlohmann::json;

// A kernel name that, pasted into launch_torch.py, would run a command.
const char* const kCodeName = "k\"); __import__('os').system('touch PWNED') #";

class HostileJobs final : public v1::JobService::Service {
 public:
  std::string submit_id = "j-0123456789abcdef";  // what SubmitJob answers
  std::string job_id = "j-0123456789abcdef";     // what WatchJob and GetJob answer
  json result;                                   // the finished job's result
  grpc::Status submit_error = grpc::Status::OK;
  std::atomic<int> submits{0};

  grpc::Status SubmitJob(grpc::ServerContext*, const v1::SubmitJobRequest* req,
                         v1::SubmitJobResponse* resp) override {
    submits.fetch_add(1);
    if (!submit_error.ok()) return submit_error;
    resp->mutable_job()->set_id(submit_id);
    *resp->mutable_job()->mutable_spec() = req->spec();
    resp->mutable_job()->set_state(v1::JOB_STATE_QUEUED);
    return grpc::Status::OK;
  }
  grpc::Status GetJob(grpc::ServerContext*, const v1::GetJobRequest*, v1::Job* job) override {
    *job = Finished();
    return grpc::Status::OK;
  }
  grpc::Status WatchJob(grpc::ServerContext*, const v1::WatchJobRequest*,
                        grpc::ServerWriter<v1::JobEvent>* writer) override {
    v1::JobEvent ev;
    *ev.mutable_job() = Finished();
    ev.set_job_id(job_id);
    ev.set_state(ev.job().state());
    writer->Write(ev);
    return grpc::Status::OK;
  }
  grpc::Status ListArtifacts(grpc::ServerContext*, const v1::ListArtifactsRequest* req,
                             v1::ListArtifactsResponse* resp) override {
    v1::Artifact* a = resp->add_artifacts();
    a->set_id("a-1");
    a->set_candidate_id(req->candidate_id());
    a->set_target("sm_90a");
    a->set_kind("ptx");
    a->set_bytes("// ptx\n");
    a->set_metadata_json(json({{"kernel_name", kCodeName}, {"params", json::array()}}).dump());
    return grpc::Status::OK;
  }

 private:
  v1::Job Finished() const {
    v1::Job job;
    job.set_id(job_id);
    job.set_state(v1::JOB_STATE_SUCCEEDED);
    job.mutable_spec()->set_kind(v1::JOB_KIND_TUNE);
    job.set_result_json(result.dump());
    return job;
  }
};

struct FakeServer {
  HostileJobs service;
  std::unique_ptr<grpc::Server> server;
  std::string address;
  FakeServer() {
    grpc::ServerBuilder b;
    int port = 0;
    b.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
    b.RegisterService(&service);
    server = b.BuildAndStart();
    REQUIRE(server);
    address = "127.0.0.1:" + std::to_string(port);
  }
  ~FakeServer() { server->Shutdown(); }
};

json BestKernel(const std::string& kernel) {
  return {{"target", "interp"},
          {"best",
           {{"candidate_id", "c-1"},
            {"kernel", kernel},
            {"kernel_name", kernel},
            {"ptx", "// ptx\n"},
            {"config", {{"template", "t"}}},
            {"constants", json::object()},
            {"dims", json::object()},
            {"invariants", json::array()},
            {"source", "# kernel\n"},
            {"ratio", 1.0}}}};
}

std::set<std::string> FilesUnder(const std::string& dir) {
  std::set<std::string> out;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir)) {
    out.insert(e.path().string());
  }
  return out;
}

TEST_CASE("argus tune against a hostile server writes nothing outside ARGUS_HOME", "[security]") {
  Harness h;
  FakeServer fake;
  const std::string home = h.dir() + "/a/b/c/home";
  std::filesystem::create_directories(home);
  h.cli_env = {"ARGUS_HOME=" + home};
  struct Attack {
    const char* what;
    std::string submit_id, job_id, kernel;
  };
  const std::string ok_id = "j-0123456789abcdef";
  const Attack attacks[] = {
      {"job id from SubmitJob", "../../../x", ok_id, "softmax"},
      {"job id from WatchJob", ok_id, "../../../x", "softmax"},
      {"kernel name", ok_id, ok_id, "../../../x"},
  };
  for (const Attack& a : attacks) {
    fake.service.submit_id = a.submit_id;
    fake.service.job_id = a.job_id;
    fake.service.result = BestKernel(a.kernel);
    auto before = FilesUnder(h.dir());
    auto r = h.Cli(
        {"tune", "softmax", "--shape", "4x256", "--target", "interp", "--server", fake.address});
    std::set<std::string> outside;
    for (const auto& f : FilesUnder(h.dir())) {
      if (!before.count(f) && f.rfind(home, 0) != 0) outside.insert(f);
    }
    const size_t at = r.stderr_text.rfind("argus tune:");
    std::string refused = r.stderr_text.substr(at == std::string::npos ? 0 : at);
    refused = refused.substr(0, refused.find('\n'));
    std::printf(
        "refused: argus tune, hostile %s: exit %d: %s; files written outside "
        "ARGUS_HOME: %zu\n",
        a.what, r.exit_code, refused.c_str(), outside.size());
    INFO("stdout: " << r.stdout_text << "\nstderr: " << r.stderr_text);
    CHECK(r.exit_code != 0);
    CHECK(r.stderr_text.find("refusing it") != std::string::npos);
    CHECK(outside.empty());
  }
}

TEST_CASE("argus export does not write a hostile server's kernel name into code", "[security]") {
  Harness h;
  FakeServer fake;
  fake.service.result = BestKernel(kCodeName);
  fake.service.result["best"].erase("source");  // the launcher from the name alone
  const std::string out = h.dir() + "/export";
  auto r = h.Cli({"export", "j-0123456789abcdef", "-o", out, "--server", fake.address});
  INFO("stdout: " << r.stdout_text << "\nstderr: " << r.stderr_text);
  std::printf("refused: argus export, hostile kernel name: exit %d: %s", r.exit_code,
              r.stderr_text.c_str());
  CHECK(r.exit_code != 0);
  CHECK(r.stderr_text.find("not an identifier") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(out + "/launch_torch.py"));
  CHECK_FALSE(std::filesystem::exists(out + "/argus_kernel.h"));
}

TEST_CASE("argus batch: bytes that are not UTF-8 neither abort it nor submit twice", "[security]") {
  Harness h;
  FakeServer fake;
  // A manifest name that is not UTF-8: refused with its place, before any submit.
  const std::string bad = h.dir() + "/bad.yaml";
  std::ofstream(bad) << "name: b\nproblems:\n  - {name: \"q\xff\xfe\", kind: probe}\n";
  auto r = h.Cli({"batch", bad, "--server", fake.address});
  std::printf("refused: argus batch, a problem name not UTF-8: exit %d, %d submitted: %s",
              r.exit_code, fake.service.submits.load(), r.stderr_text.c_str());
  CHECK(r.exit_code == 2);
  CHECK(r.stderr_text.find("UTF-8") != std::string::npos);
  CHECK(fake.service.submits.load() == 0);
  // A server whose refusal is not UTF-8: the state is saved, and --resume
  // submits nothing again.
  const std::string file = h.dir() + "/batch.yaml";
  std::ofstream(file) << "name: b\nproblems:\n  - {name: q, kind: probe}\n";
  fake.service.submit_error = grpc::Status(grpc::INVALID_ARGUMENT, "bad \xff\xfe name");
  r = h.Cli({"batch", file, "--server", fake.address});
  INFO("stderr: " << r.stderr_text);
  CHECK(r.exit_code == 1);
  REQUIRE(std::filesystem::exists(file + ".state.json"));
  std::ifstream in(file + ".state.json");
  json state = json::parse(in, nullptr, false);
  CHECK(state.is_object());
  int after_first = fake.service.submits.load();
  r = h.Cli({"batch", file, "--resume", "--server", fake.address});
  std::printf(
      "figure: argus batch with a refusal that is not UTF-8: exit %d, state saved (%s), "
      "submits %d, after --resume %d\n",
      r.exit_code, state.is_object() ? "valid JSON" : "unreadable", after_first,
      fake.service.submits.load());
  CHECK(fake.service.submits.load() == after_first);
}

}  // namespace
}  // namespace argus::security
