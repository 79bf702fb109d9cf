// server/auth.h: who may call argus-server, and over what transport.
//
// Three kinds of bearer token, each from its own file (one token per line;
// "NAME TOKEN" names the principal, whose name then replaces the self-declared
// JobSpec.client so per-client limits cannot be dodged):
//   client  (--token_file)        the job service (submit, get, list, watch)
//   worker  (--worker_token_file) the worker service (register, lease, report)
//   admin   (--admin_token_file)  everything a client may do, plus admin actions
// A token of one kind never opens the other service. With no token file the
// server is open (a development setup); with one, every call of the job and
// worker services must carry "authorization: Bearer TOKEN", else it fails
// with UNAUTHENTICATED (no / unknown token) or PERMISSION_DENIED (a token of
// the wrong kind). grpc.health.v1 stays open for probes.
//
// TLS: --tls_cert/--tls_key serve TLS; --tls_ca in addition requires and
// verifies a client certificate signed by that CA (mTLS).
//
// Thread safety: an Authenticator is immutable after FromFiles; Check is
// thread-safe.
#ifndef ARGUS_SERVER_AUTH_H_
#define ARGUS_SERVER_AUTH_H_

#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "server/server.h"

namespace argus::server {

enum class Role { kClient, kWorker, kAdmin };

class Authenticator {
 public:
  // Empty paths: that kind has no token. All empty: an open server.
  static absl::StatusOr<std::shared_ptr<const Authenticator>> FromFiles(
      const std::string& client_file, const std::string& worker_file,
      const std::string& admin_file);

  bool enabled() const { return !entries_.empty(); }
  // OK when the call's bearer token may act as `needed`; `*name` gets the
  // principal's name ("" for an unnamed token or an open server).
  grpc::Status Check(const grpc::ServerContext* ctx, Role needed, std::string* name) const;
  // The same check on an "authorization" header value (nullptr: none sent),
  // for the HTTP dashboard/API: its write actions need Role::kAdmin.
  grpc::Status CheckHeader(const std::string* authorization, Role needed, std::string* name) const;

 private:
  struct Entry {
    std::string token;
    Role role;
    std::string name;
  };
  std::vector<Entry> entries_;
};

// Options' authenticator check (OK when none is configured).
grpc::Status Authorize(const ServerOptions& options, const grpc::ServerContext* ctx, Role needed,
                       std::string* name = nullptr);

// Plaintext, TLS or mTLS server credentials from the options' files.
absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> MakeServerCredentials(
    const ServerOptions& options);

}  // namespace argus::server

#endif  // ARGUS_SERVER_AUTH_H_
