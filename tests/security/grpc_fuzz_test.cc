// A gRPC fuzzer over every RPC of every service declared in proto/: each
// method's request type is mutated structurally (proto_mutator.h) — and now
// and then sent as raw, mutated bytes — and sent to a real in-process
// argus-server (job and worker services; tokens off, then on with a random
// token per call) and argus-verifier service. Requests the server accepts
// seed later mutations; ids it hands out are reused in later requests.
//
// A crash takes this process (and the test) down. A hang is a unary call
// that does not answer within its deadline (long polls and streams, whose
// waits are bounded by the client's deadline, excepted). After the run the
// server must still serve a plain submit, get and list, and the verifier a
// plain kernel. Bounded by $ARGUS_GRPC_FUZZ_SECONDS (default 20; the seed by
// $ARGUS_GRPC_FUZZ_SEED); prints its figure.
#include <google/protobuf/descriptor.h>
#include <google/protobuf/dynamic_message.h>
#include <google/protobuf/stubs/logging.h>
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <map>
#include <memory>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "argus/v1/jobs.grpc.pb.h"
#include "argus/v1/verifier.grpc.pb.h"
#include "argus/v1/workers.grpc.pb.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "server/server.h"
#include "spdlog/spdlog.h"
#include "tests/security/proto_mutator.h"
#include "tests/security/secrets.h"
#include "verifier/service.h"

namespace argus::security {
namespace {

using Clock = std::chrono::steady_clock;
using google::protobuf::Message;
using google::protobuf::MethodDescriptor;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The services declared in proto/ ("service NAME {"), by full name.
std::set<std::string> DeclaredServices() {
  std::set<std::string> out;
  const std::regex service(R"(^service\s+(\w+)\s*\{)");
  for (const auto& e :
       std::filesystem::recursive_directory_iterator(std::string(ARGUS_SOURCE_DIR) + "/proto")) {
    if (e.path().extension() != ".proto") continue;
    std::string text = ReadFile(e.path().string());
    std::smatch pkg;
    std::regex_search(text, pkg, std::regex(R"(^package\s+([\w.]+)\s*;)", std::regex::multiline));
    std::istringstream lines(text);
    for (std::string line; std::getline(lines, line);) {
      std::smatch m;
      if (std::regex_search(line, m, service)) out.insert(pkg[1].str() + "." + m[1].str());
    }
  }
  return out;
}

struct Stats {
  int64_t calls = 0, raw = 0;
  std::map<std::string, int64_t> by_method;
  std::map<int, int64_t> by_code;
  std::vector<std::string> hangs;
};

class Fuzzer {
 public:
  Fuzzer(uint64_t seed, std::vector<std::string> tokens) : mut_(seed), tokens_(std::move(tokens)) {}

  void AddService(const std::string& full_name, std::shared_ptr<grpc::Channel> channel) {
    const auto* s =
        google::protobuf::DescriptorPool::generated_pool()->FindServiceByName(full_name);
    REQUIRE(s != nullptr);
    for (int i = 0; i < s->method_count(); ++i) {
      const MethodDescriptor* m = s->method(i);
      // Client streams have no driver below (proto/ declares none).
      REQUIRE_FALSE(m->client_streaming());
      methods_.push_back({m, channel, {}});
    }
  }
  size_t methods() const { return methods_.size(); }
  // A request the method should accept, to start mutating from.
  void Seed(const std::string& method, const Message& request) {
    for (auto& t : methods_) {
      if (t.method->name() == method) t.corpus.push_back(request.SerializeAsString());
    }
  }

