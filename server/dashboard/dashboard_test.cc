#include "server/dashboard/dashboard.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "nlohmann/json.hpp"
#include "server/dashboard/demo_seed.h"
#include "server/dashboard/test_client.h"

namespace argus::dashboard {
namespace {

using nlohmann::json;

struct Fixture {
  std::string dir =
      (std::filesystem::temp_directory_path() / ("argus-dash-" + std::to_string(getpid()) + "-" +
                                                 std::to_string(reinterpret_cast<uintptr_t>(this))))
          .string();
  std::unique_ptr<store::JobStore> store;
  Fixture() {
    std::filesystem::create_directories(dir);
    auto s = store::JobStore::Open(dir + "/argus.db");
    REQUIRE(s.ok());
    store = std::move(*s);
  }
  ~Fixture() { std::filesystem::remove_all(dir); }
};

http::Response Call(Dashboard& d, const std::string& method, const std::string& target,
                    const std::string& auth = "") {
  http::Request req;
  http::ParseError err;
  std::string head = method + " " + target + " HTTP/1.1\r\nHost: t";
  if (!auth.empty()) head += "\r\nAuthorization: " + auth;
  REQUIRE(http::ParseRequestHead(head, &req, &err));
  return d.Handle(req);
}

json J(const http::Response& r) { return json::parse(r.body); }

DashboardOptions OpenReads() {
  DashboardOptions o;
  o.open_reads = true;
  return o;
}

// An Authenticator with one read, one admin, one client and one worker token.
std::shared_ptr<const auth::Authenticator> Tokens(const std::string& dir) {
  auto write = [&](const std::string& name, const std::string& token) {
    std::string path = dir + "/" + name;
    std::ofstream(path) << token << "\n";
    std::filesystem::permissions(
        path, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
    return path;
  };
  auto a = auth::Authenticator::FromFiles(
      {write("client", "client-token-0123456789"), write("worker", "worker-token-0123456789"),
       write("admin", "admin-token-0123456789"), write("read", "read-token-0123456789")});
  REQUIRE(a.ok());
  return *a;
}

const char* kSource =
    "@kernel(threads=128)\n"
    "def gemm(A, B, C):\n"
    "    a = load_fragment(sA, acc, operand=\"A\")\n"
    "    assert_tag(a, lambda i, j: A(bm * BM + i, k * BK + j))\n"
    "    mma(acc, a, b)\n";

TEST_CASE("dashboard: jobs, one job with candidates, workers, filters") {
  Fixture f;
  auto seeded = SeedTuneJob(f.store.get(), kSource, 8);
  REQUIRE(seeded.ok());
  v1::JobSpec probe;
  probe.set_kind(v1::JOB_KIND_PROBE);
  auto pj = f.store->CreateJob(probe, {{"probe", "{}", "", true}}, 1, 1'000'000'000'000'000);
  REQUIRE(pj.ok());
  v1::Inventory inv;
  inv.set_hostname("gpu-node-1");
  auto* dev = inv.add_devices();
  dev->set_backend("cuda");
  dev->set_arch("sm_90a");
  dev->set_name("NVIDIA H200");
  REQUIRE(f.store->RegisterWorker(inv, "", 1).ok());

  Dashboard d(f.store.get(), OpenReads());
  auto all = J(Call(d, "GET", "/api/jobs"));
  REQUIRE(all["jobs"].size() == 2);
  auto tune = J(Call(d, "GET", "/api/jobs?kind=tune"));
  REQUIRE(tune["jobs"].size() == 1);
  CHECK(tune["jobs"][0]["id"] == seeded->job_id);
  CHECK(tune["jobs"][0]["family"] == "gemm");
  CHECK(J(Call(d, "GET", "/api/jobs?kind=probe&state=queued"))["jobs"].size() == 1);
  CHECK(J(Call(d, "GET", "/api/jobs?state=succeeded"))["jobs"].empty());
  CHECK(Call(d, "GET", "/api/jobs?state=bogus").status == 400);
  CHECK(Call(d, "GET", "/api/jobs?kind=bogus").status == 400);
  CHECK(Call(d, "GET", "/api/jobs?limit=x").status == 400);

  auto job = J(Call(d, "GET", "/api/jobs/" + seeded->job_id));
  CHECK(job["kind"] == "tune");
  REQUIRE(job["candidates"].size() == 8);
  REQUIRE(job["trajectory_steps"].size() == 8);
  CHECK(job["candidates"][2]["detail"]["verdict"] == "rejected");
  CHECK(job["candidates"][2]["detail"]["diagnostics"][0]["counterexample"]["thread"] == 37);
  CHECK(job["candidates"][0]["detail"]["invariants"][0]["line"] == 5);  // header line + 4
  CHECK(job["candidates"][0]["source"].get<std::string>().find("assert_tag") != std::string::npos);
  // The tune progress the CLI shows: the budget from the spec, times from the job.
  REQUIRE(job.contains("progress"));
  CHECK(job["progress"]["max_candidates"] == 8);
  CHECK(job["progress"]["elapsed_ms"].get<int64_t>() >= 0);

  auto pjob = J(Call(d, "GET", "/api/jobs/" + pj->id()));
  CHECK(pjob["tasks"].size() == 1);
  CHECK(pjob["tasks_total"] == 1);

  auto workers = J(Call(d, "GET", "/api/workers"));
  REQUIRE(workers["workers"].size() == 1);
  CHECK(workers["workers"][0]["inventory"]["hostname"] == "gpu-node-1");
  CHECK(workers["workers"][0]["inventory"]["devices"][0]["arch"] == "sm_90a");
  CHECK(workers["workers"][0]["alive"] == false);  // heartbeat at t=1

  // Pages.
  auto page = Call(d, "GET", "/jobs/" + seeded->job_id);
  CHECK(page.status == 200);
  CHECK(page.body.find("data-page=\"job\"") != std::string::npos);
  CHECK(Call(d, "GET", "/").body.find("data-page=\"jobs\"") != std::string::npos);
  CHECK(Call(d, "GET", "/workers").body.find("data-page=\"workers\"") != std::string::npos);
  CHECK(Call(d, "GET", "/static/app.js").content_type.find("javascript") != std::string::npos);
}

TEST_CASE("dashboard: unknown things are 404, wrong methods 405, with no echo of markup") {
  Fixture f;
  Dashboard d(f.store.get(), OpenReads());
  auto r = Call(d, "GET", "/jobs/j-doesnotexist");
  CHECK(r.status == 404);
  CHECK(r.content_type.find("text/html") == 0);
  CHECK(r.body.find("job j-doesnotexist") != std::string::npos);
  r = Call(d, "GET", "/no/such/page%3Cscript%3E");
  CHECK(r.status == 404);
  CHECK(r.body.find("<script>") == std::string::npos);
  CHECK(r.body.find("&lt;script&gt;") != std::string::npos);
  CHECK(Call(d, "GET", "/api/jobs/j-nope").status == 404);
  CHECK(J(Call(d, "GET", "/api/jobs/j-nope"))["error"] == "no job j-nope");
  CHECK(Call(d, "GET", "/api/nothing").status == 404);
  CHECK(Call(d, "GET", "/api/jobs/../../etc").status == 404);
  r = Call(d, "DELETE", "/api/jobs");
  CHECK(r.status == 405);
  CHECK(r.headers.at(0).first == "Allow");
  CHECK(Call(d, "POST", "/jobs").status == 405);
  CHECK(Call(d, "GET", "/api/jobs/x/cancel").status == 405);
}

TEST_CASE("dashboard: read-only without a token - cancel needs the bearer token") {
  Fixture f;
  v1::JobSpec probe;
  probe.set_kind(v1::JOB_KIND_PROBE);
  auto pj = f.store->CreateJob(probe, {{"probe", "{}", "", true}}, 1, 1'000'000'000'000'000);
  REQUIRE(pj.ok());
  Dashboard ro(f.store.get(), OpenReads());
  CHECK(J(Call(ro, "GET", "/api/info"))["admin"] == false);
  CHECK(Call(ro, "POST", "/api/jobs/" + pj->id() + "/cancel", "Bearer x").status == 403);

  DashboardOptions opt;
  opt.auth = Tokens(f.dir);
  Dashboard admin(f.store.get(), opt);
  const std::string cancel = "/api/jobs/" + pj->id() + "/cancel",
                    tok = "Bearer admin-token-0123456789";
  CHECK(J(Call(admin, "GET", "/api/info", tok))["admin"] == true);
  CHECK(Call(admin, "POST", cancel).status == 401);
  CHECK(Call(admin, "POST", cancel, "Bearer admin-token-012345678").status == 401);
  CHECK(Call(admin, "POST", cancel, "Bearer read-token-0123456789").status == 401);
  CHECK(Call(admin, "POST", cancel, "Bearer client-token-0123456789").status == 401);
  CHECK(Call(admin, "POST", "/api/jobs/j-none/cancel", tok).status == 404);
  auto r = Call(admin, "POST", cancel, tok);
  CHECK(r.status == 200);
  CHECK(J(r)["state"] == "cancelled");
}

TEST_CASE("dashboard: served over real HTTP") {
  Fixture f;
  std::string bound;
  auto server = StartDashboard(f.store.get(), OpenReads(), "127.0.0.1:0", &bound);
  REQUIRE(server.ok());
  int port = http::PortOf(bound);
  std::string r = http::HttpGet(port, "/api/jobs");
  CHECK(r.rfind("HTTP/1.1 200", 0) == 0);
  CHECK(json::parse(http::BodyOf(r))["jobs"].empty());
  CHECK(http::HttpGet(port, "/nope").rfind("HTTP/1.1 404", 0) == 0);
  (*server)->Shutdown();
}

TEST_CASE("dashboard: reads need a read or admin token unless open") {
  Fixture f;
  auto seeded = SeedTuneJob(f.store.get(), kSource, 2);
  REQUIRE(seeded.ok());
  const std::string job = "/api/jobs/" + seeded->job_id;
  Dashboard closed(f.store.get(), {});  // no token configured, not open
  auto r = Call(closed, "GET", "/api/jobs");
  CHECK(r.status == 401);
  CHECK(J(r)["error"].get<std::string>().find("--read_token_file") != std::string::npos);

  DashboardOptions opt;
  opt.auth = Tokens(f.dir);
  Dashboard d(f.store.get(), opt);
  int refused = 0;
  for (const std::string& path :
       {std::string("/"), std::string("/workers"), "/jobs/" + seeded->job_id,
        std::string("/api/jobs"), job, std::string("/api/workers"), std::string("/api/info")}) {
    for (const std::string& token : {std::string(""), std::string("Bearer wrong-token-0123456"),
                                     std::string("Bearer client-token-0123456789"),
                                     std::string("Bearer worker-token-0123456789")}) {
      r = Call(d, "GET", path, token);
      INFO(path << " with '" << token << "'");
      CHECK(r.status == 401);
      CHECK(r.body.find("load_fragment") == std::string::npos);  // no source leaks
      refused += r.status == 401;
    }
    CHECK(Call(d, "GET", path, "Bearer read-token-0123456789").status == 200);
    CHECK(Call(d, "GET", path, "Bearer admin-token-0123456789").status == 200);
  }
  CHECK(Call(d, "GET", "/static/style.css").status == 200);  // the sign-in page's style
  CHECK(Call(d, "GET", "/").body.find("action=\"/login\"") != std::string::npos);
  std::printf("figure: %d dashboard reads without a read/admin token refused with 401\n", refused);

  // The sign-in form sets an HttpOnly cookie that then opens the pages.
  auto login = [&](const std::string& body) {
    http::Request req;
    http::ParseError err;
    REQUIRE(http::ParseRequestHead("POST /login HTTP/1.1\r\nHost: t", &req, &err));
    req.body = body;
    return d.Handle(req);
  };
  CHECK(login("token=client-token-0123456789").status == 401);
  r = login("token=read-token-0123456789");
  CHECK(r.status == 303);
  std::string cookie;
  for (auto& [k, v] : r.headers) {
    if (k == "Set-Cookie") cookie = v;
  }
  CHECK(cookie.find("HttpOnly") != std::string::npos);
  CHECK(cookie.find("SameSite=Strict") != std::string::npos);
  http::Request req;
  http::ParseError err;
  REQUIRE(http::ParseRequestHead(
      "GET " + job + " HTTP/1.1\r\nHost: t\r\nCookie: " + cookie.substr(0, cookie.find(';')), &req,
      &err));
  CHECK(d.Handle(req).status == 200);
  // A cookie never authorizes a write: cancel needs the admin header.
  REQUIRE(http::ParseRequestHead("POST " + job +
                                     "/cancel HTTP/1.1\r\nHost: t\r\nCookie: "
                                     "argus_token=admin-token-0123456789",
                                 &req, &err));
  CHECK(d.Handle(req).status == 401);
}

}  // namespace
}  // namespace argus::dashboard
