#include "server/dashboard/dashboard.h"

#include <google/protobuf/util/json_util.h>

#include <chrono>
#include <fstream>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "nlohmann/json.hpp"
#include "server/dashboard/assets.h"
#include "server/services.h"

namespace argus::dashboard {
namespace {

using http::Request;
using http::Response;
using nlohmann::json;

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// "JOB_STATE_RUNNING" -> "running".
std::string Short(const std::string& enum_name, const std::string& prefix) {
  return absl::AsciiStrToLower(enum_name.substr(prefix.size()));
}

json ProtoJson(const google::protobuf::Message& m) {
  std::string out;
  google::protobuf::util::JsonPrintOptions opt;
  opt.preserve_proto_field_names = true;
  opt.always_print_primitive_fields = true;
  (void)google::protobuf::util::MessageToJsonString(m, &out, opt);
  return json::parse(out, nullptr, false);
}

// A JSON text stored by another part, parsed; malformed or empty becomes {}.
json Parsed(const std::string& text) {
  if (text.empty()) return json::object();
  json j = json::parse(text, nullptr, false);
  return j.is_discarded() ? json{{"unparsed", text}} : j;
}

json JobSummary(const v1::Job& job) {
  json j;
  j["id"] = job.id();
  j["kind"] = Short(v1::JobKind_Name(job.spec().kind()), "JOB_KIND_");
  j["state"] = Short(v1::JobState_Name(job.state()), "JOB_STATE_");
  j["error"] = job.error();
  j["client"] = job.spec().client();
  j["target"] = job.spec().target();
  j["family"] = job.spec().problem().family();
  j["created_unix_ms"] = job.created_unix_ms();
  j["updated_unix_ms"] = job.updated_unix_ms();
  return j;
}

Response JsonError(int status, const std::string& message) {
  return Response::Json(status, json{{"error", message}, {"status", status}}.dump());
}

Response MethodNotAllowed(const std::string& allow) {
  Response r = JsonError(405, "method not allowed; use " + allow);
  r.headers.push_back({"Allow", allow});
  return r;
}

std::string HtmlEscape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '&':
        out += "&amp;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

// Valid job ids are short and plain; anything else cannot exist.
bool PlausibleId(const std::string& id) {
  if (id.empty() || id.size() > 128) return false;
  for (char c : id) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_') return false;
  }
  return true;
}

Response AssetResponse(const std::string& name, int status = 200) {
  const auto* a = FindAsset(name);
  if (!a) return Response::Text(500, "missing asset " + name);
  Response r;
  r.status = status;
  r.content_type = std::string(a->content_type);
  r.body = std::string(a->data);
  return r;
}

// The name=value prefix of the cookie that holds the token.
constexpr char kCookie[] = "argus_token=";

// The sign-in form, saying why it is shown.
Response LoginPage(const std::string& why, int status = 401) {
  Response r = AssetResponse("login.html", status);
  const std::string key = "{{WHY}}";
  if (auto pos = r.body.find(key); pos != std::string::npos)
    r.body.replace(pos, key.size(), HtmlEscape(why));
  return r;
}

// A page: the shell with the page's name filled in.
Response PageShell(const std::string& page, const std::string& title) {
  Response r = AssetResponse("page.html");
  std::string& b = r.body;
  for (auto [key, value] :
       {std::pair<std::string, std::string>{"{{PAGE}}", page}, {"{{TITLE}}", HtmlEscape(title)}}) {
    for (size_t pos; (pos = b.find(key)) != std::string::npos;) b.replace(pos, key.size(), value);
  }
  return r;
}

}  // namespace

Response NotFoundPage(const std::string& what) {
  Response r = AssetResponse("404.html", 404);
  const std::string key = "{{WHAT}}";
  if (auto pos = r.body.find(key); pos != std::string::npos)
    r.body.replace(pos, key.size(), HtmlEscape(what));
  return r;
}

Dashboard::Dashboard(store::JobStore* store, DashboardOptions options)
    : store_(store), options_(std::move(options)) {}