  void Run(std::chrono::seconds budget, Stats* stats) {
    auto until = Clock::now() + budget;
    while (Clock::now() < until) {
      // Every method once first, so that a loaded machine still reaches all.
      const uint64_t pick = static_cast<size_t>(stats->calls) < methods_.size()
                                ? static_cast<uint64_t>(stats->calls)
                                : mut_.Next() % methods_.size();
      Target& t = methods_[pick];
      const Message* proto = google::protobuf::MessageFactory::generated_factory()->GetPrototype(
          t.method->input_type());
      std::unique_ptr<Message> req(proto->New());
      if (!t.corpus.empty() && !mut_.OneIn(6)) {
        req->ParseFromString(t.corpus[mut_.Next() % t.corpus.size()]);
        mut_.Mutate(req.get());
      } else {
        mut_.Randomize(req.get());
      }
      std::string bytes = req->SerializeAsString();
      bool raw = mut_.OneIn(12);
      if (raw) bytes = mut_.RawBytes(bytes);
      grpc::Status st = t.method->server_streaming() ? Stream(t, *req) : Unary(t, bytes, stats);
      ++stats->calls;
      stats->raw += raw;
      ++stats->by_method[t.method->full_name()];
      ++stats->by_code[st.error_code()];
      if (st.ok() && !raw && t.corpus.size() < 64) t.corpus.push_back(bytes);
    }
  }

 private:
  struct Target {
    const MethodDescriptor* method;
    std::shared_ptr<grpc::Channel> channel;
    std::vector<std::string> corpus;
  };

  void Authorize(grpc::ClientContext* ctx) {
    if (tokens_.empty()) return;
    const std::string& t = tokens_[mut_.Next() % tokens_.size()];
    if (!t.empty()) ctx->AddMetadata("authorization", "Bearer " + t);
  }

  grpc::Status Unary(Target& t, const std::string& bytes, Stats* stats) {
    const std::string name = t.method->name();
    // LeaseTask long-polls (up to 30 s): its deadline ends the wait.
    const bool long_poll = name == "LeaseTask";
    const auto deadline = long_poll ? std::chrono::seconds(1) : std::chrono::seconds(15);
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + deadline);
    Authorize(&ctx);
    grpc::Slice slice(bytes);
    grpc::ByteBuffer request(&slice, 1), response;
    std::promise<grpc::Status> done;
    grpc::GenericStub stub(t.channel);
    auto start = Clock::now();
    stub.UnaryCall(&ctx, "/" + t.method->service()->full_name() + "/" + name, grpc::StubOptions(),
                   &request, &response, [&done](grpc::Status s) { done.set_value(s); });
    grpc::Status st = done.get_future().get();
    double s = std::chrono::duration<double>(Clock::now() - start).count();
    // DEADLINE_EXCEEDED long before the deadline is the server's own answer
    // (a budget of its own ran out), not a hang.
    const bool timed_out = st.error_code() == grpc::DEADLINE_EXCEEDED &&
                           s >= std::chrono::duration<double>(deadline).count() - 0.5;
    if ((timed_out && !long_poll) || s > 20) {
      stats->hangs.push_back(HangText(t.method->full_name(), s, st));
    }
    if (st.ok()) {
      std::unique_ptr<Message> resp(google::protobuf::MessageFactory::generated_factory()
                                        ->GetPrototype(t.method->output_type())
                                        ->New());
      std::vector<grpc::Slice> slices;
      if (response.Dump(&slices).ok()) {
        std::string out;
        for (const auto& sl : slices)
          out.append(reinterpret_cast<const char*>(sl.begin()), sl.size());
        if (resp->ParseFromString(out)) mut_.Remember(*resp);
      }
    }
    return st;
  }

  // A server stream lasts as long as what it watches: the deadline ends it.
  // The server streams of proto/ are WatchJob and Health.Watch; another one
  // fails here rather than go unfuzzed.
  grpc::Status Stream(Target& t, const Message& req) {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(500));
    Authorize(&ctx);
    const std::string& name = t.method->full_name();
    if (name == "argus.v1.JobService.WatchJob") {
      v1::WatchJobRequest w;
      w.CopyFrom(req);
      auto reader = v1::JobService::NewStub(t.channel)->WatchJob(&ctx, w);
      v1::JobEvent ev;
      for (int i = 0; i < 3 && reader->Read(&ev); ++i) mut_.Remember(ev);
      ctx.TryCancel();
      return reader->Finish();
    }
    REQUIRE(name == "grpc.health.v1.Health.Watch");
    grpc::health::v1::HealthCheckRequest w;
    w.CopyFrom(req);
    auto reader = grpc::health::v1::Health::NewStub(t.channel)->Watch(&ctx, w);
    grpc::health::v1::HealthCheckResponse ev;
    for (int i = 0; i < 3 && reader->Read(&ev); ++i) {
    }
    ctx.TryCancel();
    return reader->Finish();
  }

