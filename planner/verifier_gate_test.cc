// The verifier gates against a real argus-verifier service (VerifierServer
// on loopback) and in-process: a seeded bug from tests/verifier/bugs is
// refuted with its counterexample by both, a clean kernel passes; a worker
// that requires verification refuses the bug even when the payload claims it
// passed; an unreachable service makes the gate wait until it is back.
#include "planner/verifier_gate.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <fstream>
#include <memory>
#include <sstream>
#include <thread>
#include <vector>

#include "gpu_worker/candidate.h"
#include "kb/kb.h"
#include "planner/problems.h"
#include "verifier/service.h"

namespace argus::planner {
namespace {

using nlohmann::json;

std::string Read(const std::string& rel) {
  std::ifstream in(std::string(ARGUS_SOURCE_DIR) + "/" + rel);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

Instance Gemm(const std::string& file) {
  Instance c;
  c.source = Read(file);
  c.kernel = "gemm_mma";
  c.dims = {{"M", 4096}, {"N", 4096}, {"K", 4096}};
  return c;
}

// A real argus-verifier service on loopback with a remote gate on it, and the
// in-process gate: what each test below runs its candidates through.
struct BothGates {
  BothGates() {
    auto address = server.Start();
    REQUIRE(address.ok());
    options.address = *address;
    remote = std::make_unique<RemoteVerifierGate>(options);
  }
  ~BothGates() { server.Stop(); }
  std::vector<CandidateGate*> all() { return {remote.get(), &local}; }

  verifier::VerifierServer server{{}};
  worker::VerifierClientOptions options;
  std::unique_ptr<RemoteVerifierGate> remote;
  VerifierGate local;
};

const json* Find(const GateReport& r, const std::string& kind) {
  for (const json& v : r.violations)
    if (v.value("kind", "") == kind) return &v;
  return nullptr;
}

TEST_CASE("the remote and in-process verifier gates refute a seeded bug and pass a clean kernel",
          "[planner][verifier]") {
  BothGates gates;
  Instance bug = Gemm("tests/verifier/bugs/wrong_tile_offset.py");
  for (CandidateGate* gate : gates.all()) {
    GateReport r = gate->Check(bug, "interp");
    INFO(r.ToJson().dump());
    CHECK_FALSE(r.passed);
    CHECK_FALSE(r.unavailable);
    const json* v = Find(r, "tag_assert");
    REQUIRE(v != nullptr);
    CHECK((*v)["line"] == 38);
    CHECK((*v)["counterexample"]["expected"].get<std::string>().find("A(") == 0);
    CHECK((*v)["message"].get<std::string>().find("found A(") != std::string::npos);
    CHECK(r.ToJson()["obligations"].get<int>() > 0);
    GateReport ok = gate->Check(Gemm("kb/templates/gemm_mma.py"), "interp");
    INFO(ok.ToJson().dump());
    CHECK(ok.passed);
  }
  CHECK(gates.remote->Check(bug, "interp").gate == "verifier@" + gates.options.address);

  // A worker with this verifier refuses the bug even if the payload says it
  // passed: its own verifier has the last word.
  worker::VerifierClient client(gates.options);
  worker::CandidateOptions o;
  o.require_verification = true;
  o.verify = [&](const worker::KernelSpec& k, const std::string&) { return client.Verify(k); };
  worker::CandidatePayload p;
  p.candidate = KernelOf(bug);
  p.check = {{"op", "gemm"}, {"a", "A"}, {"b", "B"}, {"c", "C"}, {"b_layout", "kn"}};
  p.verification = {{"passed", true}, {"gate", "forged"}};
  json r = json::parse(*worker::HandleCandidate(p.ToJson().dump(), o));
  CHECK(r["outcome"] == "rejected");
  CHECK(r["verifier"]["verified"] == false);
}

TEST_CASE("both gates verify just the candidate's kernel of a source that holds several",
          "[planner][verifier]") {
  // A KB source may hold variants (the FA3 file holds three kernels): a
  // candidate of one of them must not be judged by another's findings.
  BothGates gates;
  std::string bug = Read("tests/verifier/bugs/wrong_tile_offset.py");
  const std::string def = "def gemm_mma(";
  REQUIRE(bug.find(def) != std::string::npos);
  bug.replace(bug.find(def), def.size(), "def gemm_mma_seeded(");
  Instance clean = Gemm("kb/templates/gemm_mma.py");
  clean.source = bug + "\n" + clean.source;
  Instance seeded = clean;
  seeded.kernel = "gemm_mma_seeded";
  Instance missing = clean;
  missing.kernel = "gemm_absent";
  for (CandidateGate* gate : gates.all()) {
    GateReport ok = gate->Check(clean, "interp");
    INFO(ok.ToJson().dump());
    CHECK(ok.passed);
    GateReport r = gate->Check(seeded, "interp");
    INFO(r.ToJson().dump());
    CHECK_FALSE(r.passed);
    CHECK(Find(r, "tag_assert") != nullptr);
    GateReport none = gate->Check(missing, "interp");
    INFO(none.ToJson().dump());
    CHECK_FALSE(none.passed);
    CHECK(none.ToJson().dump().find("no kernel named gemm_absent") != std::string::npos);
  }
}

TEST_CASE("the gate admits tensor-core flash attention at the tune shape and refutes a seeded bug",
          "[planner][verifier]") {
  // The KB template's instances for B4 H32 S4096 D128 (causal and not, GQA,
  // D64) verify fully proved at the job's dims: fragment math is followed
  // (docs/verifier.md, "Fragment math"), so the gate no longer stops at the
  // naive kernels. V refilled from the wrong tile is refuted at P V.
  const kb::Kb kb = *kb::Kb::Load(kb::DefaultKbDir());
  const kb::Template* t = kb.FindTemplate("flash_attention_mma");
  REQUIRE(t != nullptr);
  VerifierGate gate;
  struct Case {
    int64_t hkv, d;
    const char* causal;
  };
  for (const Case& c :
       {Case{32, 128, "0"}, Case{32, 128, "1"}, Case{8, 128, "1"}, Case{32, 64, "0"}}) {
    auto p =
        MakeProblem("attention", {{"B", 4}, {"H", 32}, {"HKV", c.hkv}, {"S", 4096}, {"D", c.d}},
                    "bf16", {{"causal", c.causal}});
    REQUIRE(p.ok());
    auto in = Instantiate(*t, DefaultConfig(*t), *p);
    REQUIRE(in.ok());
    GateReport r = gate.Check(*in, "sm_90a");
    INFO(r.ToJson().dump());
    CHECK(r.passed);
    CHECK(r.violations.empty());
  }
  auto p = MakeProblem("attention", {{"B", 4}, {"H", 32}, {"S", 4096}, {"D", 128}}, "bf16", {});
  REQUIRE(p.ok());
  auto bug = Instantiate(*t, DefaultConfig(*t), *p);
  REQUIRE(bug.ok());
  const std::string good = "cp_async(V[hk].tile((BKV, HD), (nt, 0))";
  size_t at = bug->source.find(good);
  REQUIRE(at != std::string::npos);
  bug->source.replace(at, good.size(), "cp_async(V[hk].tile((BKV, HD), (t, 0))");
  GateReport r = gate.Check(*bug, "sm_90a");
  INFO(r.ToJson().dump());
  CHECK_FALSE(r.passed);
  const json* v = Find(r, "mma_k_mismatch");
  REQUIRE(v != nullptr);
  CHECK((*v)["message"].get<std::string>().find("to_operand") != std::string::npos);
}

// A loopback port that refuses connections and that no other process can take
// while the socket is open: bound, never listening.
class RefusingPort {
 public:
  RefusingPort() {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0);
    socklen_t n = sizeof(a);
    REQUIRE(getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &n) == 0);
    address_ = "127.0.0.1:" + std::to_string(ntohs(a.sin_port));
  }
  ~RefusingPort() { Release(); }
  void Release() {
    if (fd_ >= 0) close(fd_);
    fd_ = -1;
  }
  const std::string& address() const { return address_; }

