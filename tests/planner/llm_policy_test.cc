// The LLM policy against a scripted OpenAI-compatible endpoint on loopback
// that records every prompt.
#include "planner/llm_policy.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <deque>
#include <mutex>

#include "nlohmann/json.hpp"
#include "tests/planner/test_stack.h"

namespace argus::planner {
namespace {

using nlohmann::json;

struct Reply {
  int status = 200;
  std::string body;
  int delay_ms = 0;
};

std::string Completion(const std::string& content) {
  return json({{"choices", {{{"message", {{"role", "assistant"}, {"content", content}}}}}}}).dump();
}

// Serves scripted replies in order (the last one repeats), one per connection.
class ScriptedEndpoint {
 public:
  explicit ScriptedEndpoint(std::deque<Reply> replies) : replies_(std::move(replies)) {
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
  ~ScriptedEndpoint() {
    stop_ = true;
    ::shutdown(fd_, SHUT_RDWR);
    ::close(fd_);
    thread_.join();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/v1"; }
  std::vector<std::string> prompts() {
    std::lock_guard l(mu_);
    return prompts_;
  }

 private:
  void Serve() {
    while (!stop_) {
      int c = ::accept(fd_, nullptr, nullptr);
      if (c < 0) return;
      std::string req;
      char buf[65536];
      size_t need = std::string::npos;
      while (true) {
        ssize_t n = ::recv(c, buf, sizeof(buf), 0);
        if (n <= 0) break;
        req.append(buf, n);
        size_t he = req.find("\r\n\r\n");
        if (he != std::string::npos && need == std::string::npos) {
          size_t cl = req.find("Content-Length: ");
          need = he + 4 + std::stoul(req.substr(cl + 16));
        }
        if (need != std::string::npos && req.size() >= need) break;
      }
      Reply r;
      {
        std::lock_guard l(mu_);
        json body = json::parse(req.substr(req.find("\r\n\r\n") + 4), nullptr, false);
        prompts_.push_back(body.is_discarded() ? ""
                                               : body["messages"][1]["content"].get<std::string>());
        r = replies_.front();
        if (replies_.size() > 1) replies_.pop_front();
      }
      if (r.delay_ms) std::this_thread::sleep_for(std::chrono::milliseconds(r.delay_ms));
      std::string resp = "HTTP/1.1 " + std::to_string(r.status) +
                         " X\r\nContent-Type: application/json\r\nContent-Length: " +
                         std::to_string(r.body.size()) + "\r\nConnection: close\r\n\r\n" + r.body;
      (void)::send(c, resp.data(), resp.size(), MSG_NOSIGNAL);
      ::close(c);
    }
  }
  int fd_;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread thread_;
  std::mutex mu_;
  std::deque<Reply> replies_;
  std::vector<std::string> prompts_;
};

const char* kGoodSoftmax = R"(Here is a faster kernel:
```python
@kernel(threads=NT)
def softmax(X: Tensor[f32, "R", "N"], Y: Tensor[f32, "R", "N"], NT: const = 32):
    grid(R)
    r = block_id(0)
    m = -3.0e38
    for j in range(thread_id(), N, NT):
        m = max(m, X[r, j])
    m = block_reduce_max(m)
    s = 0.0
    for j in range(thread_id(), N, NT):
        s += exp(X[r, j] - m)
    s = block_reduce_sum(s)
    inv = 1.0 / s
    for j in range(thread_id(), N, NT):
        Y[r, j] = exp(X[r, j] - m) * inv
```
)";

const char* kBrokenSoftmax = R"(```python
@kernel(threads=64)
def softmax(X: Tensor[f32, "R", "N"], Y: Tensor[f32, "R", "N"]):
    grid(R)
    Y[block_id(0), 0] = undefined_name
```)";

TEST_CASE("extracting the kernel from a reply", "[planner][llm]") {
  auto k = ExtractKernel(kGoodSoftmax);
  REQUIRE(k.ok());
  CHECK(k->second == "softmax");
  CHECK(!ExtractKernel("no code here").ok());
  CHECK(!ExtractKernel("```python\nx = 1\n```").ok());
  CHECK(!ExtractKernel("```python\n@kernel(threads=1)\ndef f(").ok());
}

TEST_CASE("the LLM policy: counterexamples and rewards reach the prompt, bad replies are survived",
          "[planner][llm]") {
  ScriptedEndpoint ep({
      {200, "this is not json"},              // step 0, attempt 1: malformed
      {200, Completion(kBrokenSoftmax)},      // step 0, attempt 2: fails the checker
      {200, Completion(kGoodSoftmax)},        // step 1: a valid, faster kernel
      {200, Completion("I cannot help"), 0},  // step 2: no code block ...
      {200, Completion(kGoodSoftmax), 1500},  // ... then a timeout: builtin fallback
      {429, "{}"},                            // step 3 onwards: rate limited
  });
  PlannerOptions po;
  po.llm.timeout_ms = 500;
  po.llm.retries = 1;
  po.llm.backoff_ms = 10;
  po.llm_endpoints = {{"scripted", ep.url(), "scripted", ""}};
  Stack s("llm", po);
  v1::JobSpec spec;
  spec.set_kind(v1::JOB_KIND_TUNE);
  spec.set_target("interp");
  spec.set_policy("llm");
  spec.set_llm_endpoint("scripted");
  spec.set_max_candidates(4);
  auto* p = spec.mutable_problem();
  p->set_family("softmax");
  p->set_dtype("f32");
  (*p->mutable_shape())["R"] = 8;
  (*p->mutable_shape())["N"] = 512;
  v1::Job job = s.Tune(spec);
  INFO(job.error() << job.result_json());
  REQUIRE(job.state() == v1::JOB_STATE_SUCCEEDED);
  auto rows = *s.store()->ListTrajectory(job.id());
  REQUIRE(rows.size() == 4);
  json d0 = json::parse(rows[0].detail_json), d1 = json::parse(rows[1].detail_json),
       d2 = json::parse(rows[2].detail_json), d3 = json::parse(rows[3].detail_json);
  CHECK(rows[0].action == "llm");
  CHECK(d0["outcome"]["outcome"] == "rejected");
  CHECK(d0["verifier"]["violations"].size() == 1);
  CHECK(rows[1].action == "llm");
  CHECK(d1["outcome"]["outcome"] == "ok");
  CHECK(rows[1].reward > 1.0);  // NT=32 beats the NT=128 baseline on the interpreter
  CHECK(d2["why"].get<std::string>().find("llm failed") != std::string::npos);
  CHECK(d3["why"].get<std::string>().find("rate limited") != std::string::npos);
  auto prompts = ep.prompts();
  REQUIRE(prompts.size() >= 5);
  // The prompt for step 1 carries step 0's counterexample (the checker's message).
  CHECK(prompts[2].find("undefined_name") != std::string::npos);
  CHECK(prompts[2].find("rejected") != std::string::npos);
  // The prompt for step 2 carries step 1's reward.
  CHECK(prompts[3].find("reward 1.") != std::string::npos);
  CHECK(prompts[0].find("softmax") != std::string::npos);
  CHECK(prompts[0].find("Online softmax") != std::string::npos);  // KB entries
  json r = json::parse(job.result_json());
  CHECK(r["policy"] == "llm");
  CHECK(r["best"]["source"].get<std::string>().find("NT: const = 32") != std::string::npos);
}

}  // namespace
}  // namespace argus::planner
