// argus-server: the job service, worker registry and job store.
#include <cstdio>
#include <iostream>

#include "base/daemon_flags.h"
#include "base/flags.h"
#include "base/signals.h"
#include "gpu_worker/dial.h"
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
               "admin tokens: every job, dashboard writes; unset: no admin");
  flags.String("read_token_file", &options.read_token_file,
               "read tokens: the dashboard's pages and /api (admin tokens open them too)");
  bool open_dashboard = false;
  flags.Bool("open_dashboard", &open_dashboard,
             "serve the dashboard's reads (every job, source and worker) to anyone who can "
             "reach --http, without a token");
  flags.String("tls_cert", &options.tls_cert, "PEM certificate: serve TLS");
  flags.String("tls_key", &options.tls_key, "PEM private key of --tls_cert");
  flags.String("tls_ca", &options.tls_ca, "PEM CA: require client certificates it signed (mTLS)");
  flags.String("verifier", &options.planner.verifier_address,
               "argus-verifier address (host:port) that gates tune jobs' candidates; tune jobs "
               "wait while it is down (empty: the verifier library in-process)");
  argus::worker::DialFiles verifier_dial;
  argus::worker::AddVerifierDialFlags(&flags, &verifier_dial);
  std::string llm_endpoints;
  flags.String("llm_endpoints", &llm_endpoints,
               "JSON file of the LLM endpoints tune jobs with policy llm may name, with their "
               "URLs and API keys (docs/planner.md); unset: policy llm is refused");
  int64_t max_source = options.max_source_bytes, max_candidates = options.max_candidates;
  flags.Int("max_source_bytes", &max_source, "largest JobSpec.source accepted");
  flags.Int("max_candidates", &max_candidates, "largest JobSpec.max_candidates accepted");
  int64_t max_result = options.max_result_bytes, page_size = options.list_page_size;
  int64_t max_watchers = options.max_watchers;
  flags.Int("max_result_bytes", &max_result, "largest result a worker may report for a task");
  flags.Int("max_deadline_ms", &options.max_deadline_ms,
            "longest job deadline; a longer JobSpec.deadline_ms is clamped to it (and the "
            "submitter told so)");
  flags.Int("list_page_size", &page_size, "most jobs one ListJobs page holds");
  flags.Int("max_watchers", &max_watchers,
            "concurrent WatchJob streams (each holds a thread); more are refused with "
            "RESOURCE_EXHAUSTED and the CLI polls instead");
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
  options.max_result_bytes = static_cast<int>(std::min<int64_t>(max_result, INT32_MAX));
  options.list_page_size = static_cast<int>(std::min<int64_t>(page_size, INT32_MAX));
  options.max_watchers = static_cast<int>(std::min<int64_t>(max_watchers, INT32_MAX));
  options.planner.max_candidates_limit = options.max_candidates;  // one limit for both
  auto dial = argus::worker::LoadDialOptions(verifier_dial);
  if (!dial.ok()) {
    std::cerr << "argus-server: --verifier_*: " << dial.status().message() << "\n";
    return 2;
  }
  options.planner.verifier_dial = *dial;
  if (!llm_endpoints.empty()) {
    auto eps = argus::planner::LoadLlmEndpoints(llm_endpoints);
    if (!eps.ok()) {
      std::cerr << "argus-server: --llm_endpoints " << eps.status().message() << "\n";
      return 2;
    }
    options.planner.llm_endpoints = *eps;
  }
  if (!http_listen.empty() && !open_dashboard && options.read_token_file.empty() &&
      options.admin_token_file.empty()) {
    std::cerr << "argus-server: --http serves every job, source and worker: give "
                 "--read_token_file FILE (or --admin_token_file) so that reading needs a token, "
                 "or pass --open_dashboard to serve it to anyone who can reach "
              << http_listen << "\n";
    return 2;
  }
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
    dash.auth = server.auth();
    dash.open_reads = open_dashboard;
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