Response Dashboard::Handle(const Request& req) {
  bool api = absl::StartsWith(req.path, "/api/") || req.path == "/api";
  if (req.path == "/login") return Login(req);
  bool asset = absl::StartsWith(req.path, "/static/") || req.path == "/favicon.ico";
  bool write = req.method == "POST" && absl::EndsWith(req.path, "/cancel");  // own check
  if (!asset && !write && !Allowed(req, auth::Role::kRead, false)) {
    bool closed = !options_.auth || (!options_.auth->has(auth::Role::kRead) &&
                                     !options_.auth->has(auth::Role::kAdmin));
    const char* why = closed
                          ? "this dashboard is closed: start argus-server with --read_token_file "
                            "FILE (or --open_dashboard)"
                          : "this dashboard needs a read or admin token";
    Response r = api ? JsonError(401, why) : LoginPage(why);
    r.headers.push_back({"WWW-Authenticate", "Bearer"});
    return r;
  }
  return api ? Api(req) : Page(req);
}

std::string Dashboard::Token(const Request& req, bool header_only) const {
  std::string header = req.Header("authorization");
  if (!header.empty() || header_only) return header;
  for (absl::string_view c : absl::StrSplit(req.Header("cookie"), ';', absl::SkipWhitespace())) {
    c = absl::StripAsciiWhitespace(c);
    if (absl::ConsumePrefix(&c, kCookie)) return absl::StrCat("Bearer ", c);
  }
  return "";
}

bool Dashboard::Allowed(const Request& req, auth::Role role, bool header_only) const {
  if (role == auth::Role::kRead && options_.open_reads) return true;
  if (!options_.auth || !options_.auth->enabled()) return false;
  std::string token = Token(req, header_only);
  return options_.auth->CheckHeader(token.empty() ? nullptr : &token, role).ok();
}

// POST /login (a form with `token`): checks the token and keeps it in an
// HttpOnly, same-site cookie for the session.
Response Dashboard::Login(const Request& req) {
  if (req.method == "GET" || req.method == "HEAD") return LoginPage("Sign in with a token.");
  if (req.method != "POST") return MethodNotAllowed("GET, POST");
  std::string token;
  for (absl::string_view kv : absl::StrSplit(req.body, '&')) {
    if (absl::ConsumePrefix(&kv, "token=") && !http::PercentDecode(std::string(kv), true, &token))
      token.clear();
  }
  std::string bearer = "Bearer " + token;
  bool ok = !token.empty() && token.find_first_of(";\r\n ") == std::string::npos && options_.auth &&
            options_.auth->CheckHeader(&bearer, auth::Role::kRead).ok();
  if (!ok) return LoginPage("That token does not open this dashboard.", 401);
  Response r = Response::Text(303, "signed in\n");
  r.headers.push_back({"Location", "/"});
  r.headers.push_back(
      {"Set-Cookie", absl::StrCat(kCookie, token, "; Path=/; HttpOnly; SameSite=Strict")});
  return r;
}

Response Dashboard::Page(const Request& req) {
  if (req.method != "GET" && req.method != "HEAD") {
    Response r = Response::Text(405, "method not allowed; use GET\n");
    r.headers.push_back({"Allow", "GET, HEAD"});
    return r;
  }
  const std::string& p = req.path;
  if (p == "/" || p == "/jobs") return PageShell("jobs", "Jobs");
  if (p == "/workers") return PageShell("workers", "Workers");
  if (absl::StartsWith(p, "/jobs/")) {
    std::string id = p.substr(6);
    if (!PlausibleId(id)) return NotFoundPage("job " + id);
    auto job = store_->GetJob(id, false);
    if (!job.ok()) return NotFoundPage("job " + id);
    return PageShell("job", "Job " + id);
  }
  if (p == "/static/app.js") return AssetResponse("app.js");
  if (p == "/static/style.css") return AssetResponse("style.css");
  if (p == "/favicon.ico") return Response::Text(204, "");
  return NotFoundPage(p);
}

