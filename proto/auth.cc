#include "proto/auth.h"

#include <openssl/evp.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "base/secret_file.h"

namespace argus::auth {
namespace {

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

// An admin token may do what a client or a reader may.
bool Allows(Role have, Role needed) {
  return have == needed ||
         (have == Role::kAdmin && (needed == Role::kClient || needed == Role::kRead));
}

std::string NeedMessage(Role needed) {
  switch (needed) {
    case Role::kWorker:
      return "this server requires a worker token: start argus-worker with --worker_token_file";
    case Role::kRead:
      return "this dashboard requires a read or admin token (argus-server --read_token_file)";
    default:
      return "this server requires a token: set ARGUS_TOKEN or pass --token_file FILE";
  }
}

}  // namespace

const char* RoleName(Role r) {
  switch (r) {
    case Role::kClient:
      return "client";
    case Role::kWorker:
      return "worker";
    case Role::kAdmin:
      return "admin";
    case Role::kRead:
      return "read";
  }
  return "?";
}

std::string Fingerprint(const std::string& text) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(text.data(), text.size(), digest, &len, EVP_sha256(), nullptr);
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned int i = 0; i < 6 && i < len; ++i) {
    out += kHex[digest[i] >> 4];
    out += kHex[digest[i] & 15];
  }
  return out;
}

absl::StatusOr<std::shared_ptr<const Authenticator>> Authenticator::FromFiles(
    const TokenFiles& files) {
  auto auth = std::make_shared<Authenticator>();
  for (auto [file, role] : {std::pair{files.client, Role::kClient},
                            {files.worker, Role::kWorker},
                            {files.admin, Role::kAdmin},
                            {files.read, Role::kRead}}) {
    if (file.empty()) continue;
    auto lines = ReadSecretLines(file);
    if (!lines.ok()) return lines.status();
    for (const auto& line : *lines) {
      std::vector<std::string> parts = absl::StrSplit(line, ' ', absl::SkipWhitespace());
      if (parts.size() > 2) {
        return absl::InvalidArgumentError(
            absl::StrCat(file, ": a line is TOKEN or NAME TOKEN, not ", parts.size(), " words"));
      }
      Entry e{parts.back(), role,
              parts.size() > 1 ? parts.front() : "token-" + Fingerprint(parts.back())};
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
  return std::shared_ptr<const Authenticator>(std::move(auth));
}

bool Authenticator::has(Role role) const {
  for (const auto& e : entries_) {
    if (e.role == role) return true;
  }
  return false;
}

grpc::Status Authenticator::Check(const grpc::ServerContext* ctx, Role needed,
                                  Principal* who) const {
  if (who) *who = {};
  if (!enabled()) return grpc::Status::OK;
  const auto& md = ctx->client_metadata();
  auto it = md.find("authorization");
  if (it == md.end()) return CheckHeader(nullptr, needed, who);
  std::string value(it->second.data(), it->second.size());
  return CheckHeader(&value, needed, who);
}

grpc::Status Authenticator::CheckHeader(const std::string* authorization, Role needed,
                                        Principal* who) const {
  if (who) *who = {};
  if (!enabled()) return grpc::Status::OK;
  if (authorization == nullptr) return grpc::Status(grpc::UNAUTHENTICATED, NeedMessage(needed));
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
  if (who) *who = {found->name, found->role == Role::kAdmin};
  return grpc::Status::OK;
}

std::string PeerCertificateIdentity(const grpc::ServerContext* ctx) {
  auto auth = ctx->auth_context();
  if (!auth || !auth->IsPeerAuthenticated()) return "";
  std::vector<std::string> names;
  for (const auto& v : auth->GetPeerIdentity()) names.emplace_back(v.data(), v.size());
  return absl::StrJoin(names, ",");
}

absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> MakeServerCredentials(
    const TlsFiles& files) {
  if (files.cert.empty() && files.key.empty()) {
    if (!files.ca.empty()) {
      return absl::InvalidArgumentError("--tls_ca (mTLS) needs --tls_cert and --tls_key too");
    }
    return grpc::InsecureServerCredentials();
  }
  if (files.cert.empty() || files.key.empty()) {
    return absl::InvalidArgumentError("--tls_cert and --tls_key go together");
  }
  auto cert = ReadSmallFile(files.cert);
  if (!cert.ok()) return cert.status();
  auto key = ReadSmallFile(files.key);
  if (!key.ok()) return key.status();
  grpc::SslServerCredentialsOptions ssl(GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE);
  ssl.pem_key_cert_pairs.push_back({*key, *cert});
  if (!files.ca.empty()) {
    auto ca = ReadSmallFile(files.ca);
    if (!ca.ok()) return ca.status();
    ssl.pem_root_certs = *ca;
    ssl.client_certificate_request = GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY;
  }
  return grpc::SslServerCredentials(ssl);
}

}  // namespace argus::auth
