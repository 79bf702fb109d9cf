#include "server/auth.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "base/secret_file.h"

namespace argus::server {
namespace {

const char* RoleName(Role r) {
  switch (r) {
    case Role::kClient:
      return "client";
    case Role::kWorker:
      return "worker";
    case Role::kAdmin:
      return "admin";
  }
  return "?";
}

// Compares without an early exit, so timing does not reveal a prefix.
bool SameSecret(const std::string& a, const std::string& b) {
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  size_t n = std::max(a.size(), b.size());
  for (size_t i = 0; i < n; ++i) {
    unsigned char x = i < a.size() ? a[i] : 0, y = i < b.size() ? b[i] : 0;
    diff |= x ^ y;
  }
  return diff == 0;
}

bool Allows(Role have, Role needed) {
  return have == needed || (have == Role::kAdmin && needed == Role::kClient);
}

}  // namespace

absl::StatusOr<std::shared_ptr<const Authenticator>> Authenticator::FromFiles(
    const std::string& client_file, const std::string& worker_file, const std::string& admin_file) {
  auto auth = std::make_shared<Authenticator>();
  for (auto [file, role] : {std::pair{client_file, Role::kClient},
                            {worker_file, Role::kWorker},
                            {admin_file, Role::kAdmin}}) {
    if (file.empty()) continue;
    auto lines = ReadSecretLines(file);
    if (!lines.ok()) return lines.status();
    for (const auto& line : *lines) {
      std::vector<std::string> parts = absl::StrSplit(line, ' ', absl::SkipWhitespace());
      Entry e{parts.back(), role, parts.size() > 1 ? parts.front() : ""};
      if (parts.size() > 2) {
        return absl::InvalidArgumentError(
            absl::StrCat(file, ": a line is TOKEN or NAME TOKEN, not ", parts.size(), " words"));
      }
      if (e.token.size() < 16) {
        return absl::InvalidArgumentError(
            absl::StrCat(file, ": tokens need at least 16 characters (try: openssl rand -hex 32)"));
      }
      for (const auto& other : auth->entries_) {
        if (SameSecret(other.token, e.token) && other.role != e.role) {
          return absl::InvalidArgumentError(absl::StrCat("the ", RoleName(role), " token in ", file,
                                                         " is also a ", RoleName(other.role),
                                                         " token; each kind needs its own"));
        }
      }
      auth->entries_.push_back(std::move(e));
    }
  }
  if (auth->enabled() && (client_file.empty() && admin_file.empty())) {
    return absl::InvalidArgumentError(
        "--worker_token_file without --token_file would leave the job service open");
  }
  if (auth->enabled() && worker_file.empty()) {
    return absl::InvalidArgumentError(
        "--worker_token_file is required with --token_file: workers need their own token");
  }
  return std::shared_ptr<const Authenticator>(std::move(auth));
}

grpc::Status Authenticator::Check(const grpc::ServerContext* ctx, Role needed,
                                  std::string* name) const {
  if (name) name->clear();
  if (!enabled()) return grpc::Status::OK;
  const auto& md = ctx->client_metadata();
  auto it = md.find("authorization");
  if (it == md.end()) return CheckHeader(nullptr, needed, name);
  std::string value(it->second.data(), it->second.size());
  return CheckHeader(&value, needed, name);
}

grpc::Status Authenticator::CheckHeader(const std::string* authorization, Role needed,
                                        std::string* name) const {
  if (name) name->clear();
  if (!enabled()) return grpc::Status::OK;
  if (authorization == nullptr) {
    return grpc::Status(
        grpc::UNAUTHENTICATED,
        needed == Role::kWorker
            ? "this server requires a worker token: start argus-worker with --worker_token_file"
            : "this server requires a token: set ARGUS_TOKEN or pass --token_file FILE");
  }
  const std::string& value = *authorization;
  if (!absl::StartsWith(value, "Bearer ")) {
    return grpc::Status(grpc::UNAUTHENTICATED,
                        "the authorization metadata must read 'Bearer TOKEN'");
  }
  std::string token = value.substr(7);
  const Entry* found = nullptr;
  for (const auto& e : entries_) {
    if (SameSecret(e.token, token)) found = &e;
  }
  if (!found) return grpc::Status(grpc::UNAUTHENTICATED, "the token is not valid for this server");
  if (!Allows(found->role, needed)) {
    return grpc::Status(grpc::PERMISSION_DENIED,
                        absl::StrCat(found->role == Role::kAdmin ? "an " : "a ",
                                     RoleName(found->role), " token cannot make ", RoleName(needed),
                                     " calls; use the ", RoleName(needed), " token"));
  }
  if (name) *name = found->name;
  return grpc::Status::OK;
}

grpc::Status Authorize(const ServerOptions& options, const grpc::ServerContext* ctx, Role needed,
                       std::string* name) {
  if (!options.auth) return grpc::Status::OK;
  return options.auth->Check(ctx, needed, name);
}

absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> MakeServerCredentials(
    const ServerOptions& options) {
  if (options.tls_cert.empty() && options.tls_key.empty()) {
    if (!options.tls_ca.empty()) {
      return absl::InvalidArgumentError("--tls_ca (mTLS) needs --tls_cert and --tls_key too");
    }
    return grpc::InsecureServerCredentials();
  }
  if (options.tls_cert.empty() || options.tls_key.empty()) {
    return absl::InvalidArgumentError("--tls_cert and --tls_key go together");
  }
  auto cert = ReadSmallFile(options.tls_cert);
  if (!cert.ok()) return cert.status();
  auto key = ReadSmallFile(options.tls_key);
  if (!key.ok()) return key.status();
  grpc::SslServerCredentialsOptions ssl(GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE);
  ssl.pem_key_cert_pairs.push_back({*key, *cert});
  if (!options.tls_ca.empty()) {
    auto ca = ReadSmallFile(options.tls_ca);
    if (!ca.ok()) return ca.status();
    ssl.pem_root_certs = *ca;
    ssl.client_certificate_request = GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY;
  }
  return grpc::SslServerCredentials(ssl);
}

}  // namespace argus::server
