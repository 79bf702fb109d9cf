// server/server.h: argus-server, the gRPC front of the job store.
//
// Serves argus.v1.JobService and argus.v1.WorkerService over one port, plus
// grpc.health.v1 and server reflection. A reaper thread expires leases and
// fails overdue jobs. Tune jobs are driven by the planner (planner/planner.h),
// which the server starts, resumes after a restart and stops at Shutdown.
//
// Thread safety: Start/Shutdown from one thread; the services are
// thread-safe (they share the thread-safe JobStore).
#ifndef ARGUS_SERVER_SERVER_H_
#define ARGUS_SERVER_SERVER_H_

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "planner/planner.h"
#include "store/store.h"

namespace argus::auth {
class Authenticator;  // proto/auth.h
}

namespace argus::server {

struct ServerOptions {
  std::string listen = "127.0.0.1:0";
  std::string db_path = "argus.db";
  bool new_store = false;  // accept a zero-byte db_path as a new store (StoreOptions)
  int64_t lease_ms = 30'000;
  int64_t heartbeat_ms = 2'000;
  int max_attempts = 3;
  int64_t default_deadline_ms = 10 * 60'000;
  int max_message_bytes = 8 << 20;
  int max_concurrent_jobs_per_client = 64;
  planner::PlannerOptions planner;
  // Security and input limits (server/auth.h). Empty files: open, plaintext.
  std::string token_file, worker_token_file, admin_token_file;
  std::string read_token_file;            // dashboard reads (server/dashboard)
  std::string tls_cert, tls_key, tls_ca;  // tls_ca: require client certificates (mTLS)
  int max_source_bytes = 256 << 10;       // JobSpec.source
  int max_candidates = 1000;              // JobSpec.max_candidates
  // Request and response bounds (server/limits.h).
  int max_result_bytes = 256 << 10;                // ReportResultRequest.result_json
  int64_t max_deadline_ms = 7 * 24 * 3'600'000LL;  // longer JobSpec.deadline_ms are clamped
  int list_page_size = 100;                        // the most jobs one ListJobs page holds
  int max_watchers = 64;  // concurrent WatchJob streams; more: RESOURCE_EXHAUSTED
  std::shared_ptr<const auth::Authenticator> auth;  // Start() builds it from the files
  // A read-only view of a store that no server runs now (`argus result` after
  // an embedded `argus tune`): jobs, workers and artifacts are served, but no
  // job is submitted, cancelled, resumed or planned, no lease expires and no
  // worker is served; another process may be writing the store meanwhile.
  bool read_only = false;
};

class JobServiceImpl;
class WorkerServiceImpl;

class Server {
 public:
  explicit Server(ServerOptions options);
  ~Server();

  // Opens the store, binds the port and starts serving. Returns the bound
  // address (host:port, with the real port when 0 was asked).
  absl::StatusOr<std::string> Start();
  void Shutdown();
  void Wait();
  store::JobStore* store() { return store_.get(); }
  // The token checks Start() loaded (never null after a successful Start).
  std::shared_ptr<const auth::Authenticator> auth() const { return options_.auth; }

 private:
  void ReapLoop();

  ServerOptions options_;
  std::unique_ptr<store::JobStore> store_;
  std::unique_ptr<planner::Planner> planner_;
  std::unique_ptr<JobServiceImpl> jobs_;
  std::unique_ptr<WorkerServiceImpl> workers_;
  std::unique_ptr<grpc::Server> server_;
  std::atomic<bool> stopping_{false};
  // Serializes Shutdown(): a second caller (main after Wait() returns, or the
  // destructor) waits until the first (the signal thread) has joined every
  // thread, instead of returning early and destroying a joinable thread.
  std::mutex shutdown_mu_;
  std::thread reaper_;
};

}  // namespace argus::server

#endif  // ARGUS_SERVER_SERVER_H_
