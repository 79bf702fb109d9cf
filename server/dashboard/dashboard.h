// server/dashboard/dashboard.h: the web dashboard of argus-server.
//
// A read-only JSON API over the job store (jobs, one job with its tasks,
// candidates and trajectory, workers) and the HTML pages that show it
// (job list, job page with a reward plot, worker fleet), served through
// argus::http::Server.
//
// Access (proto/auth.h tokens): reads (pages and /api) need a read or admin
// token, sent as `Authorization: Bearer TOKEN` or held in the HttpOnly cookie
// that POST /login sets from a form, unless `open_reads` (argus-server
// --open_dashboard) lets anyone who can reach the port read. Without a token
// a page answers 401 with the sign-in form, /api 401 JSON. Writes (cancel)
// need an admin token in the Authorization header (never the cookie, so
// another site cannot make the browser cancel); with no admin token
// configured every write is refused with 403. The static assets are open.
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
#include "proto/auth.h"
#include "server/dashboard/http_server.h"
#include "store/store.h"

namespace argus::dashboard {

struct DashboardOptions {
  std::shared_ptr<const auth::Authenticator> auth;  // null: no token opens anything
  bool open_reads = false;                          // reads need no token
  int64_t alive_ms = 6'000;                         // a worker is alive if it heartbeat within this
  int max_jobs = 500;                               // /api/jobs returns at most this many
  int default_max_candidates = 16;                  // the planner's, for tune jobs that name none
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
  // The request's token: the Authorization header, else the login cookie.
  std::string Token(const http::Request& req, bool header_only) const;
  bool Allowed(const http::Request& req, auth::Role role, bool header_only) const;
  http::Response Login(const http::Request& req);

  store::JobStore* store_;
  DashboardOptions options_;
};

// The 404 page (HTML) naming what was asked for.
http::Response NotFoundPage(const std::string& what);

// Starts the dashboard on `listen` (host:port) over `store`; returns the
// running HTTP server and writes the bound address to *bound.
absl::StatusOr<std::unique_ptr<http::Server>> StartDashboard(store::JobStore* store,
                                                             DashboardOptions options,
                                                             const std::string& listen,
                                                             std::string* bound);

}  // namespace argus::dashboard

#endif  // ARGUS_SERVER_DASHBOARD_DASHBOARD_H_
