// LLM endpoints are the operator's: a job cannot send the server's API key
// to a listener of its own, inject headers through the URL, or flood the
// server with a reply. Each attack is run against a real server (in-process
// gRPC) and loopback listeners that record what reaches them.
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <cstdio>
#include <mutex>
#include <thread>

#include "absl/strings/numbers.h"
#include "argus/v1/jobs.grpc.pb.h"
#include "gpu_worker/dial.h"
#include "planner/http_client.h"
#include "planner/llm_endpoints.h"
#include "server/server.h"
#include "tests/security/secrets.h"

namespace argus::security {
namespace {

// Accepts connections on loopback, records each request and answers `reply`.
class Listener {
 public:
  explicit Listener(std::string reply) : reply_(std::move(reply)) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0);
    socklen_t len = sizeof(a);
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    ::listen(fd_, 16);
    thread_ = std::thread([this] { Serve(); });
  }
  ~Listener() {
    ::shutdown(fd_, SHUT_RDWR);
    ::close(fd_);
    thread_.join();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/v1"; }
  std::vector<std::string> requests() {
    std::lock_guard l(mu_);
    return requests_;
  }

 private:
  void Serve() {
    while (true) {
      int c = ::accept(fd_, nullptr, nullptr);
      if (c < 0) return;
      std::string req;
      char buf[4096];
      size_t need = std::string::npos;
      while (need == std::string::npos || req.size() < need) {
        ssize_t n = ::recv(c, buf, sizeof(buf), 0);
        if (n <= 0) break;
        req.append(buf, n);
        size_t head = req.find("\r\n\r\n");
        size_t cl = req.find("Content-Length: ");
        size_t len = 0;
        if (head != std::string::npos && cl != std::string::npos &&
            absl::SimpleAtoi(req.substr(cl + 16, req.find("\r\n", cl) - cl - 16), &len))
          need = head + 4 + len;
      }
      {
        std::lock_guard l(mu_);
        requests_.push_back(req);
      }
      for (size_t sent = 0; sent < reply_.size();) {
        ssize_t n = ::send(c, reply_.data() + sent, reply_.size() - sent, MSG_NOSIGNAL);
        if (n <= 0) break;
        sent += n;
      }
      ::close(c);
    }
  }
  std::string reply_;
  int fd_ = -1;
  int port_ = 0;
  std::thread thread_;
  std::mutex mu_;
  std::vector<std::string> requests_;
};

const char kKey[] = "sk-operator-0123456789abcdef";

v1::JobSpec LlmJob(const std::string& endpoint) {
  v1::JobSpec spec;
  spec.set_kind(v1::JOB_KIND_TUNE);
  spec.set_target("interp");
  spec.set_policy("llm");
  spec.set_llm_endpoint(endpoint);
  spec.set_max_candidates(1);
  auto* p = spec.mutable_problem();
  p->set_family("softmax");
  p->set_dtype("f32");
  (*p->mutable_shape())["R"] = 4;
  (*p->mutable_shape())["N"] = 256;
  return spec;
}

TEST_CASE("a job cannot send the server's LLM key to an endpoint of its own", "[security][llm]") {
  Listener spy("HTTP/1.1 500 x\r\nContent-Length: 0\r\n\r\n");
  Listener gateway("HTTP/1.1 503 busy\r\nContent-Length: 0\r\n\r\n");
  std::string dir = TempDir();
  server::ServerOptions opt;
  opt.db_path = dir + "/argus.db";
  opt.planner.llm_endpoints = {{"operator", gateway.url(), "m", kKey}};
  opt.planner.llm.retries = 0;
  server::Server server(opt);
  auto addr = server.Start();
  REQUIRE(addr.ok());
  auto jobs = v1::JobService::NewStub(worker::Dial(*addr, {}));
  auto submit = [&](const v1::JobSpec& spec, v1::SubmitJobResponse* resp) {
    v1::SubmitJobRequest req;
    *req.mutable_spec() = spec;
    return jobs->SubmitJob(Ctx().get(), req, resp);
  };
  int refused = 0;
  for (const std::string& endpoint :
       {spy.url(), spy.url() + "\r\nX-Injected: 1", std::string("https://evil.example/v1"),
        std::string("operator\r\n")}) {
    v1::SubmitJobResponse resp;
    grpc::Status st = submit(LlmJob(endpoint), &resp);
    INFO(endpoint << ": " << st.error_message());
    CHECK(st.error_code() == grpc::INVALID_ARGUMENT);
    CHECK(st.error_message().rfind("spec.llm_endpoint: '", 0) == 0);
    CHECK(st.error_message().find("(operator)") != std::string::npos);
    CHECK(st.error_message().find('\n') == std::string::npos);
    refused += st.error_code() == grpc::INVALID_ARGUMENT;
    PrintRefused("llm_endpoint " + endpoint.substr(0, 24), st);
  }
  // Naming the operator's endpoint works, and the key goes there only.
  v1::SubmitJobResponse resp;
  REQUIRE(submit(LlmJob("operator"), &resp).ok());
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (gateway.requests().empty() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  REQUIRE(!gateway.requests().empty());
  CHECK(gateway.requests()[0].find(std::string("Authorization: Bearer ") + kKey) !=
        std::string::npos);
  v1::CancelJobRequest cancel;
  cancel.set_id(resp.job().id());
  v1::Job out;
  CHECK(jobs->CancelJob(Ctx().get(), cancel, &out).ok());
  std::printf(
      "figure: %d job-chosen endpoints refused; requests at the job's listener: %zu, at "
      "the operator's: %zu (with its key)\n",
      refused, spy.requests().size(), gateway.requests().size());
  CHECK(spy.requests().empty());
  CHECK(refused == 4);
  server.Shutdown();
}

TEST_CASE("LLM endpoint URLs are checked when the operator's file is loaded", "[security][llm]") {
  std::string dir = TempDir();
  int refused = 0;
  for (const std::string& url :
       {std::string("http://127.0.0.1:8000/v1\r\nX-Injected: 1"), std::string("http://h/v1 x"),
        std::string("http://h/\x01v1"), std::string("ftp://h/v1"), std::string("https://h/v1"),
        std::string("http://user:pw@h/v1"), std::string("http://h:99999/v1"),
        std::string("http://h_x/v1"), std::string("http:///v1"), std::string("http://h/v1#x")}) {
    std::string esc;
    for (char c : url) esc += c == '\r' ? "\\r" : c == '\n' ? "\\n" : std::string(1, c);
    auto st = planner::ValidateLlmUrl(url);
    INFO(esc);
    CHECK(!st.ok());
    refused += !st.ok();
    std::printf("  refused %-44s %s\n", esc.c_str(), std::string(st.message()).c_str());
  }
  CHECK(planner::ValidateLlmUrl("http://127.0.0.1:8000/v1").ok());
  CHECK(planner::ValidateLlmUrl("http://[::1]:8000/v1").ok());
  CHECK(planner::ValidateLlmUrl("http://llm-gw.internal/v1/").ok());
  // The file: a bad URL, a key file, a missing key variable.
  std::string key = WriteSecret(dir, "llm.key", kKey);
  std::string good =
      WriteSecret(dir, "good.json",
                  R"({"endpoints": [{"name": "gw", "url": "http://127.0.0.1:8000/v1", "model": "m",
                         "api_key_file": ")" +
                      key + R"("}]})");
  auto eps = planner::LoadLlmEndpoints(good);
  REQUIRE(eps.ok());
  CHECK((*eps)[0].api_key == kKey);
  std::string bad = WriteSecret(dir, "bad.json",
                                R"({"endpoints": [{"name": "gw", "url": "http://h/v1\r\nX: 1"}]})");
  auto st = planner::LoadLlmEndpoints(bad).status();
  CHECK(st.message().find("endpoints[0].url") != std::string::npos);
  std::string nokey = WriteSecret(
      dir, "nokey.json",
      R"({"endpoints": [{"name": "gw", "url": "http://h/v1", "api_key_env": "ARGUS_NO_SUCH_VAR"}]})");
  CHECK(planner::LoadLlmEndpoints(nokey).status().message().find("api_key_env") !=
        std::string::npos);
  std::printf("figure: %d malformed endpoint URLs refused; the file names the field (%s)\n",
              refused, std::string(st.message()).c_str());
  CHECK(refused == 10);
}

TEST_CASE("an LLM reply is bounded in size", "[security][llm]") {
  std::string huge(10 << 20, 'x');
  Listener flood("HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(huge.size()) + "\r\n\r\n" +
                 huge);
  auto r = planner::PostJson(flood.url() + "/chat/completions", "{}", "", 10'000, 1 << 20);
  CHECK(r.status().code() == absl::StatusCode::kResourceExhausted);
  std::printf("figure: a 10 MiB reply refused at the 1 MiB bound: %s\n",
              std::string(r.status().message()).c_str());
  Listener small("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}");
  auto ok = planner::PostJson(small.url() + "/chat/completions", "{}", "", 10'000, 1 << 20);
  REQUIRE(ok.ok());
  CHECK(ok->body == "{}");
}

}  // namespace
}  // namespace argus::security
