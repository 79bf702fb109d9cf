// verifier/service.h: the argus-verifier gRPC service (VerifierService in
// proto/argus/v1/verifier.proto).
//
// Each request compiles the source with its constants and verifies it with a
// per-obligation Z3 budget — the deterministic resource limit
// (VerifyOptions::solver_rlimit), with request.solver_timeout_ms (clamped to
// [1, max_solver_timeout_ms]) as the wall-clock last resort — and a total
// budget that the server sets: the request's deadline may shorten it, never
// lengthen it past `max_request_ms` (a request with no deadline gets
// min(default_deadline_ms, max_request_ms)). Obligations not decided within
// them are "unknown", never "proved"; Z3 is stopped by our watchdog
// (Z3_interrupt, verifier/solver.h), not by its own timeout. Input errors
// come back as an ERROR diagnostic in an OK response; oversized requests and
// fields are INVALID_ARGUMENT naming the field and its limit. Nothing a
// request contains can take the service down.
//
// Access: with tokens (ServiceOptions::auth, argus-verifier --token_file) a
// call needs "authorization: Bearer TOKEN" of that file, else UNAUTHENTICATED;
// ServiceOptions::tls serves TLS, or mTLS with a CA (proto/auth.h), as
// argus-server does. The planner (argus-server --verifier_token_file,
// --verifier_tls_*) and argus-worker (the same flags) dial it accordingly.
//
// Thread safety: VerifierServiceImpl is called concurrently by gRPC; it keeps
// no mutable state (the verifier's cache is internally synchronised).
// VerifierServer is started and stopped from one thread.
#ifndef ARGUS_VERIFIER_SERVICE_H_
#define ARGUS_VERIFIER_SERVICE_H_

#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "argus/v1/verifier.grpc.pb.h"
#include "proto/auth.h"

namespace argus::verifier {

struct ServiceOptions {
  std::string listen = "127.0.0.1:7071";
  int default_solver_timeout_ms = 60000;
  int max_solver_timeout_ms = 600000;
  int64_t max_source_bytes = 1 << 20;
  int64_t default_deadline_ms = 60000;  // when the request sets none
  int64_t max_request_ms = 30000;       // the most one request may run, whatever its deadline
  std::shared_ptr<const auth::Authenticator> auth;  // null or no tokens: open
  auth::TlsFiles tls;                               // empty: plaintext
};

class VerifierServiceImpl final : public v1::VerifierService::Service {
 public:
  explicit VerifierServiceImpl(ServiceOptions o) : opt_(std::move(o)) {}
  grpc::Status Verify(grpc::ServerContext* ctx, const v1::VerifyRequest* req,
                      v1::VerifyResponse* resp) override;

 private:
  ServiceOptions opt_;
};

class VerifierServer {
 public:
  explicit VerifierServer(ServiceOptions o);
  ~VerifierServer();
  // Listens; returns the bound address (host:port).
  absl::StatusOr<std::string> Start();
  void Wait();
  // Stops serving (safe from another thread while Wait() blocks).
  void Shutdown();
  // Shutdown() and release the server; not concurrently with Wait().
  void Stop();

 private:
  ServiceOptions opt_;
  std::unique_ptr<VerifierServiceImpl> service_;
  std::unique_ptr<grpc::Server> server_;
};

}  // namespace argus::verifier

#endif  // ARGUS_VERIFIER_SERVICE_H_