  static std::string HangText(const std::string& method, double s, const grpc::Status& st) {
    char buf[256];
    std::snprintf(buf, sizeof buf, "%s: no answer for %.1f s (code %d)", method.c_str(), s,
                  st.error_code());
    return buf;
  }

  ProtoMutator mut_;
  std::vector<std::string> tokens_;
  std::vector<Target> methods_;
};

v1::JobSpec ProbeSpec() {
  v1::JobSpec spec;
  spec.set_kind(v1::JOB_KIND_PROBE);
  spec.set_probe_workers(1);
  spec.set_client("fuzz");
  return spec;
}

void SeedAll(Fuzzer* f) {
  v1::SubmitJobRequest submit;
  *submit.mutable_spec() = ProbeSpec();
  f->Seed("SubmitJob", submit);
  v1::JobSpec* tune = submit.mutable_spec();
  tune->set_kind(v1::JOB_KIND_TUNE);
  tune->set_target("interp");
  tune->set_max_candidates(1);
  tune->mutable_problem()->set_family("softmax");
  tune->mutable_problem()->set_dtype("f32");
  (*tune->mutable_problem()->mutable_shape())["R"] = 4;
  (*tune->mutable_problem()->mutable_shape())["N"] = 64;
  f->Seed("SubmitJob", submit);
  v1::RegisterWorkerRequest reg;
  reg.mutable_inventory()->set_hostname("fuzz-host");
  f->Seed("RegisterWorker", reg);
  v1::VerifyRequest verify;
  verify.set_file_name("vector_add.py");
  verify.set_source(ReadFile(std::string(ARGUS_SOURCE_DIR) + "/examples/vector_add.py"));
  f->Seed("Verify", verify);
}

// The services still answer plain requests promptly.
void CheckHealthy(const std::string& server, const std::string& verifier,
                  const std::string& token) {
  auto ctx = [&] {
    auto c = std::make_unique<grpc::ClientContext>();
    c->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    if (!token.empty()) c->AddMetadata("authorization", "Bearer " + token);
    return c;
  };
  auto jobs =
      v1::JobService::NewStub(grpc::CreateChannel(server, grpc::InsecureChannelCredentials()));
  v1::SubmitJobRequest submit;
  *submit.mutable_spec() = ProbeSpec();
  v1::SubmitJobResponse sub;
  grpc::Status st = jobs->SubmitJob(ctx().get(), submit, &sub);
  INFO(st.error_message());
  CHECK(st.ok());
  v1::GetJobRequest get;
  get.set_id(sub.job().id());
  v1::Job job;
  CHECK(jobs->GetJob(ctx().get(), get, &job).ok());
  v1::ListJobsRequest list;
  v1::ListJobsResponse listed;
  CHECK(jobs->ListJobs(ctx().get(), list, &listed).ok());
  auto ver = v1::VerifierService::NewStub(
      grpc::CreateChannel(verifier, grpc::InsecureChannelCredentials()));
  v1::VerifyRequest req;
  req.set_file_name("vector_add.py");
  req.set_source(ReadFile(std::string(ARGUS_SOURCE_DIR) + "/examples/vector_add.py"));
  v1::VerifyResponse resp;
  auto c = std::make_unique<grpc::ClientContext>();
  c->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
  CHECK(ver->Verify(c.get(), req, &resp).ok());
}

std::string Summary(const Stats& s) {
  std::string codes;
  for (const auto& [code, n] : s.by_code) {
    codes += (codes.empty() ? "" : ", ") + std::to_string(code) + ":" + std::to_string(n);
  }
  return std::to_string(s.calls) + " calls (" + std::to_string(s.raw) + " raw) over " +
         std::to_string(s.by_method.size()) + " methods, status codes {" + codes + "}";
}

