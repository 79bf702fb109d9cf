// proto/auth.h: who may call an Argus gRPC service (argus-server,
// argus-verifier) and the dashboard, and over what transport.
//
// Bearer tokens come from files (one token per line; "NAME TOKEN" names the
// principal). Each file holds one kind (Role): client tokens call the job
// service, worker tokens the worker service, admin tokens everything a client
// or reader may do plus admin actions, read tokens only the dashboard's reads.
// A token of one kind never opens another kind's calls. A caller's principal
// name is the token's NAME, or "token-" and the first 12 hex digits of the
// token's SHA-256 for an unnamed line: never a name the caller chose. With no
// token at all an Authenticator is disabled and every call passes (the
// documented local mode); with one, a call must carry
// "authorization: Bearer TOKEN", else UNAUTHENTICATED (none / unknown) or
// PERMISSION_DENIED (the wrong kind).
//
// TLS: a certificate and key serve TLS; a CA in addition requires and
// verifies a client certificate signed by it (mTLS), whose subject
// (PeerCertificateIdentity) then names the caller too.
//
// Thread safety: an Authenticator is immutable after FromFiles; Check and
// CheckHeader are thread-safe; the functions are pure.
#ifndef ARGUS_PROTO_AUTH_H_
#define ARGUS_PROTO_AUTH_H_

#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace argus::auth {

enum class Role { kClient, kWorker, kAdmin, kRead };

// The files of each kind; an empty path: no token of that kind.
struct TokenFiles {
  std::string client, worker, admin, read;
};

// Who a call came from.
struct Principal {
  std::string name;    // the token's principal ("" when the Authenticator is disabled)
  bool admin = false;  // an admin token
};

class Authenticator {
 public:
  static absl::StatusOr<std::shared_ptr<const Authenticator>> FromFiles(const TokenFiles& files);

  bool enabled() const { return !entries_.empty(); }
  bool has(Role role) const;
  // OK when the call's bearer token may act as `needed`; fills `*who`.
  grpc::Status Check(const grpc::ServerContext* ctx, Role needed, Principal* who = nullptr) const;
  // The same check on an "authorization" header value (nullptr: none sent),
  // for HTTP callers (the dashboard).
  grpc::Status CheckHeader(const std::string* authorization, Role needed,
                           Principal* who = nullptr) const;

 private:
  struct Entry {
    std::string token;
    Role role;
    std::string name;
  };
  std::vector<Entry> entries_;
};

// "client", "worker", "admin", "read".
const char* RoleName(Role role);

// The first 12 hex digits of SHA-256(text): names a secret without revealing it.
std::string Fingerprint(const std::string& text);

// The verified client certificate's subject names (x509 SAN, else CN) of an
// mTLS call, joined by ','; "" over plaintext, TLS without a client
// certificate, or in-process calls.
std::string PeerCertificateIdentity(const grpc::ServerContext* ctx);

// PEM files of a TLS listener: cert+key serve TLS, ca requires client certs.
struct TlsFiles {
  std::string cert, key, ca;
};
// Plaintext (all empty), TLS or mTLS server credentials; errors name the
// flags --tls_cert, --tls_key, --tls_ca.
absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> MakeServerCredentials(
    const TlsFiles& files);

}  // namespace argus::auth

#endif  // ARGUS_PROTO_AUTH_H_
