// server/auth.h: argus-server's use of the token and TLS checks of
// proto/auth.h.
//
// Token files (ServerOptions): --token_file (client), --worker_token_file,
// --admin_token_file, --read_token_file (dashboard reads). With none the
// server is open (the local mode: every caller on the network it listens on
// is trusted and names itself); with a client or admin file it also needs
// worker tokens, so no service is left open. What the identities then bind:
//   - a job belongs to the principal that submitted it (JobSpec.client is
//     set from the token; the request's value is ignored): GetJob, WatchJob,
//     CancelJob and ListArtifacts of another principal's job answer
//     NOT_FOUND, ListJobs lists the caller's own jobs; admin tokens see all;
//   - a worker id carries the fingerprint of the credential that registered
//     it (WorkerIdFor): "w-" + Fingerprint(token principal [+ mTLS subject])
//     + "-" + random. RegisterWorker under an id of another credential, and
//     LeaseTask/Heartbeat/ReportResult naming one, are PERMISSION_DENIED, so
//     one worker can neither report for another's lease nor take its id.
// grpc.health.v1 stays open for probes.
//
// Thread safety: pure functions over immutable options.
#ifndef ARGUS_SERVER_AUTH_H_
#define ARGUS_SERVER_AUTH_H_

#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "proto/auth.h"
#include "server/server.h"

namespace argus::server {

using ::argus::auth::Authenticator;
using ::argus::auth::Principal;
using ::argus::auth::Role;

// The options' token files as an Authenticator, refusing setups that would
// leave a service open.
absl::StatusOr<std::shared_ptr<const Authenticator>> LoadServerAuth(const ServerOptions& options);

// Options' authenticator check (OK when none is configured).
grpc::Status Authorize(const ServerOptions& options, const grpc::ServerContext* ctx, Role needed,
                       Principal* who = nullptr);

// The credential a worker call comes with: its token's principal and its
// client certificate's subject; "" on an open server without mTLS.
std::string WorkerCredential(const ServerOptions& options, const grpc::ServerContext* ctx,
                             const Principal& who);
// The prefix every worker id of `credential` has ("w-FINGERPRINT-"); "" for
// the empty credential (any id).
std::string WorkerIdPrefix(const std::string& credential);

// Plaintext, TLS or mTLS server credentials from the options' files.
absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> MakeServerCredentials(
    const ServerOptions& options);

}  // namespace argus::server

#endif  // ARGUS_SERVER_AUTH_H_
