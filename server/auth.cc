#include "server/auth.h"

#include "absl/strings/str_cat.h"

namespace argus::server {

absl::StatusOr<std::shared_ptr<const Authenticator>> LoadServerAuth(const ServerOptions& o) {
  auto auth = Authenticator::FromFiles(
      {o.token_file, o.worker_token_file, o.admin_token_file, o.read_token_file});
  if (!auth.ok()) return auth.status();
  bool jobs_closed = !o.token_file.empty() || !o.admin_token_file.empty();
  if ((*auth)->enabled() && !jobs_closed) {
    return absl::InvalidArgumentError(
        absl::StrCat(o.worker_token_file.empty() ? "--read_token_file" : "--worker_token_file",
                     " without --token_file would leave the job service open"));
  }
  if ((*auth)->enabled() && o.worker_token_file.empty()) {
    return absl::InvalidArgumentError(
        "--worker_token_file is required with --token_file: workers need their own token");
  }
  return auth;
}

grpc::Status Authorize(const ServerOptions& options, const grpc::ServerContext* ctx, Role needed,
                       Principal* who) {
  if (who) *who = {};
  if (!options.auth) return grpc::Status::OK;
  return options.auth->Check(ctx, needed, who);
}

std::string WorkerCredential(const ServerOptions& options, const grpc::ServerContext* ctx,
                             const Principal& who) {
  std::string cert = auth::PeerCertificateIdentity(ctx);
  if (who.name.empty() && cert.empty()) return "";
  return absl::StrCat("token:", who.name, "\ncert:", cert);
}

std::string WorkerIdPrefix(const std::string& credential) {
  if (credential.empty()) return "";
  return absl::StrCat("w-", auth::Fingerprint(credential), "-");
}

absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> MakeServerCredentials(
    const ServerOptions& options) {
  return auth::MakeServerCredentials({options.tls_cert, options.tls_key, options.tls_ca});
}

}  // namespace argus::server
