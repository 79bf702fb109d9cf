#include "store/store.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <thread>

namespace argus::store {
namespace {

std::string TempDb() {
  auto dir = std::filesystem::temp_directory_path() /
             ("argus-store-test-" + std::to_string(getpid()) + "-" + NewId("d"));
  std::filesystem::create_directories(dir);
  return (dir / "argus.db").string();
}

v1::Inventory Inv(const std::string& arch) {
  v1::Inventory inv;
  inv.set_hostname("h");
  auto* d = inv.add_devices();
  d->set_backend("interp");
  d->set_arch(arch);
  return inv;
}

v1::JobSpec Probe() {
  v1::JobSpec spec;
  spec.set_kind(v1::JOB_KIND_PROBE);
  spec.set_client("test");
  return spec;
}

TEST_CASE("a job with tasks is leased, reported and finished", "[store]") {
  auto store = JobStore::Open(TempDb(), {.lease_ms = 1000, .max_attempts = 3});
  REQUIRE(store.ok());
  auto w1 = (*store)->RegisterWorker(Inv("interp"), "", 0);
  REQUIRE(w1.ok());
  auto job =
      (*store)->CreateJob(Probe(), {{"probe", "{}", "", true}, {"probe", "{}", "", true}}, 0, 0);
  REQUIRE(job.ok());
  CHECK(job->state() == v1::JOB_STATE_QUEUED);
  CHECK(job->tasks_size() == 2);

  auto t1 = (*store)->LeaseTask(*w1, 10);
  REQUIRE(t1.ok());
  REQUIRE(t1->has_value());
  // once_per_worker: the same worker cannot take the second probe task.
  auto t2 = (*store)->LeaseTask(*w1, 10);
  REQUIRE(t2.ok());
  CHECK_FALSE(t2->has_value());
  CHECK((*store)->GetJob(job->id())->state() == v1::JOB_STATE_RUNNING);

  auto ok = (*store)->ReportResult(*w1, (*t1)->task_id(), true, R"({"x":1})", "", 20);
  REQUIRE(ok.ok());
  CHECK(*ok);
  // A second report of the same task is refused: it is no longer leased.
  CHECK_FALSE(*(*store)->ReportResult(*w1, (*t1)->task_id(), true, "{}", "", 21));

  auto w2 = (*store)->RegisterWorker(Inv("interp"), "", 30);
  auto t3 = (*store)->LeaseTask(*w2, 30);
  REQUIRE(t3->has_value());
  REQUIRE(*(*store)->ReportResult(*w2, (*t3)->task_id(), true, R"({"x":2})", "", 40));
  auto done = (*store)->GetJob(job->id());
  CHECK(done->state() == v1::JOB_STATE_SUCCEEDED);
  CHECK(done->result_json().find("\"x\":2") != std::string::npos);
}

TEST_CASE("an expired lease returns the task to the queue - too many expiries fail it", "[store]") {
  auto store = JobStore::Open(TempDb(), {.lease_ms = 100, .max_attempts = 2});
  REQUIRE(store.ok());
  auto w1 = (*store)->RegisterWorker(Inv("interp"), "", 0);
  auto w2 = (*store)->RegisterWorker(Inv("interp"), "", 0);
  auto job = (*store)->CreateJob(Probe(), {{"probe", "{}", "", false}}, 0, 0);
  auto t = (*store)->LeaseTask(*w1, 0);
  REQUIRE(t->has_value());
  // Heartbeat renews it.
  auto revoked = (*store)->Heartbeat(*w1, {(*t)->task_id()}, true, 90);
  REQUIRE(revoked.ok());
  CHECK(revoked->empty());
  CHECK(*(*store)->ExpireLeases(150) == 0);
  // Without heartbeats it expires and w2 gets it.
  CHECK(*(*store)->ExpireLeases(300) == 1);
  auto again = (*store)->LeaseTask(*w2, 300);
  REQUIRE(again->has_value());
  CHECK((*again)->task_id() == (*t)->task_id());
  // w1 learns that it lost the lease, and its late result is refused.
  auto lost = (*store)->Heartbeat(*w1, {(*t)->task_id()}, true, 310);
  CHECK(*lost == std::vector<std::string>{(*t)->task_id()});
  CHECK_FALSE(*(*store)->ReportResult(*w1, (*t)->task_id(), true, "{}", "", 310));
  // Second expiry: out of attempts, the task and so the job fail.
  CHECK(*(*store)->ExpireLeases(1000) == 1);
  auto failed = (*store)->GetJob(job->id());
  CHECK(failed->state() == v1::JOB_STATE_FAILED);
  CHECK(failed->error().find("lease expired") != std::string::npos);
}

TEST_CASE("the store survives reopening with every job intact", "[store]") {
  std::string path = TempDb();
  std::string id;
  {
    auto store = JobStore::Open(path);
    REQUIRE(store.ok());
    auto job = (*store)->CreateJob(Probe(), {{"probe", "{}", "", false}}, 5, 0);
    id = job->id();
  }
  auto store = JobStore::Open(path);
  REQUIRE(store.ok());
  auto job = (*store)->GetJob(id);
  REQUIRE(job.ok());
  CHECK(job->state() == v1::JOB_STATE_QUEUED);
  CHECK(job->spec().client() == "test");
  CHECK((*store)->GetJob("j-nope").status().code() == absl::StatusCode::kNotFound);
}

TEST_CASE("a corrupt database file is refused with a clear error", "[store]") {
  std::string path = TempDb();
  std::ofstream(path) << std::string(8192, 'x');
  auto store = JobStore::Open(path);
  REQUIRE_FALSE(store.ok());
  CHECK(std::string(store.status().message()).find("not a database") != std::string::npos);
}

TEST_CASE("cancel stops a job and revokes its leases", "[store]") {
  auto store = JobStore::Open(TempDb());
  auto w = (*store)->RegisterWorker(Inv("interp"), "", 0);
  auto job = (*store)->CreateJob(Probe(), {{"probe", "{}", "", false}}, 0, 0);
  auto t = (*store)->LeaseTask(*w, 0);
  auto cancelled = (*store)->CancelJob(job->id(), 1);
  REQUIRE(cancelled.ok());
  CHECK(cancelled->state() == v1::JOB_STATE_CANCELLED);
  CHECK(*(*store)->Heartbeat(*w, {(*t)->task_id()}, true, 2) ==
        std::vector<std::string>{(*t)->task_id()});
}

TEST_CASE("overdue jobs fail with a count of what was done", "[store]") {
  auto store = JobStore::Open(TempDb());
  auto job = (*store)->CreateJob(Probe(), {{"probe", "{}", "", false}}, 0, 100);
  auto overdue = (*store)->FailOverdueJobs(200);
  REQUIRE(overdue.ok());
  CHECK(overdue->size() == 1);
  auto failed = (*store)->GetJob(job->id());
  CHECK(failed->state() == v1::JOB_STATE_FAILED);
  CHECK(failed->error() == "deadline exceeded: 0 of 1 tasks done");
}

TEST_CASE("queued tasks are leased oldest first, in their order within a job", "[store]") {
  auto store = JobStore::Open(TempDb());
  REQUIRE(store.ok());
  auto w = (*store)->RegisterWorker(Inv("interp"), "", 0);
  auto later = (*store)->CreateJob(Probe(), {{"probe", "{}", "", false}}, 50, 0);
  auto first =
      (*store)->CreateJob(Probe(), {{"probe", "{}", "", false}, {"probe", "{}", "", false}}, 10, 0);
  REQUIRE(later.ok());
  REQUIRE(first.ok());
  std::vector<std::string> order;
  for (int i = 0; i < 3; ++i) {
    auto t = (*store)->LeaseTask(*w, 100 + i);
    REQUIRE(t.ok());
    REQUIRE(t->has_value());
    order.push_back((*t)->task_id());
  }
  CHECK(order ==
        std::vector<std::string>{first->tasks(0).id(), first->tasks(1).id(), later->tasks(0).id()});
  CHECK_FALSE((*store)->LeaseTask(*w, 200)->has_value());
}

TEST_CASE("artifacts are stored as bytes and listed by job and candidate", "[store]") {
  auto store = JobStore::Open(TempDb());
  REQUIRE(store.ok());
  v1::JobSpec tune;
  tune.set_kind(v1::JOB_KIND_TUNE);
  auto job = (*store)->CreateJob(tune, {}, 0, 0);
  auto other = (*store)->CreateJob(tune, {}, 0, 0);
  REQUIRE((*store)->AddCandidate("c-1", job->id(), "", "src1", "{}", 1).ok());
  REQUIRE((*store)->AddCandidate("c-2", job->id(), "c-1", "src2", "{}", 2).ok());
  REQUIRE((*store)->AddCandidate("c-3", other->id(), "", "src3", "{}", 3).ok());
  std::string binary(
      "\x7f"
      "ELF\0\1\2",
      7);  // bytes with a NUL survive
  auto a1 = (*store)->AddArtifact("c-1", "sm_90a", "ptx", ".version 8.0\n", R"({"symbol":"k"})", 4);
  auto a2 = (*store)->AddArtifact("c-2", "gfx942", "hsaco", binary, "{}", 5);
  auto a3 = (*store)->AddArtifact("c-3", "sm_90a", "ptx", "x", "{}", 6);
  REQUIRE(a1.ok());
  REQUIRE(a2.ok());
  REQUIRE(a3.ok());
  auto all = (*store)->ListArtifacts(job->id(), "");
  REQUIRE(all.ok());
  REQUIRE(all->size() == 2);
  CHECK((*all)[0].id == *a1);
  CHECK((*all)[0].metadata_json == R"({"symbol":"k"})");
  CHECK((*all)[1].bytes == binary);
  CHECK((*all)[1].kind == "hsaco");
  auto one = (*store)->ListArtifacts(job->id(), "c-2");
  REQUIRE(one->size() == 1);
  CHECK((*one)[0].target == "gfx942");
  // A candidate of another job is not listed under this one.
  CHECK((*store)->ListArtifacts(job->id(), "c-3")->empty());
  CHECK(*(*store)->CountRows("artifacts") == 3);
}

TEST_CASE("a v1 store is migrated to v2 on open and keeps its queue", "[store]") {
  std::string path = TempDb();
  std::string job_id;
  {
    auto store = JobStore::Open(path);
    REQUIRE(store.ok());
    auto job = (*store)->CreateJob(Probe(), {{"probe", "{}", "", false}}, 0, 0);
    REQUIRE(job.ok());
    job_id = job->id();
  }
  {
    // Back to what a v1 server left: its index and version.
    auto db = Db::Open(path);
    REQUIRE(db.ok());
    REQUIRE((*db)
                ->Exec("DROP INDEX tasks_by_queue; DROP INDEX artifacts_by_candidate; "
                       "CREATE INDEX tasks_by_state ON tasks(state, created_ms); "
                       "UPDATE schema_version SET version = 1")
                .ok());
  }
  auto store = JobStore::Open(path);
  INFO(store.status().ToString());
  REQUIRE(store.ok());
  {
    auto db = Db::Open(path);
    auto q = (*db)->Prepare(
        "SELECT (SELECT version FROM schema_version), (SELECT COUNT(*) FROM sqlite_master WHERE "
        "name IN ('tasks_by_queue', 'artifacts_by_candidate')), (SELECT COUNT(*) FROM "
        "sqlite_master WHERE name = 'tasks_by_state')");
    REQUIRE(q.ok());
    REQUIRE(*q->Step());
    CHECK(q->Int(0) == kSchemaVersion);
    CHECK(q->Int(1) == 2);
    CHECK(q->Int(2) == 0);
  }
  auto w = (*store)->RegisterWorker(Inv("interp"), "", 1);
  auto t = (*store)->LeaseTask(*w, 1);
  REQUIRE(t.ok());
  REQUIRE(t->has_value());
  CHECK((*t)->job_id() == job_id);
}

TEST_CASE("ListJobs pages by count and bytes, filters by kind, and always progresses", "[store]") {
  auto store = JobStore::Open(TempDb());
  REQUIRE(store.ok());
  v1::JobSpec tune = Probe();
  tune.set_kind(v1::JOB_KIND_TUNE);
  tune.set_source(std::string(1000, 's'));
  for (int i = 0; i < 10; ++i) {
    // Equal creation times too: the id breaks the tie, and no job is lost.
    REQUIRE((*store)->CreateJob(i % 2 ? tune : Probe(), {}, 100 + i / 3, 0).ok());
  }
  auto walk = [&](JobQuery q) {
    std::vector<std::string> ids;
    int pages = 0;
    while (true) {
      auto page = (*store)->ListJobs(q);
      REQUIRE(page.ok());
      REQUIRE(!page->jobs.empty());
      ++pages;
      for (const auto& j : page->jobs) ids.push_back(j.id());
      if (page->next_page_token.empty()) break;
      q.page_token = page->next_page_token;
    }
    std::set<std::string> distinct(ids.begin(), ids.end());
    CHECK(distinct.size() == ids.size());
    return std::pair{ids.size(), pages};
  };
  CHECK(walk({.limit = 3}) == std::pair<size_t, int>{10, 4});
  CHECK(walk({.kind = v1::JOB_KIND_TUNE, .limit = 2}) == std::pair<size_t, int>{5, 3});
  // A byte budget smaller than one job: one job a page, never none.
  CHECK(walk({.limit = 100, .max_bytes = 10}) == std::pair<size_t, int>{10, 10});
  CHECK((*store)->ListJobs(JobQuery{.page_token = "nonsense"}).status().code() ==
        absl::StatusCode::kInvalidArgument);
}

TEST_CASE("WaitForChange sleeps until a write, and WakeWaiters ends it", "[store]") {
  auto store = JobStore::Open(TempDb());
  REQUIRE(store.ok());
  int64_t v = (*store)->version();
  auto t0 = std::chrono::steady_clock::now();
  std::thread writer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    REQUIRE((*store)->CreateJob(Probe(), {}, 1, 0).ok());
  });
  int64_t after = (*store)->WaitForChange(v, t0 + std::chrono::seconds(10));
  writer.join();
  CHECK(after > v);
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(5));
  std::thread waker([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    (*store)->WakeWaiters();
  });
  t0 = std::chrono::steady_clock::now();
  CHECK((*store)->WaitForChange(after, t0 + std::chrono::seconds(10)) == after);
  waker.join();
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(5));
}

}  // namespace
}  // namespace argus::store
