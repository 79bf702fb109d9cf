// gpu_worker/verifier_client.h: a client of the argus-verifier service
// (VerifierService, proto/argus/v1/verifier.proto), for the planner's remote
// gate and for workers that re-verify candidates before running them.
//
// Verify() sends one kernel (source, constants, dims) and returns the
// verifier's report as JSON (docs/verifier.md: "verified", "obligations",
// "proved", "findings" with counterexamples). While the service is
// unreachable (UNAVAILABLE, or a deadline without an answer) it waits and
// retries with backoff — a verifier restart delays candidates, it fails none —
// until the service answers, Stop() is called or `max_wait_ms` has passed
// (then it returns UNAVAILABLE). Other RPC errors are returned at once.
//
// Thread safety: thread-safe; Verify may be called from many threads, Stop
// from any.
#ifndef ARGUS_GPU_WORKER_VERIFIER_CLIENT_H_
#define ARGUS_GPU_WORKER_VERIFIER_CLIENT_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "absl/status/statusor.h"
#include "argus/v1/verifier.grpc.pb.h"
#include "gpu_worker/candidate_schema.h"
#include "gpu_worker/dial.h"

namespace argus::worker {

struct VerifierClientOptions {
  std::string address;                // host:port of argus-verifier
  DialOptions dial;                   // TLS / token, as for argus-server
  int64_t rpc_deadline_ms = 120'000;  // one verification's budget (the service's deadline)
  int64_t max_wait_ms = 0;            // how long to wait for an unreachable service; 0: forever
  int64_t retry_ms = 500;             // first backoff; doubles up to 5 s
};

class VerifierClient {
 public:
  explicit VerifierClient(VerifierClientOptions options);

  // The report JSON; `waited_ms` (optional) gets the time spent waiting for
  // an unreachable service.
  absl::StatusOr<nlohmann::json> Verify(const KernelSpec& kernel, int64_t* waited_ms = nullptr);
  void Stop() { stop_.store(true); }
  const std::string& address() const { return options_.address; }
  // Calls that found the service unreachable so far (for monitoring and for
  // tests that must know a wait has begun).
  int64_t unavailable_attempts() const { return unavailable_attempts_.load(); }

 private:
  VerifierClientOptions options_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::VerifierService::Stub> stub_;
  std::atomic<bool> stop_{false};
  std::atomic<int64_t> unavailable_attempts_{0};
};

// A report JSON from a VerifyResponse (its report_json, or — for input
// errors, which have none — one built from the diagnostics).
nlohmann::json ReportFromResponse(const v1::VerifyResponse& response);

}  // namespace argus::worker

#endif  // ARGUS_GPU_WORKER_VERIFIER_CLIENT_H_
