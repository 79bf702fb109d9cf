// server/dashboard/dashboard.h: the web dashboard of argus-server.
//
// A read-only JSON API over the job store (jobs, one job with its tasks,
// candidates and trajectory, workers) and the HTML pages that show it
// (job list, job page with a reward plot, worker fleet), served through
// argus::http::Server. Writes (cancel) need an admin token, sent as
// `Authorization: Bearer TOKEN`; with no token configured the dashboard is
// read-only and refuses every write with 403.
//
// Layering: this library links argus_server (the JobStore); the argus-server
// binary links this library and starts it when --http is given. The
// argus_server library itself does not depend on it.
//
// Thread safety: Handle() is thread-safe (the JobStore is).
#ifndef ARGUS_SERVER_DASHBOARD_DASHBOARD_H_
#define ARGUS_SERVER_DASHBOARD_DASHBOARD_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "server/dashboard/http_server.h"
#include "store/store.h"

namespace argus::dashboard {

struct DashboardOptions {
  std::string admin_token;          // empty: read-only
  int64_t alive_ms = 6'000;         // a worker is alive if it heartbeat within this
  int max_jobs = 500;               // /api/jobs returns at most this many
  int default_max_candidates = 16;  // the planner's, for tune jobs that name none
};

class Dashboard {
 public:
  Dashboard(store::JobStore* store, DashboardOptions options);
  http::Response Handle(const http::Request& req);

 private:
  http::Response Api(const http::Request& req);
  http::Response Page(const http::Request& req);
  http::Response JobsJson(const http::Request& req);
  http::Response JobJson(const std::string& id);
  http::Response WorkersJson();
  http::Response Cancel(const http::Request& req, const std::string& id);
  bool Authorized(const http::Request& req) const;

  store::JobStore* store_;
  DashboardOptions options_;
};

// The 404 page (HTML) naming what was asked for.
http::Response NotFoundPage(const std::string& what);

// Reads the admin token from a file (trimmed); an empty file is an error.
absl::StatusOr<std::string> ReadTokenFile(const std::string& path);

// Starts the dashboard on `listen` (host:port) over `store`; returns the
// running HTTP server and writes the bound address to *bound.
absl::StatusOr<std::unique_ptr<http::Server>> StartDashboard(store::JobStore* store,
                                                             DashboardOptions options,
                                                             const std::string& listen,
                                                             std::string* bound);

}  // namespace argus::dashboard

#endif  // ARGUS_SERVER_DASHBOARD_DASHBOARD_H_
