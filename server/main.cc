// argus-server: the job service, worker registry and job store.
#include <cstdio>
#include <iostream>

#include "base/daemon_flags.h"
#include "base/flags.h"
#include "base/signals.h"
#include "server/dashboard/dashboard.h"
#include "server/server.h"

int main(int argc, char** argv) {
  argus::server::ServerOptions options;
  int64_t lease_ms = options.lease_ms, heartbeat_ms = options.heartbeat_ms;
  int64_t max_jobs = options.max_concurrent_jobs_per_client;
  argus::FlagSet flags(
      "argus-server",
      "[flags]\n\nexample: argus-server --listen 0.0.0.0:7070 --db /var/lib/argus/argus.db");
  flags.String("listen", &options.listen, "host:port to serve gRPC on (port 0 picks a free one)");
  flags.String("db", &options.db_path, "SQLite job store file");
  flags.Bool("new_store", &options.new_store,
             "make a new, empty store when --db is an empty (0-byte) file; without it such a "
             "file is refused as a damaged store");
  flags.Int("lease_ms", &lease_ms, "a lease not renewed for this long expires");
  flags.Int("heartbeat_ms", &heartbeat_ms, "how often workers heartbeat");
  flags.Int("max_jobs_per_client", &max_jobs, "unfinished jobs one client may have");
  std::string http_listen;
  flags.String("http", &http_listen,
               "host:port to serve the web dashboard and JSON API on (port 0 picks one; "
               "empty: none)");
  flags.String("token_file", &options.token_file, "client tokens (one per line, or NAME TOKEN)");
  flags.String("worker_token_file", &options.worker_token_file, "worker tokens, distinct");
  flags.String("admin_token_file", &options.admin_token_file,
               "admin tokens: dashboard writes and admin calls need one; unset: read-only");
  flags.String("tls_cert", &options.tls_cert, "PEM certificate: serve TLS");
  flags.String("tls_key", &options.tls_key, "PEM private key of --tls_cert");
  flags.String("tls_ca", &options.tls_ca, "PEM CA: require client certificates it signed (mTLS)");
  flags.String("verifier", &options.planner.verifier_address,
               "argus-verifier address (host:port) that gates tune jobs' candidates; tune jobs "
               "wait while it is down (empty: the verifier library in-process)");
  int64_t max_source = options.max_source_bytes, max_candidates = options.max_candidates;
  flags.Int("max_source_bytes", &max_source, "largest JobSpec.source accepted");
  flags.Int("max_candidates", &max_candidates, "largest JobSpec.max_candidates accepted");
  if (auto rc = argus::ParseDaemonFlags("argus-server", flags, argc, argv)) return *rc;
  if (lease_ms < 100 || heartbeat_ms < 10 || heartbeat_ms * 2 > lease_ms) {
    std::cerr << "argus-server: need --lease_ms >= 100 and --heartbeat_ms <= lease_ms/2\n";
    return 2;
  }
  options.lease_ms = lease_ms;
  options.heartbeat_ms = heartbeat_ms;
  options.max_concurrent_jobs_per_client = static_cast<int>(max_jobs);
  options.max_source_bytes = static_cast<int>(max_source);
  options.max_candidates = static_cast<int>(max_candidates);
  options.planner.max_candidates_limit = options.max_candidates;  // one limit for both
  argus::server::Server server(options);
  argus::OnTerminationSignal([&server] { server.Shutdown(); });
  auto addr = server.Start();
  if (!addr.ok()) {
    std::cerr << "argus-server: " << addr.status().message() << "\n";
    return 1;
  }
  std::printf("argus-server listening on %s\n", addr->c_str());
  std::unique_ptr<argus::http::Server> http;
  if (!http_listen.empty()) {
    argus::dashboard::DashboardOptions dash;
    dash.alive_ms = 3 * heartbeat_ms;
    dash.default_max_candidates = options.planner.default_max_candidates;
    if (!options.admin_token_file.empty()) {
      auto token = argus::dashboard::ReadTokenFile(options.admin_token_file);
      if (!token.ok()) {
        std::cerr << "argus-server: " << token.status().message() << "\n";
        return 2;
      }
      dash.admin_token = *token;
    }
    std::string bound;
    auto started = argus::dashboard::StartDashboard(server.store(), dash, http_listen, &bound);
    if (!started.ok()) {
      std::cerr << "argus-server: " << started.status().message() << "\n";
      return 1;
    }
    http = std::move(*started);
    std::printf("argus-server http on %s\n", bound.c_str());
  }
  std::fflush(stdout);
  server.Wait();
  if (http) http->Shutdown();
  server.Shutdown();
  return 0;
}