Response Dashboard::Api(const Request& req) {
  std::vector<std::string> parts = absl::StrSplit(req.path, '/', absl::SkipEmpty());
  // parts[0] == "api"
  bool get = req.method == "GET" || req.method == "HEAD";
  if (parts.size() == 2 && parts[1] == "info") {
    if (!get) return MethodNotAllowed("GET, HEAD");
    bool admin = options_.auth && options_.auth->has(auth::Role::kAdmin);
    return Response::Json(
        200,
        json{{"admin", admin}, {"version", store_->version()}, {"now_unix_ms", NowMs()}}.dump());
  }
  if (parts.size() == 2 && parts[1] == "jobs") {
    if (!get) return MethodNotAllowed("GET, HEAD");
    return JobsJson(req);
  }
  if (parts.size() == 3 && parts[1] == "jobs") {
    if (!get) return MethodNotAllowed("GET, HEAD");
    return JobJson(parts[2]);
  }
  if (parts.size() == 4 && parts[1] == "jobs" && parts[3] == "cancel") {
    if (req.method != "POST") return MethodNotAllowed("POST");
    return Cancel(req, parts[2]);
  }
  if (parts.size() == 2 && parts[1] == "workers") {
    if (!get) return MethodNotAllowed("GET, HEAD");
    return WorkersJson();
  }
  return JsonError(404, "no such API endpoint: " + req.path);
}

Response Dashboard::JobsJson(const Request& req) {
  v1::JobState state = v1::JOB_STATE_UNSPECIFIED;
  if (std::string s = req.Query("state"); !s.empty() && s != "all") {
    if (!v1::JobState_Parse("JOB_STATE_" + absl::AsciiStrToUpper(s), &state) ||
        state == v1::JOB_STATE_UNSPECIFIED) {
      return JsonError(400,
                       "unknown state '" + s + "' (queued, running, succeeded, failed, cancelled)");
    }
  }
  v1::JobKind kind = v1::JOB_KIND_UNSPECIFIED;
  if (std::string k = req.Query("kind"); !k.empty() && k != "all") {
    if (!v1::JobKind_Parse("JOB_KIND_" + absl::AsciiStrToUpper(k), &kind) ||
        kind == v1::JOB_KIND_UNSPECIFIED) {
      return JsonError(400, "unknown kind '" + k + "' (probe, tune)");
    }
  }
  int limit = options_.max_jobs;
  if (std::string l = req.Query("limit"); !l.empty()) {
    int v = 0;
    if (!absl::SimpleAtoi(l, &v) || v <= 0)
      return JsonError(400, "limit must be a positive number");
    limit = std::min(v, options_.max_jobs);
  }
  // Filters run in the store, on a read connection: a listing never holds
  // up the job and worker services.
  store::JobQuery query;
  query.state = state;
  query.kind = kind;
  query.limit = limit;
  query.page_token = req.Query("page_token");
  auto page = store_->ListJobs(query);
  if (!page.ok()) {
    return JsonError(page.status().code() == absl::StatusCode::kInvalidArgument ? 400 : 500,
                     std::string(page.status().message()));
  }
  json list = json::array();
  for (const auto& job : page->jobs) list.push_back(JobSummary(job));
  return Response::Json(200, json{{"jobs", list},
                                  {"next_page_token", page->next_page_token},
                                  {"version", store_->version()}}
                                 .dump());
}

