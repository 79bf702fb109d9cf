#include "gpu_worker/dial.h"

#include <grpcpp/support/client_interceptor.h>

#include <cstdlib>
#include <cstring>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "base/secret_file.h"

extern char** environ;

namespace argus::worker {
namespace {

// Adds the bearer token to every call's initial metadata (plaintext channels).
class BearerInterceptor : public grpc::experimental::Interceptor {
 public:
  explicit BearerInterceptor(const std::string* header) : header_(header) {}
  void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override {
    if (methods->QueryInterceptionHookPoint(
            grpc::experimental::InterceptionHookPoints::PRE_SEND_INITIAL_METADATA)) {
      methods->GetSendInitialMetadata()->insert({"authorization", *header_});
    }
    methods->Proceed();
  }

 private:
  const std::string* header_;
};

class BearerInterceptorFactory : public grpc::experimental::ClientInterceptorFactoryInterface {
 public:
  explicit BearerInterceptorFactory(std::string token) : header_("Bearer " + std::move(token)) {}
  grpc::experimental::Interceptor* CreateClientInterceptor(
      grpc::experimental::ClientRpcInfo*) override {
    return new BearerInterceptor(&header_);
  }

 private:
  std::string header_;  // outlives the channel's interceptors (owned by the channel)
};

}  // namespace

void AddVerifierDialFlags(FlagSet* flags, DialFiles* files) {
  flags->String("verifier_token_file", &files->token_file,
                "file holding the token to send to --verifier (one of argus-verifier's "
                "--token_file)");
  flags->String("verifier_tls_ca", &files->tls_ca,
                "PEM CA of --verifier's certificate (turns on TLS to it)");
  flags->String("verifier_tls_cert", &files->tls_cert,
                "PEM client certificate for a --verifier that needs mTLS");
  flags->String("verifier_tls_key", &files->tls_key, "PEM private key of --verifier_tls_cert");
}

absl::StatusOr<DialOptions> LoadDialOptions(const DialFiles& files) {
  DialOptions o;
  if (!files.token_file.empty()) {
    auto token = ReadSecretFile(files.token_file);
    if (!token.ok()) return token.status();
    // A line of a server's token file ("NAME TOKEN") works too: the token is its last word.
    o.token = token->substr(
        token->find_last_of(" \t") == std::string::npos ? 0 : token->find_last_of(" \t") + 1);
  }
  if (files.tls_cert.empty() != files.tls_key.empty()) {
    return absl::InvalidArgumentError("--tls_cert and --tls_key go together (mTLS needs both)");
  }
  o.tls = !files.tls_ca.empty() || !files.tls_cert.empty();
  if (!files.tls_ca.empty()) {
    auto ca = ReadSmallFile(files.tls_ca);
    if (!ca.ok()) return ca.status();
    o.ca_pem = *ca;
  }
  if (!files.tls_cert.empty()) {
    auto cert = ReadSmallFile(files.tls_cert);
    if (!cert.ok()) return cert.status();
    auto key = ReadSmallFile(files.tls_key);
    if (!key.ok()) return key.status();
    o.cert_pem = *cert;
    o.key_pem = *key;
  }
  return o;
}

std::shared_ptr<grpc::Channel> Dial(const std::string& address, const DialOptions& options,
                                    grpc::ChannelArguments args) {
  if (options.tls) {
    grpc::SslCredentialsOptions ssl;
    ssl.pem_root_certs = options.ca_pem;
    ssl.pem_cert_chain = options.cert_pem;
    ssl.pem_private_key = options.key_pem;
    std::shared_ptr<grpc::ChannelCredentials> creds = grpc::SslCredentials(ssl);
    if (!options.token.empty()) {
      creds = grpc::CompositeChannelCredentials(creds, grpc::AccessTokenCredentials(options.token));
    }
    if (!options.tls_server_name.empty()) {
      args.SetSslTargetNameOverride(options.tls_server_name);
    }
    return grpc::CreateCustomChannel(address, creds, args);
  }
  if (options.token.empty()) {
    return grpc::CreateCustomChannel(address, grpc::InsecureChannelCredentials(), args);
  }
  std::vector<std::unique_ptr<grpc::experimental::ClientInterceptorFactoryInterface>> interceptors;
  interceptors.push_back(std::make_unique<BearerInterceptorFactory>(options.token));
  return grpc::experimental::CreateCustomChannelWithInterceptors(
      address, grpc::InsecureChannelCredentials(), args, std::move(interceptors));
}

void SetFastReconnect(grpc::ChannelArguments* args) {
  args->SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
  args->SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 500);
  args->SetInt(GRPC_ARG_DNS_MIN_TIME_BETWEEN_RESOLUTIONS_MS, 250);
}

bool IsCredentialVariable(const std::string& name) {
  std::string upper = absl::AsciiStrToUpper(name);
  for (const char* word : {"TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "API_KEY",
                           "PRIVATE_KEY", "ACCESS_KEY", "AUTH"}) {
    if (absl::StrContains(upper, word)) return true;
  }
  return absl::StartsWith(upper, "ARGUS_TLS") || upper == "SSH_AUTH_SOCK" ||
         absl::EndsWith(upper, "_KEY");
}

std::vector<std::string> ScrubCredentialEnvironment() {
  std::vector<std::string> names;
  for (char** e = environ; e && *e; ++e) {
    std::string entry(*e);
    std::string name = entry.substr(0, entry.find('='));
    if (IsCredentialVariable(name)) names.push_back(name);
  }
  // Blank the values in place first: the original strings also show in
  // /proc/PID/environ, which unsetenv alone leaves intact.
  for (char** e = environ; e && *e; ++e) {
    char* eq = std::strchr(*e, '=');
    if (eq && IsCredentialVariable(std::string(*e, eq - *e))) {
      std::memset(eq + 1, 0, std::strlen(eq + 1));
    }
  }
  for (const auto& n : names) unsetenv(n.c_str());
  return names;
}

}  // namespace argus::worker
