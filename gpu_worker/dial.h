// gpu_worker/dial.h: how workers, the CLI and tests dial argus-server.
//
// A DialOptions says which bearer token to send and whether to use TLS
// (optionally with a client certificate, for mTLS). Dial() makes a channel
// that sends "authorization: Bearer TOKEN" on every call: through gRPC call
// credentials (AccessTokenCredentials) over TLS, through a client
// interceptor over plaintext (gRPC refuses call credentials there).
//
// ScrubCredentialEnvironment removes from this process's environment every
// variable that may carry a credential, so that no child (argus-runner and
// the kernels it runs) inherits one; workers call it once at startup.
//
// Thread safety: LoadDialOptions and Dial are thread-safe; the channel they
// return may be shared. ScrubCredentialEnvironment must run before threads
// that read the environment start (it calls unsetenv).
#ifndef ARGUS_GPU_WORKER_DIAL_H_
#define ARGUS_GPU_WORKER_DIAL_H_

#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "base/flags.h"

namespace argus::worker {

struct DialOptions {
  std::string token;            // sent as a bearer token ("" = none)
  bool tls = false;             // TLS to the server
  std::string ca_pem;           // roots that sign the server's certificate ("" = system roots)
  std::string cert_pem;         // client certificate for mTLS ("" = none)
  std::string key_pem;          // its private key
  std::string tls_server_name;  // name to check in the server certificate ("" = the host)
};

// Files to DialOptions. Any of them may be empty. The token file's first
// line is the token, or "NAME TOKEN" as in a server's token file. TLS is on when any of the
// three TLS files is given; a certificate needs its key and vice versa.
struct DialFiles {
  std::string token_file;
  std::string tls_ca, tls_cert, tls_key;
};
absl::StatusOr<DialOptions> LoadDialOptions(const DialFiles& files);

// The flags that say how argus-server and argus-worker dial argus-verifier:
// --verifier_token_file, --verifier_tls_ca, --verifier_tls_cert, --verifier_tls_key.
void AddVerifierDialFlags(FlagSet* flags, DialFiles* files);

std::shared_ptr<grpc::Channel> Dial(const std::string& address, const DialOptions& options,
                                    grpc::ChannelArguments args = {});

// Sets `args` so that a channel whose server went away reconnects within
// about half a second of it coming back: reconnect backoff 100 ms growing to
// 500 ms (gRPC's default grows to 120 s), and the address re-resolved at most
// every 250 ms (the default, 30 s, alone kept workers away for 5-10 s after a
// server restart even on an IP address).
void SetFastReconnect(grpc::ChannelArguments* args);

// Unsets variables named like credentials (ARGUS_*TOKEN*, *TOKEN*, *SECRET*,
// *PASSWORD*, *_KEY, CREDENTIALS_DIRECTORY, ...). Returns the names removed.
std::vector<std::string> ScrubCredentialEnvironment();
// Whether `name` is one ScrubCredentialEnvironment removes.
bool IsCredentialVariable(const std::string& name);

}  // namespace argus::worker

#endif  // ARGUS_GPU_WORKER_DIAL_H_