Response Dashboard::JobJson(const std::string& id) {
  if (!PlausibleId(id)) return JsonError(404, "no job " + id);
  auto job = store_->GetJob(id, true);
  if (!job.ok()) {
    if (job.status().code() == absl::StatusCode::kNotFound) return JsonError(404, "no job " + id);
    return JsonError(500, std::string(job.status().message()));
  }
  json j = JobSummary(*job);
  j["spec"] = ProtoJson(job->spec());
  j["result"] = Parsed(job->result_json());
  json tasks = json::array();
  int done = 0, failed = 0;
  for (const auto& t : job->tasks()) {
    done += t.state() == "done";
    failed += t.state() == "failed";
    tasks.push_back({{"id", t.id()},
                     {"kind", t.kind()},
                     {"state", t.state()},
                     {"worker_id", t.worker_id()},
                     {"attempts", t.attempts()},
                     {"result", Parsed(t.result_json())}});
  }
  j["tasks"] = tasks;
  j["tasks_total"] = job->tasks_size();
  j["tasks_done"] = done;
  j["tasks_failed"] = failed;
  if (job->spec().kind() == v1::JOB_KIND_TUNE) {
    // The same progress the CLI shows (JobEvent.tune, from the planner's summary).
    v1::JobEvent ev = server::MakeJobEvent(*job, "", options_.default_max_candidates);
    const v1::TuneProgress& t = ev.tune();
    j["progress"] = {{"tried", t.tried()},
                     {"verified", t.verified()},
                     {"rejected", t.rejected()},
                     {"in_flight", t.in_flight()},
                     {"max_candidates", t.max_candidates()},
                     {"best_ratio", t.best_ratio()},
                     {"elapsed_ms", ev.elapsed_ms()},
                     {"remaining_ms", ev.remaining_ms()}};
  }
  auto cands = store_->ListCandidates(id);
  auto steps = store_->ListTrajectory(id);
  if (!cands.ok() || !steps.ok()) {
    return JsonError(500, std::string((cands.ok() ? steps.status() : cands.status()).message()));
  }
  json cj = json::array();
  for (const auto& c : *cands) {
    cj.push_back({{"id", c.id},
                  {"parent_id", c.parent_id},
                  {"source", c.source},
                  {"detail", Parsed(c.detail_json)},
                  {"created_unix_ms", c.created_ms}});
  }
  json sj = json::array();
  for (const auto& s : *steps) {
    sj.push_back({{"step", s.step},
                  {"candidate_id", s.candidate_id},
                  {"action", s.action},
                  {"detail", Parsed(s.detail_json)},
                  {"reward", s.reward},
                  {"created_unix_ms", s.created_ms}});
  }
  j["candidates"] = cj;
  j["trajectory_steps"] = sj;
  j["version"] = store_->version();
  return Response::Json(200, j.dump());
}

Response Dashboard::WorkersJson() {
  auto workers = store_->ListWorkers(NowMs(), options_.alive_ms);
  if (!workers.ok()) return JsonError(500, std::string(workers.status().message()));
  json list = json::array();
  for (const auto& w : *workers) {
    list.push_back({{"id", w.id()},
                    {"alive", w.alive()},
                    {"leased_tasks", w.leased_tasks()},
                    {"last_heartbeat_unix_ms", w.last_heartbeat_unix_ms()},
                    {"inventory", ProtoJson(w.inventory())}});
  }
  return Response::Json(200, json{{"workers", list}, {"now_unix_ms", NowMs()}}.dump());
}

Response Dashboard::Cancel(const Request& req, const std::string& id) {
  if (!options_.auth || !options_.auth->has(auth::Role::kAdmin)) {
    return JsonError(403,
                     "the dashboard is read-only (start argus-server with --admin_token_file)");
  }
  if (!Allowed(req, auth::Role::kAdmin, /*header_only=*/true)) {
    Response r = JsonError(401, "cancel needs Authorization: Bearer <admin token>");
    r.headers.push_back({"WWW-Authenticate", "Bearer"});
    return r;
  }
  if (!PlausibleId(id)) return JsonError(404, "no job " + id);
  auto job = store_->CancelJob(id, NowMs());
  if (!job.ok()) {
    int status = job.status().code() == absl::StatusCode::kNotFound             ? 404
                 : job.status().code() == absl::StatusCode::kFailedPrecondition ? 409
                                                                                : 500;
    return JsonError(status, std::string(job.status().message()));
  }
  return Response::Json(200, JobSummary(*job).dump());
}

absl::StatusOr<std::unique_ptr<http::Server>> StartDashboard(store::JobStore* store,
                                                             DashboardOptions options,
                                                             const std::string& listen,
                                                             std::string* bound) {
  auto dash = std::make_shared<Dashboard>(store, std::move(options));
  auto server =
      std::make_unique<http::Server>([dash](const Request& req) { return dash->Handle(req); });
  auto addr = server->Start(listen);
  if (!addr.ok()) return addr.status();
  *bound = *addr;
  return server;
}

}  // namespace argus::dashboard