TEST_CASE("grpc fuzz: every RPC's request, tokens off and on: no crash, no hang", "[security]") {
  // Quiet: protobuf warns of every string that is not UTF-8, the server of
  // every job it takes.
  google::protobuf::SetLogHandler(nullptr);
  spdlog::set_level(spdlog::level::err);
  const char* env = std::getenv("ARGUS_GRPC_FUZZ_SECONDS");
  const int seconds = env ? std::max(2, std::atoi(env)) : 20;
  const char* seed_env = std::getenv("ARGUS_GRPC_FUZZ_SEED");
  const uint64_t seed = seed_env ? std::strtoull(seed_env, nullptr, 10)
                                 : static_cast<uint64_t>(Clock::now().time_since_epoch().count());
  std::printf("grpc fuzz: seed %llu (ARGUS_GRPC_FUZZ_SEED reproduces it)\n",
              static_cast<unsigned long long>(seed));
  const std::string dir =
      std::filesystem::temp_directory_path() / ("argus-grpc-fuzz-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);

  verifier::ServiceOptions vo;
  vo.listen = "127.0.0.1:0";
  verifier::VerifierServer verifier(vo);
  auto vaddr = verifier.Start();
  REQUIRE(vaddr.ok());
  auto vchannel = grpc::CreateChannel(*vaddr, grpc::InsecureChannelCredentials());

  const std::set<std::string> declared = DeclaredServices();
  REQUIRE(declared == std::set<std::string>{"argus.v1.JobService", "argus.v1.WorkerService",
                                            "argus.v1.VerifierService", "grpc.health.v1.Health"});
  struct Phase {
    const char* name;
    bool tokens;
  };
  int64_t total = 0;
  std::vector<std::string> hangs;
  for (const Phase& phase : {Phase{"tokens off", false}, Phase{"tokens on", true}}) {
    server::ServerOptions opt;
    opt.db_path = dir + "/" + (phase.tokens ? "on" : "off") + ".db";
    opt.heartbeat_ms = 500;
    opt.lease_ms = 2000;
    std::vector<std::string> tokens;
    std::string admin;
    if (phase.tokens) {
      const std::string client = "fuzz-client-token-0123456789abcdef";
      const std::string worker = "fuzz-worker-token-0123456789abcdef";
      admin = "fuzz-admin-token-0123456789abcdefgh";
      opt.token_file = WriteSecret(dir, "client", "fuzz " + client + "\n");
      opt.worker_token_file = WriteSecret(dir, "worker", worker + "\n");
      opt.admin_token_file = WriteSecret(dir, "admin", admin + "\n");
      tokens = {"", client, worker, admin, "not-a-token-0123456789abcdefghijkl"};
    }
    server::Server server(opt);
    auto addr = server.Start();
    REQUIRE(addr.ok());
    auto channel = grpc::CreateChannel(*addr, grpc::InsecureChannelCredentials());
    Fuzzer f(seed + (phase.tokens ? 1 : 0), tokens);
    for (const std::string& s : declared) {
      f.AddService(s, s == "argus.v1.VerifierService" ? vchannel : channel);
    }
    SeedAll(&f);
    Stats stats;
    f.Run(std::chrono::seconds(seconds / 2), &stats);
    std::printf("figure: grpc fuzz, %s: %s; hangs %zu\n", phase.name, Summary(stats).c_str(),
                stats.hangs.size());
    for (const auto& h : stats.hangs) std::printf("  hang: %s\n", h.c_str());
    CHECK(stats.by_method.size() == f.methods());  // every RPC was called
    CheckHealthy(*addr, *vaddr, admin);
    total += stats.calls;
    hangs.insert(hangs.end(), stats.hangs.begin(), stats.hangs.end());
    server.Shutdown();
  }
  verifier.Stop();
  std::printf(
      "figure: grpc fuzz: %lld calls over the 14 RPCs of %zu services, 0 crashes, %zu "
      "hangs\n",
      static_cast<long long>(total), declared.size(), hangs.size());
  CHECK(hangs.empty());
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace argus::security