 private:
  int fd_ = -1;
  std::string address_;
};

TEST_CASE("the remote gate waits while the service is down and goes on when it is back",
          "[planner][verifier]") {
  RefusingPort down;
  const std::string address = down.address();
  worker::VerifierClientOptions vo;
  vo.address = address;
  vo.retry_ms = 100;
  RemoteVerifierGate gate(vo);
  Instance clean = Gemm("kb/templates/gemm_mma.py");
  GateReport r;
  std::thread t([&] { r = gate.Check(clean, "interp"); });
  // Start the service only once the gate has found it down (on a loaded
  // machine the first attempt can come late), then a while after that.
  for (int i = 0; i < 600 && gate.client().unavailable_attempts() == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  const bool waited = gate.client().unavailable_attempts() > 0;
  if (!waited) {
    gate.Stop();  // never leave the thread running past a failed check
    t.join();
  }
  REQUIRE(waited);
  std::this_thread::sleep_for(std::chrono::milliseconds(1200));
  down.Release();
  verifier::ServiceOptions so;
  so.listen = address;
  verifier::VerifierServer server(so);
  REQUIRE(server.Start().ok());
  t.join();
  INFO(r.ToJson().dump());
  CHECK(r.passed);
  CHECK(r.waited_ms >= 1000);
  CHECK(r.ToJson()["waited_ms"].get<int64_t>() == r.waited_ms);
  server.Stop();
  // Stop() ends a wait: the report says unavailable and is not a rejection.
  std::thread t2([&] { r = gate.Check(clean, "interp"); });
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  gate.Stop();
  t2.join();
  CHECK(r.unavailable);
  CHECK_FALSE(r.passed);
}

}  // namespace
}  // namespace argus::planner
