// argus-verifier: the verifier as a gRPC service (VerifierService).
#include <cstdio>
#include <iostream>

#include "base/daemon_flags.h"
#include "base/flags.h"
#include "base/signals.h"
#include "verifier/service.h"

int main(int argc, char** argv) {
  argus::verifier::ServiceOptions o;
  int64_t timeout_ms = o.default_solver_timeout_ms, max_timeout_ms = o.max_solver_timeout_ms;
  argus::FlagSet flags("argus-verifier",
                       "[flags]\n\nexample: argus-verifier --listen 0.0.0.0:7071");
  flags.String("listen", &o.listen, "host:port to serve gRPC on (port 0 picks a free one)");
  flags.Int("solver_timeout_ms", &timeout_ms, "default Z3 time per obligation");
  flags.Int("max_solver_timeout_ms", &max_timeout_ms, "the most a request may ask for");
  flags.Int("default_deadline_ms", &o.default_deadline_ms,
            "budget of a request that sets no deadline");
  flags.Int("max_request_ms", &o.max_request_ms,
            "the most time one request may take, whatever deadline its client sets");
  std::string token_file;
  flags.String("token_file", &token_file,
               "tokens that may call the verifier (one per line, or NAME TOKEN); unset: open");
  flags.String("tls_cert", &o.tls.cert, "PEM certificate: serve TLS");
  flags.String("tls_key", &o.tls.key, "PEM private key of --tls_cert");
  flags.String("tls_ca", &o.tls.ca, "PEM CA: require client certificates it signed (mTLS)");
  if (auto rc = argus::ParseDaemonFlags("argus-verifier", flags, argc, argv)) return *rc;
  if (!token_file.empty()) {
    auto auth = argus::auth::Authenticator::FromFiles({.client = token_file});
    if (!auth.ok()) {
      std::cerr << "argus-verifier: " << auth.status().message() << "\n";
      return 1;
    }
    o.auth = *auth;
  }
  if (timeout_ms < 1 || max_timeout_ms < timeout_ms || o.default_deadline_ms < 1 ||
      o.max_request_ms < 1) {
    std::cerr << "argus-verifier: bad arguments (see --help)\n";
    return 2;
  }
  o.default_solver_timeout_ms = static_cast<int>(timeout_ms);
  o.max_solver_timeout_ms = static_cast<int>(max_timeout_ms);
  argus::verifier::VerifierServer server(o);
  argus::OnTerminationSignal([&server] { server.Shutdown(); });
  auto addr = server.Start();
  if (!addr.ok()) {
    std::cerr << "argus-verifier: " << addr.status().message() << "\n";
    return 1;
  }
  std::printf("argus-verifier listening on %s\n", addr->c_str());
  std::fflush(stdout);
  server.Wait();
  return 0;
}
