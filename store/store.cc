#include "store/store.h"

#include <algorithm>
#include <filesystem>
#include <random>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/status.h"
#include "nlohmann/json.hpp"

namespace argus::store {
namespace {

// Each entry migrates from version i to i+1. Append only; never edit a
// released migration.
const char* const kMigrations[] = {
    // v0 -> v1
    R"sql(
    CREATE TABLE jobs (
      id TEXT PRIMARY KEY,
      kind INTEGER NOT NULL,
      spec BLOB NOT NULL,
      client TEXT NOT NULL DEFAULT '',
      state INTEGER NOT NULL,
      error TEXT NOT NULL DEFAULT '',
      result_json TEXT NOT NULL DEFAULT '',
      created_ms INTEGER NOT NULL,
      updated_ms INTEGER NOT NULL,
      deadline_ms INTEGER NOT NULL
    );
    CREATE INDEX jobs_by_state ON jobs(state, created_ms);
    CREATE TABLE tasks (
      id TEXT PRIMARY KEY,
      job_id TEXT NOT NULL REFERENCES jobs(id),
      seq INTEGER NOT NULL,
      kind TEXT NOT NULL,
      payload_json TEXT NOT NULL,
      required_arch TEXT NOT NULL DEFAULT '',
      once_per_worker INTEGER NOT NULL DEFAULT 0,
      state TEXT NOT NULL CHECK (state IN ('queued','leased','done','failed','cancelled')),
      worker_id TEXT,
      lease_expires_ms INTEGER NOT NULL DEFAULT 0,
      attempts INTEGER NOT NULL DEFAULT 0,
      result_json TEXT NOT NULL DEFAULT '',
      error TEXT NOT NULL DEFAULT '',
      created_ms INTEGER NOT NULL,
      updated_ms INTEGER NOT NULL,
      UNIQUE (job_id, seq)
    );
    CREATE INDEX tasks_by_state ON tasks(state, created_ms);
    CREATE INDEX tasks_by_job ON tasks(job_id);
    CREATE TABLE workers (
      id TEXT PRIMARY KEY,
      inventory BLOB NOT NULL,
      registered_ms INTEGER NOT NULL,
      last_heartbeat_ms INTEGER NOT NULL,
      healthy INTEGER NOT NULL DEFAULT 1
    );
    CREATE TABLE candidates (
      id TEXT PRIMARY KEY,
      job_id TEXT NOT NULL REFERENCES jobs(id),
      parent_id TEXT NOT NULL DEFAULT '',
      source TEXT NOT NULL,
      detail_json TEXT NOT NULL DEFAULT '',
      created_ms INTEGER NOT NULL
    );
    CREATE INDEX candidates_by_job ON candidates(job_id);
    CREATE TABLE trajectory_steps (
      job_id TEXT NOT NULL REFERENCES jobs(id),
      step INTEGER NOT NULL,
      candidate_id TEXT NOT NULL DEFAULT '',
      action TEXT NOT NULL,
      detail_json TEXT NOT NULL DEFAULT '',
      reward REAL NOT NULL DEFAULT 0,
      created_ms INTEGER NOT NULL,
      PRIMARY KEY (job_id, step)
    );
    CREATE TABLE artifacts (
      id TEXT PRIMARY KEY,
      candidate_id TEXT NOT NULL,
      target TEXT NOT NULL,
      kind TEXT NOT NULL,
      bytes BLOB,
      metadata_json TEXT NOT NULL DEFAULT '',
      created_ms INTEGER NOT NULL
    );
    )sql",
    // v1 -> v2: the lease pick walks queued tasks in queue order (state,
    // created_ms, seq) and stops at the first one a worker may take, instead
    // of sorting every queued task per lease; artifacts are found by candidate.
    R"sql(
    DROP INDEX tasks_by_state;
    CREATE INDEX tasks_by_queue ON tasks(state, created_ms, seq);
    CREATE INDEX artifacts_by_candidate ON artifacts(candidate_id);
    )sql",
};
constexpr int kNumMigrations = sizeof(kMigrations) / sizeof(kMigrations[0]);
static_assert(kNumMigrations == kSchemaVersion);

bool Finished(v1::JobState s) {
  return s == v1::JOB_STATE_SUCCEEDED || s == v1::JOB_STATE_FAILED || s == v1::JOB_STATE_CANCELLED;
}

// PRAGMA quick_check: page structure, free lists and row formats (not
// index contents), in time linear in the file.
absl::Status QuickCheck(Db* db, const std::string& path) {
  auto damaged = [&](const std::string& what) {
    return absl::FailedPreconditionError(
        absl::StrCat("store ", path, " is damaged (PRAGMA quick_check: ", what,
                     "); refusing to serve it: restore it from a backup (docs/deploy.md)"));
  };
  auto q = db->Prepare("PRAGMA quick_check(5)");
  if (!q.ok()) return damaged(std::string(q.status().message()));
  std::vector<std::string> problems;
  while (true) {
    auto row = q->Step();
    if (!row.ok()) return damaged(std::string(row.status().message()));
    if (!*row) break;
    if (q->Text(0) != "ok") problems.push_back(q->Text(0));
  }
  if (!problems.empty()) return damaged(absl::StrJoin(problems, "; "));
  return absl::OkStatus();
}

}  // namespace

std::string NewId(const std::string& prefix) {
  static thread_local std::mt19937_64 rng(std::random_device{}());
  return absl::StrFormat("%s-%016x", prefix, rng());
}

absl::StatusOr<std::unique_ptr<JobStore>> JobStore::Open(const std::string& path,
                                                         StoreOptions options) {
  std::error_code ec;
  if (!options.new_store && std::filesystem::is_regular_file(path, ec) &&
      std::filesystem::file_size(path, ec) == 0 && !ec) {
    return absl::FailedPreconditionError(absl::StrCat(
        "store ", path,
        " is an empty file (0 bytes), not an Argus store: restore it from a backup, or start "
        "with --new_store to make a new, empty store there"));
  }
  ASSIGN_OR_RETURN(auto db, Db::Open(path));
  RETURN_IF_ERROR(QuickCheck(db.get(), path));
  std::unique_ptr<JobStore> store(new JobStore(std::move(db), options));
  RETURN_IF_ERROR(store->Migrate());
  RETURN_IF_ERROR(store->OpenReaders(path));
  return store;
}

absl::Status JobStore::OpenReaders(const std::string& path) {
  for (int i = 0; i < std::max(1, options_.readers); ++i) {
    ASSIGN_OR_RETURN(auto db, Db::OpenReader(path));
    readers_.push_back(std::move(db));
  }
  return absl::OkStatus();
}

absl::StatusOr<JobStore::Reader> JobStore::Reader::Take(JobStore* store) {
  std::unique_ptr<Db> db;
  {
    std::unique_lock lock(store->readers_mu_);
    store->readers_cv_.wait(lock, [store] { return !store->readers_.empty(); });
    db = std::move(store->readers_.back());
    store->readers_.pop_back();
  }
  Reader reader(store, std::move(db));
  // One snapshot for every statement of the read (a job and its tasks agree).
  RETURN_IF_ERROR(reader.db()->Exec("BEGIN"));
  return reader;
}

JobStore::Reader::~Reader() {
  if (!db_) return;
  if (!sqlite3_get_autocommit(db_->raw())) db_->Exec("ROLLBACK").IgnoreError();
  std::lock_guard lock(store_->readers_mu_);
  store_->readers_.push_back(std::move(db_));
  store_->readers_cv_.notify_one();
}

void JobStore::Bump() {
  version_.fetch_add(1);
  { std::lock_guard lock(change_mu_); }  // a waiter between its check and its wait sees it
  change_cv_.notify_all();
}

int64_t JobStore::WaitForChange(int64_t seen, std::chrono::steady_clock::time_point deadline) {
  std::unique_lock lock(change_mu_);
  int64_t wakeups = wakeups_;
  change_cv_.wait_until(lock, deadline,
                        [&] { return version_.load() != seen || wakeups_ != wakeups; });
  return version_.load();
}

void JobStore::WakeWaiters() {
  {
    std::lock_guard lock(change_mu_);
    ++wakeups_;
  }
  change_cv_.notify_all();
}

absl::Status JobStore::Migrate() {
  std::lock_guard lock(mu_);
  RETURN_IF_ERROR(
      db_->Exec("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)"));
  ASSIGN_OR_RETURN(auto q, db_->Prepare("SELECT version FROM schema_version"));
  int version = 0;
  ASSIGN_OR_RETURN(bool row, q.Step());
  if (row) version = static_cast<int>(q.Int(0));
  q.Reset();  // a statement still reading would lock the tables a migration drops or alters
  if (version > kSchemaVersion) {
    return absl::FailedPreconditionError(absl::StrCat("database schema version ", version,
                                                      " is newer than this server's ",
                                                      kSchemaVersion, "; upgrade argus-server"));
  }
  for (int v = version; v < kSchemaVersion; ++v) {
    ASSIGN_OR_RETURN(auto tx, Transaction::Begin(db_.get()));
    RETURN_IF_ERROR(db_->Exec(kMigrations[v]));
    RETURN_IF_ERROR(db_->Exec("DELETE FROM schema_version"));
    RETURN_IF_ERROR(db_->Exec(absl::StrCat("INSERT INTO schema_version VALUES (", v + 1, ")")));
    RETURN_IF_ERROR(tx->Commit());
  }
  return absl::OkStatus();
}

absl::StatusOr<v1::Job> JobStore::CreateJob(const v1::JobSpec& spec,
                                            const std::vector<NewTask>& tasks, int64_t now_ms,
                                            int64_t deadline_ms) {
  std::lock_guard lock(mu_);
  std::string id = NewId("j");
  ASSIGN_OR_RETURN(auto tx, Transaction::Begin(db_.get()));
  {
    ASSIGN_OR_RETURN(
        auto ins,
        db_->Prepare(
            "INSERT INTO jobs (id, kind, spec, client, state, created_ms, updated_ms, deadline_ms) "
            "VALUES (?,?,?,?,?,?,?,?)"));
    ins.Bind(1, id)
        .Bind(2, int64_t{spec.kind()})
        .BindBlob(3, spec.SerializeAsString())
        .Bind(4, spec.client())
        .Bind(5, int64_t{v1::JOB_STATE_QUEUED})
        .Bind(6, now_ms)
        .Bind(7, now_ms)
        .Bind(8, deadline_ms);
    RETURN_IF_ERROR(ins.Run());
  }
  int seq = 0;
  for (const NewTask& t : tasks) {
    ASSIGN_OR_RETURN(
        auto ins,
        db_->Prepare("INSERT INTO tasks (id, job_id, seq, kind, payload_json, required_arch, "
                     "once_per_worker, "
                     "state, created_ms, updated_ms) VALUES (?,?,?,?,?,?,?,'queued',?,?)"));
    ins.Bind(1, NewId("t"))
        .Bind(2, id)
        .Bind(3, int64_t{seq++})
        .Bind(4, t.kind)
        .Bind(5, t.payload_json)
        .Bind(6, t.required_arch)
        .Bind(7, int64_t{t.once_per_worker ? 1 : 0})
        .Bind(8, now_ms)
        .Bind(9, now_ms);
    RETURN_IF_ERROR(ins.Run());
  }
  RETURN_IF_ERROR(tx->Commit());
  Bump();
  return GetJobLocked(id, true);
}

absl::StatusOr<v1::Job> JobStore::GetJob(const std::string& id, bool with_tasks) {
  ASSIGN_OR_RETURN(Reader reader, Reader::Take(this));
  return GetJobOn(reader.db(), id, with_tasks);
}

absl::StatusOr<v1::Job> JobStore::GetJobOn(Db* db, const std::string& id, bool with_tasks) {
  ASSIGN_OR_RETURN(
      auto q,
      db->Prepare(
          "SELECT spec, state, error, created_ms, updated_ms, result_json, deadline_ms FROM jobs "
          "WHERE id = ?"));
  q.Bind(1, id);
  ASSIGN_OR_RETURN(bool row, q.Step());
  if (!row) return absl::NotFoundError(absl::StrCat("job ", id, " does not exist"));
  v1::Job job;
  job.set_id(id);
  if (!job.mutable_spec()->ParseFromString(q.Text(0))) {
    return absl::DataLossError(absl::StrCat("job ", id, ": stored spec does not parse"));
  }
  job.set_state(static_cast<v1::JobState>(q.Int(1)));
  job.set_error(q.Text(2));
  job.set_created_unix_ms(q.Int(3));
  job.set_updated_unix_ms(q.Int(4));
  job.set_result_json(q.Text(5));
  job.set_deadline_unix_ms(q.Int(6));
  if (with_tasks) {
    ASSIGN_OR_RETURN(
        auto t,
        db->Prepare("SELECT id, kind, state, IFNULL(worker_id,''), result_json, attempts, error "
                    "FROM tasks WHERE job_id = ? ORDER BY seq"));
    t.Bind(1, id);
    while (true) {
      ASSIGN_OR_RETURN(bool more, t.Step());
      if (!more) break;
      v1::Task* task = job.add_tasks();
      task->set_id(t.Text(0));
      task->set_job_id(id);
      task->set_kind(t.Text(1));
      task->set_state(t.Text(2));
      task->set_worker_id(t.Text(3));
      task->set_result_json(t.Text(6).empty() ? t.Text(4)
                                              : nlohmann::json({{"error", t.Text(6)}}).dump());
      task->set_attempts(static_cast<int32_t>(t.Int(5)));
    }
  }
  return job;
}

namespace {

// A page token: "<created_ms>.<job id>" of the last job of the previous page.
bool ParsePageToken(const std::string& token, int64_t* created_ms, std::string* id) {
  auto dot = token.find('.');
  if (dot == std::string::npos || dot == 0 || dot + 1 >= token.size() || token.size() > 160) {
    return false;
  }
  if (!absl::SimpleAtoi(token.substr(0, dot), created_ms)) return false;
  *id = token.substr(dot + 1);
  return true;
}

}  // namespace

absl::StatusOr<JobPage> JobStore::ListJobs(const JobQuery& query) {
  int limit = std::clamp(query.limit, 1, 10'000);
  int64_t after_ms = 0;
  std::string after_id;
  if (!query.page_token.empty() && !ParsePageToken(query.page_token, &after_ms, &after_id)) {
    return absl::InvalidArgumentError("page_token: not a token this server gave out");
  }
  ASSIGN_OR_RETURN(Reader reader, Reader::Take(this));
  Db* db = reader.db();
  // Only the filters asked for, so that a state filter walks jobs_by_state.
  std::string sql = "SELECT id, created_ms FROM jobs WHERE 1";
  if (query.state != v1::JOB_STATE_UNSPECIFIED) sql += " AND state = ?1";
  if (query.kind != v1::JOB_KIND_UNSPECIFIED) sql += " AND kind = ?2";
  if (query.client) sql += " AND client = ?6";
  if (!query.page_token.empty()) sql += " AND (created_ms < ?3 OR (created_ms = ?3 AND id > ?4))";
  sql += " ORDER BY created_ms DESC, id LIMIT ?5";
  ASSIGN_OR_RETURN(auto q, db->Prepare(sql));
  if (query.state != v1::JOB_STATE_UNSPECIFIED) q.Bind(1, int64_t{query.state});
  if (query.kind != v1::JOB_KIND_UNSPECIFIED) q.Bind(2, int64_t{query.kind});
  if (!query.page_token.empty()) q.Bind(3, after_ms).Bind(4, after_id);
  if (query.client) q.Bind(6, *query.client);
  q.Bind(5, int64_t{limit} + 1);  // one more: is there a next page?
  std::vector<std::pair<std::string, int64_t>> rows;
  while (true) {
    ASSIGN_OR_RETURN(bool row, q.Step());
    if (!row) break;
    rows.emplace_back(q.Text(0), q.Int(1));
  }
  q.Reset();
  JobPage page;
  int64_t bytes = 0;
  size_t i = 0;
  for (; i < rows.size() && static_cast<int>(i) < limit; ++i) {
    ASSIGN_OR_RETURN(auto job, GetJobOn(db, rows[i].first, false));
    // Protobuf's repeated-field overhead: a tag and a length of up to 5 bytes.
    int64_t size = static_cast<int64_t>(job.ByteSizeLong()) + 6;
    if (query.max_bytes > 0 && !page.jobs.empty() && bytes + size > query.max_bytes) break;
    bytes += size;
    page.jobs.push_back(std::move(job));
  }
  if (i < rows.size()) {
    page.next_page_token = absl::StrCat(rows[i - 1].second, ".", rows[i - 1].first);
  }
  return page;
}

absl::StatusOr<std::vector<v1::Job>> JobStore::ListJobs(int limit, v1::JobState state) {
  JobQuery query;
  query.limit = limit <= 0 ? 100 : limit;
  query.state = state;
  ASSIGN_OR_RETURN(JobPage page, ListJobs(query));
  return std::move(page.jobs);
}

absl::StatusOr<v1::Job> JobStore::CancelJob(const std::string& id, int64_t now_ms) {
  std::lock_guard lock(mu_);
  ASSIGN_OR_RETURN(auto job, GetJobLocked(id, false));
  if (Finished(job.state())) return GetJobLocked(id, true);
  ASSIGN_OR_RETURN(auto tx, Transaction::Begin(db_.get()));
  ASSIGN_OR_RETURN(auto up, db_->Prepare("UPDATE jobs SET state = ?, error = 'cancelled by "
                                         "request', updated_ms = ? WHERE id = ?"));
  up.Bind(1, int64_t{v1::JOB_STATE_CANCELLED}).Bind(2, now_ms).Bind(3, id);
  RETURN_IF_ERROR(up.Run());
  ASSIGN_OR_RETURN(auto ut, db_->Prepare("UPDATE tasks SET state = 'cancelled', updated_ms = ? "
                                         "WHERE job_id = ? AND state IN ('queued','leased')"));
  ut.Bind(1, now_ms).Bind(2, id);
  RETURN_IF_ERROR(ut.Run());
  RETURN_IF_ERROR(tx->Commit());
  Bump();
  return GetJobLocked(id, true);
}

absl::StatusOr<std::vector<std::string>> JobStore::FailOverdueJobs(int64_t now_ms) {
  std::lock_guard lock(mu_);
  ASSIGN_OR_RETURN(
      auto q,
      db_->Prepare(
          "SELECT id FROM jobs WHERE state IN (?, ?) AND deadline_ms > 0 AND deadline_ms < ?"));
  q.Bind(1, int64_t{v1::JOB_STATE_QUEUED}).Bind(2, int64_t{v1::JOB_STATE_RUNNING}).Bind(3, now_ms);
  std::vector<std::string> ids;
  while (true) {
    ASSIGN_OR_RETURN(bool row, q.Step());
    if (!row) break;
    ids.push_back(q.Text(0));
  }
  for (const auto& id : ids) {
    ASSIGN_OR_RETURN(auto tx, Transaction::Begin(db_.get()));
    ASSIGN_OR_RETURN(
        auto up,
        db_->Prepare(
            "UPDATE jobs SET state = ?2, updated_ms = ?3, error = 'deadline exceeded: ' || "
            "(SELECT COUNT(*) FROM tasks WHERE job_id = ?1 AND state = 'done') || ' of ' || "
            "(SELECT COUNT(*) FROM tasks WHERE job_id = ?1) || ' tasks done' WHERE id = ?1"));
    up.Bind(1, id).Bind(2, int64_t{v1::JOB_STATE_FAILED}).Bind(3, now_ms);
    RETURN_IF_ERROR(up.Run());
    ASSIGN_OR_RETURN(auto ut, db_->Prepare("UPDATE tasks SET state = 'cancelled', updated_ms = ? "
                                           "WHERE job_id = ? AND state IN ('queued','leased')"));
    ut.Bind(1, now_ms).Bind(2, id);
    RETURN_IF_ERROR(ut.Run());
    RETURN_IF_ERROR(tx->Commit());
  }
  if (!ids.empty()) Bump();
  return ids;
}

absl::StatusOr<int64_t> JobStore::CountActiveJobs(const std::string& client) {
  ASSIGN_OR_RETURN(Reader reader, Reader::Take(this));
  Db* db = reader.db();
  ASSIGN_OR_RETURN(auto q,
                   db->Prepare("SELECT COUNT(*) FROM jobs WHERE client = ? AND state IN (?, ?)"));
  q.Bind(1, client).Bind(2, int64_t{v1::JOB_STATE_QUEUED}).Bind(3, int64_t{v1::JOB_STATE_RUNNING});
  ASSIGN_OR_RETURN(bool row, q.Step());
  return row ? q.Int(0) : 0;
}

absl::StatusOr<std::string> JobStore::RegisterWorker(const v1::Inventory& inventory,
                                                     const std::string& requested_id,
                                                     int64_t now_ms) {
  std::lock_guard lock(mu_);
  std::string id = requested_id.empty() ? NewId("w") : requested_id;
  ASSIGN_OR_RETURN(auto tx, Transaction::Begin(db_.get()));
  ASSIGN_OR_RETURN(
      auto up,
      db_->Prepare("INSERT INTO workers (id, inventory, registered_ms, last_heartbeat_ms, healthy) "
                   "VALUES (?1, ?2, ?3, ?3, 1) ON CONFLICT(id) DO UPDATE SET inventory = ?2, "
                   "last_heartbeat_ms = ?3, healthy = 1"));
  up.Bind(1, id).BindBlob(2, inventory.SerializeAsString()).Bind(3, now_ms);
  RETURN_IF_ERROR(up.Run());
  // A re-registering worker lost whatever it held: requeue its leases now.
  ASSIGN_OR_RETURN(
      auto rq, db_->Prepare("UPDATE tasks SET state = 'queued', worker_id = NULL, updated_ms = ? "
                            "WHERE worker_id = ? AND state = 'leased'"));
  rq.Bind(1, now_ms).Bind(2, id);
  RETURN_IF_ERROR(rq.Run());
  RETURN_IF_ERROR(tx->Commit());
  Bump();
  return id;
}

absl::StatusOr<std::vector<v1::WorkerInfo>> JobStore::ListWorkers(int64_t now_ms,
                                                                  int64_t alive_ms) {
  ASSIGN_OR_RETURN(Reader reader, Reader::Take(this));
  Db* db = reader.db();
  ASSIGN_OR_RETURN(
      auto q,
      db->Prepare("SELECT w.id, w.inventory, w.last_heartbeat_ms, w.healthy, "
                  "(SELECT COUNT(*) FROM tasks t WHERE t.worker_id = w.id AND t.state = 'leased') "
                  "FROM workers w ORDER BY w.registered_ms, w.id"));
  std::vector<v1::WorkerInfo> out;
  while (true) {
    ASSIGN_OR_RETURN(bool row, q.Step());
    if (!row) break;
    v1::WorkerInfo w;
    w.set_id(q.Text(0));
    w.mutable_inventory()->ParseFromString(q.Text(1));
    w.set_last_heartbeat_unix_ms(q.Int(2));
    w.set_alive(q.Int(3) != 0 && now_ms - q.Int(2) <= alive_ms);
    w.set_leased_tasks(static_cast<int32_t>(q.Int(4)));
    out.push_back(std::move(w));
  }
  return out;
}

absl::StatusOr<std::vector<std::string>> JobStore::AliveWorkers(int64_t now_ms, int64_t alive_ms) {
  ASSIGN_OR_RETURN(Reader reader, Reader::Take(this));
  Db* db = reader.db();
  ASSIGN_OR_RETURN(
      auto q,
      db->Prepare(
          "SELECT id FROM workers WHERE healthy = 1 AND last_heartbeat_ms >= ? ORDER BY id"));
  q.Bind(1, now_ms - alive_ms);
  std::vector<std::string> ids;
  while (true) {
    ASSIGN_OR_RETURN(bool row, q.Step());
    if (!row) break;
    ids.push_back(q.Text(0));
  }
  return ids;
}

absl::StatusOr<int> JobStore::ExpireLeases(int64_t now_ms) {
  std::lock_guard lock(mu_);
  return ExpireLeasesLocked(now_ms);
}

absl::StatusOr<int> JobStore::ExpireLeasesLocked(int64_t now_ms) {
  ASSIGN_OR_RETURN(auto tx, Transaction::Begin(db_.get()));
  // Tasks out of attempts fail; the rest go back to the queue.
  ASSIGN_OR_RETURN(
      auto fail,
      db_->Prepare(
          "UPDATE tasks SET state = 'failed', updated_ms = ?1, worker_id = NULL, "
          "error = 'lease expired ' || attempts || ' times (worker lost)' "
          "WHERE state = 'leased' AND lease_expires_ms < ?1 AND attempts >= ?2 RETURNING job_id"));
  fail.Bind(1, now_ms).Bind(2, int64_t{options_.max_attempts});
  std::vector<std::string> failed_jobs;
  while (true) {
    ASSIGN_OR_RETURN(bool row, fail.Step());
    if (!row) break;
    failed_jobs.push_back(fail.Text(0));
  }
  ASSIGN_OR_RETURN(
      auto requeue,
      db_->Prepare("UPDATE tasks SET state = 'queued', worker_id = NULL, updated_ms = ?1 "
                   "WHERE state = 'leased' AND lease_expires_ms < ?1"));
  requeue.Bind(1, now_ms);
  RETURN_IF_ERROR(requeue.Run());
  int changed = static_cast<int>(db_->Changes() + failed_jobs.size());
  for (const auto& job : failed_jobs) RETURN_IF_ERROR(FinishJobIfDoneLocked(job, now_ms));
  RETURN_IF_ERROR(tx->Commit());
  if (changed) Bump();
  return changed;
}

absl::StatusOr<std::optional<v1::LeasedTask>> JobStore::LeaseTask(const std::string& worker_id,
                                                                  int64_t now_ms) {
  std::lock_guard lock(mu_);
  // Expiry is a write transaction: run it at most every kExpireEveryMs here
  // (the server's reaper runs it too), not on every lease.
  if (now_ms - last_expire_ms_ >= kExpireEveryMs || now_ms < last_expire_ms_) {
    RETURN_IF_ERROR(ExpireLeasesLocked(now_ms).status());
    last_expire_ms_ = now_ms;
  }
  ASSIGN_OR_RETURN(auto wq, db_->Prepare("SELECT inventory FROM workers WHERE id = ?"));
  wq.Bind(1, worker_id);
  ASSIGN_OR_RETURN(bool known, wq.Step());
  if (!known) return absl::NotFoundError(absl::StrCat("worker ", worker_id, " is not registered"));
  v1::Inventory inv;
  inv.ParseFromString(wq.Text(0));
  std::string archs = ",";
  for (const auto& d : inv.devices()) absl::StrAppend(&archs, d.arch(), ",");

  ASSIGN_OR_RETURN(auto tx, Transaction::Begin(db_.get()));
  ASSIGN_OR_RETURN(
      auto pick,
      db_->Prepare(
          "SELECT t.id, t.job_id, t.kind, t.payload_json FROM tasks t INDEXED BY tasks_by_queue "
          "JOIN jobs j ON j.id = t.job_id "
          "WHERE t.state = 'queued' AND j.state IN (?1, ?2) "
          "AND (t.required_arch = '' OR instr(?3, ',' || t.required_arch || ',') > 0) "
          "AND (t.once_per_worker = 0 OR NOT EXISTS (SELECT 1 FROM tasks o WHERE o.job_id = "
          "t.job_id "
          "     AND o.kind = t.kind AND o.worker_id = ?4 AND o.state IN ('leased','done'))) "
          "ORDER BY t.created_ms, t.seq LIMIT 1"));
  pick.Bind(1, int64_t{v1::JOB_STATE_QUEUED})
      .Bind(2, int64_t{v1::JOB_STATE_RUNNING})
      .Bind(3, archs)
      .Bind(4, worker_id);
  ASSIGN_OR_RETURN(bool row, pick.Step());
  if (!row) return std::optional<v1::LeasedTask>();
  v1::LeasedTask task;
  task.set_task_id(pick.Text(0));
  task.set_job_id(pick.Text(1));
  task.set_kind(pick.Text(2));
  task.set_payload_json(pick.Text(3));
  pick.Reset();
  task.set_lease_expires_unix_ms(now_ms + options_.lease_ms);
  ASSIGN_OR_RETURN(
      auto up,
      db_->Prepare("UPDATE tasks SET state = 'leased', worker_id = ?, lease_expires_ms = ?, "
                   "attempts = attempts + 1, updated_ms = ? WHERE id = ?"));
  up.Bind(1, worker_id)
      .Bind(2, task.lease_expires_unix_ms())
      .Bind(3, now_ms)
      .Bind(4, task.task_id());
  RETURN_IF_ERROR(up.Run());
  ASSIGN_OR_RETURN(
      auto uj,
      db_->Prepare("UPDATE jobs SET state = ?, updated_ms = ? WHERE id = ? AND state = ?"));
  uj.Bind(1, int64_t{v1::JOB_STATE_RUNNING})
      .Bind(2, now_ms)
      .Bind(3, task.job_id())
      .Bind(4, int64_t{v1::JOB_STATE_QUEUED});
  RETURN_IF_ERROR(uj.Run());
  RETURN_IF_ERROR(tx->Commit());
  Bump();
  return std::optional<v1::LeasedTask>(std::move(task));
}

absl::StatusOr<std::vector<std::string>> JobStore::Heartbeat(
    const std::string& worker_id, const std::vector<std::string>& task_ids, bool healthy,
    int64_t now_ms) {
  std::lock_guard lock(mu_);
  ASSIGN_OR_RETURN(auto tx, Transaction::Begin(db_.get()));
  ASSIGN_OR_RETURN(
      auto hb, db_->Prepare("UPDATE workers SET last_heartbeat_ms = ?, healthy = ? WHERE id = ?"));
  hb.Bind(1, now_ms).Bind(2, int64_t{healthy ? 1 : 0}).Bind(3, worker_id);
  RETURN_IF_ERROR(hb.Run());
  if (db_->Changes() == 0) {
    return absl::NotFoundError(absl::StrCat("worker ", worker_id, " is not registered"));
  }
  std::vector<std::string> revoked;
  for (const auto& id : task_ids) {
    ASSIGN_OR_RETURN(
        auto renew,
        db_->Prepare("UPDATE tasks SET lease_expires_ms = ? WHERE id = ? AND worker_id = ? "
                     "AND state = 'leased'"));
    renew.Bind(1, now_ms + options_.lease_ms).Bind(2, id).Bind(3, worker_id);
    RETURN_IF_ERROR(renew.Run());
    if (db_->Changes() == 0) revoked.push_back(id);
  }
  RETURN_IF_ERROR(tx->Commit());
  return revoked;
}

absl::StatusOr<bool> JobStore::ReportResult(const std::string& worker_id,
                                            const std::string& task_id, bool ok,
                                            const std::string& result_json,
                                            const std::string& error, int64_t now_ms) {
  std::lock_guard lock(mu_);
  ASSIGN_OR_RETURN(auto tx, Transaction::Begin(db_.get()));
  ASSIGN_OR_RETURN(
      auto up,
      db_->Prepare("UPDATE tasks SET state = ?, result_json = ?, error = ?, updated_ms = ? "
                   "WHERE id = ? AND worker_id = ? AND state = 'leased' RETURNING job_id"));
  up.Bind(1, ok ? "done" : "failed")
      .Bind(2, result_json)
      .Bind(3, error)
      .Bind(4, now_ms)
      .Bind(5, task_id)
      .Bind(6, worker_id);
  ASSIGN_OR_RETURN(bool row, up.Step());
  if (!row) return false;  // lease lost: someone else owns (or finished) it
  std::string job_id = up.Text(0);
  up.Reset();
  RETURN_IF_ERROR(FinishJobIfDoneLocked(job_id, now_ms));
  ASSIGN_OR_RETURN(auto touch, db_->Prepare("UPDATE jobs SET updated_ms = ? WHERE id = ?"));
  touch.Bind(1, now_ms).Bind(2, job_id);
  RETURN_IF_ERROR(touch.Run());
  RETURN_IF_ERROR(tx->Commit());
  Bump();
  return true;
}

absl::Status JobStore::FinishJobIfDoneLocked(const std::string& job_id, int64_t now_ms) {
  {
    // The planner finishes its own jobs.
    ASSIGN_OR_RETURN(auto k, db_->Prepare("SELECT kind FROM jobs WHERE id = ?"));
    k.Bind(1, job_id);
    ASSIGN_OR_RETURN(bool found, k.Step());
    if (found && k.Int(0) == v1::JOB_KIND_TUNE) return absl::OkStatus();
  }
  ASSIGN_OR_RETURN(
      auto q,
      db_->Prepare("SELECT SUM(state IN ('queued','leased')), SUM(state = 'failed'), COUNT(*) "
                   "FROM tasks WHERE job_id = ?"));
  q.Bind(1, job_id);
  ASSIGN_OR_RETURN(bool row, q.Step());
  if (!row || q.Int(0) > 0) return absl::OkStatus();
  int64_t failed = q.Int(1), total = q.Int(2);
  // The job's result: every task's result, in order.
  nlohmann::json results = nlohmann::json::array();
  std::string first_error;
  ASSIGN_OR_RETURN(
      auto r,
      db_->Prepare(
          "SELECT worker_id, state, result_json, error FROM tasks WHERE job_id = ? ORDER BY seq"));
  r.Bind(1, job_id);
  while (true) {
    ASSIGN_OR_RETURN(bool more, r.Step());
    if (!more) break;
    nlohmann::json entry = {{"worker_id", r.Text(0)}, {"state", r.Text(1)}};
    auto parsed = nlohmann::json::parse(r.Text(2), nullptr, false);
    if (!parsed.is_discarded()) entry["result"] = parsed;
    if (!r.Text(3).empty()) {
      entry["error"] = r.Text(3);
      if (first_error.empty()) first_error = r.Text(3);
    }
    results.push_back(entry);
  }
  ASSIGN_OR_RETURN(
      auto up, db_->Prepare("UPDATE jobs SET state = ?, error = ?, result_json = ?, updated_ms = ? "
                            "WHERE id = ? AND state IN (?, ?)"));
  std::string error =
      failed ? absl::StrCat(failed, " of ", total, " tasks failed: ", first_error) : "";
  up.Bind(1, int64_t{failed ? v1::JOB_STATE_FAILED : v1::JOB_STATE_SUCCEEDED})
      .Bind(2, error)
      .Bind(3, nlohmann::json({{"tasks", results}}).dump())
      .Bind(4, now_ms)
      .Bind(5, job_id)
      .Bind(6, int64_t{v1::JOB_STATE_QUEUED})
      .Bind(7, int64_t{v1::JOB_STATE_RUNNING});
  return up.Run();
}

absl::Status JobStore::AddCandidate(const std::string& id, const std::string& job_id,
                                    const std::string& parent_id, const std::string& source,
                                    const std::string& detail_json, int64_t now_ms) {
  std::lock_guard lock(mu_);
  ASSIGN_OR_RETURN(auto tx, Transaction::Begin(db_.get()));
  ASSIGN_OR_RETURN(
      auto ins,
      db_->Prepare(
          "INSERT INTO candidates (id, job_id, parent_id, source, detail_json, created_ms) "
          "VALUES (?,?,?,?,?,?) ON CONFLICT(id) DO NOTHING"));
  ins.Bind(1, id)
      .Bind(2, job_id)
      .Bind(3, parent_id)
      .Bind(4, source)
      .Bind(5, detail_json)
      .Bind(6, now_ms);
  RETURN_IF_ERROR(ins.Run());
  RETURN_IF_ERROR(tx->Commit());
  Bump();
  return absl::OkStatus();
}

absl::Status JobStore::AddTrajectoryStep(const std::string& job_id, int step,
                                         const std::string& candidate_id, const std::string& action,
                                         const std::string& detail_json, double reward,
                                         int64_t now_ms) {
  std::lock_guard lock(mu_);
  ASSIGN_OR_RETURN(auto tx, Transaction::Begin(db_.get()));
  ASSIGN_OR_RETURN(
      auto ins,
      db_->Prepare(
          "INSERT INTO trajectory_steps (job_id, step, candidate_id, action, detail_json, reward, "
          "created_ms) VALUES (?,?,?,?,?,?,?)"));
  ins.Bind(1, job_id)
      .Bind(2, int64_t{step})
      .Bind(3, candidate_id)
      .Bind(4, action)
      .Bind(5, detail_json)
      .Bind(6, reward)
      .Bind(7, now_ms);
  RETURN_IF_ERROR(ins.Run());
  RETURN_IF_ERROR(tx->Commit());
  Bump();
  return absl::OkStatus();
}

absl::StatusOr<int64_t> JobStore::CountRows(const std::string& table) {
  static const char* const kTables[] = {
      "jobs", "tasks", "workers", "candidates", "trajectory_steps", "artifacts"};
  bool known = false;
  for (const char* t : kTables) known |= table == t;
  if (!known) return absl::InvalidArgumentError(absl::StrCat("no table ", table));
  ASSIGN_OR_RETURN(Reader reader, Reader::Take(this));
  Db* db = reader.db();
  ASSIGN_OR_RETURN(auto q, db->Prepare(absl::StrCat("SELECT COUNT(*) FROM ", table)));
  ASSIGN_OR_RETURN(bool row, q.Step());
  return row ? q.Int(0) : 0;
}

absl::StatusOr<std::string> JobStore::AddTask(const std::string& job_id, const NewTask& t,
                                              int64_t now_ms) {
  std::lock_guard lock(mu_);
  ASSIGN_OR_RETURN(auto job, GetJobLocked(job_id, false));
  if (Finished(job.state())) {
    return absl::FailedPreconditionError(absl::StrCat("job ", job_id, " is finished"));
  }
  std::string id = NewId("t");
  ASSIGN_OR_RETURN(auto tx, Transaction::Begin(db_.get()));
  ASSIGN_OR_RETURN(
      auto ins,
      db_->Prepare("INSERT INTO tasks (id, job_id, seq, kind, payload_json, required_arch, "
                   "once_per_worker, state, created_ms, updated_ms) VALUES (?1, ?2, "
                   "(SELECT IFNULL(MAX(seq), -1) + 1 FROM tasks WHERE job_id = ?2), ?3, ?4, ?5, "
                   "?6, 'queued', ?7, ?7)"));
  ins.Bind(1, id)
      .Bind(2, job_id)
      .Bind(3, t.kind)
      .Bind(4, t.payload_json)
      .Bind(5, t.required_arch)
      .Bind(6, int64_t{t.once_per_worker ? 1 : 0})
      .Bind(7, now_ms);
  RETURN_IF_ERROR(ins.Run());
  ASSIGN_OR_RETURN(auto touch, db_->Prepare("UPDATE jobs SET updated_ms = ? WHERE id = ?"));
  touch.Bind(1, now_ms).Bind(2, job_id);
  RETURN_IF_ERROR(touch.Run());
  RETURN_IF_ERROR(tx->Commit());
  Bump();
  return id;
}

absl::StatusOr<JobStore::TaskState> JobStore::GetTask(const std::string& task_id) {
  ASSIGN_OR_RETURN(Reader reader, Reader::Take(this));
  Db* db = reader.db();
  ASSIGN_OR_RETURN(auto q, db->Prepare("SELECT state, result_json, error FROM tasks WHERE id = ?"));
  q.Bind(1, task_id);
  ASSIGN_OR_RETURN(bool row, q.Step());
  if (!row) return absl::NotFoundError(absl::StrCat("task ", task_id, " does not exist"));
  return TaskState{q.Text(0), q.Text(1), q.Text(2)};
}

absl::StatusOr<std::vector<JobStore::TaskRow>> JobStore::ListTasks(const std::string& job_id,
                                                                   const std::string& kind) {
  std::lock_guard lock(mu_);
  ASSIGN_OR_RETURN(auto q,
                   db_->Prepare("SELECT id, state, payload_json FROM tasks WHERE job_id = ? "
                                "AND kind = ? ORDER BY seq"));
  q.Bind(1, job_id).Bind(2, kind);
  std::vector<TaskRow> out;
  while (true) {
    ASSIGN_OR_RETURN(bool row, q.Step());
    if (!row) break;
    out.push_back({q.Text(0), q.Text(1), q.Text(2)});
  }
  return out;
}

absl::Status JobStore::SetJobProgress(const std::string& job_id, const std::string& result_json,
                                      int64_t now_ms) {
  std::lock_guard lock(mu_);
  ASSIGN_OR_RETURN(auto tx, Transaction::Begin(db_.get()));
  ASSIGN_OR_RETURN(auto up, db_->Prepare("UPDATE jobs SET result_json = ?, updated_ms = ?, "
                                         "state = ? WHERE id = ? AND state IN (?, ?)"));
  up.Bind(1, result_json)
      .Bind(2, now_ms)
      .Bind(3, int64_t{v1::JOB_STATE_RUNNING})
      .Bind(4, job_id)
      .Bind(5, int64_t{v1::JOB_STATE_QUEUED})
      .Bind(6, int64_t{v1::JOB_STATE_RUNNING});
  RETURN_IF_ERROR(up.Run());
  RETURN_IF_ERROR(tx->Commit());
  Bump();
  return absl::OkStatus();
}

absl::Status JobStore::FinishJob(const std::string& job_id, bool ok, const std::string& result_json,
                                 const std::string& error, int64_t now_ms) {
  std::lock_guard lock(mu_);
  ASSIGN_OR_RETURN(auto tx, Transaction::Begin(db_.get()));
  ASSIGN_OR_RETURN(auto up, db_->Prepare("UPDATE jobs SET state = ?, result_json = ?, error = ?, "
                                         "updated_ms = ? WHERE id = ? AND state IN (?, ?)"));
  up.Bind(1, int64_t{ok ? v1::JOB_STATE_SUCCEEDED : v1::JOB_STATE_FAILED})
      .Bind(2, result_json)
      .Bind(3, error)
      .Bind(4, now_ms)
      .Bind(5, job_id)
      .Bind(6, int64_t{v1::JOB_STATE_QUEUED})
      .Bind(7, int64_t{v1::JOB_STATE_RUNNING});
  RETURN_IF_ERROR(up.Run());
  ASSIGN_OR_RETURN(auto ut, db_->Prepare("UPDATE tasks SET state = 'cancelled', updated_ms = ? "
                                         "WHERE job_id = ? AND state IN ('queued','leased')"));
  ut.Bind(1, now_ms).Bind(2, job_id);
  RETURN_IF_ERROR(ut.Run());
  RETURN_IF_ERROR(tx->Commit());
  Bump();
  return absl::OkStatus();
}

absl::StatusOr<std::vector<JobStore::StepRow>> JobStore::ListTrajectory(const std::string& job_id) {
  ASSIGN_OR_RETURN(Reader reader, Reader::Take(this));
  Db* db = reader.db();
  ASSIGN_OR_RETURN(auto q, db->Prepare("SELECT step, candidate_id, action, detail_json, reward, "
                                       "created_ms FROM trajectory_steps WHERE job_id = ? "
                                       "ORDER BY step"));
  q.Bind(1, job_id);
  std::vector<StepRow> out;
  while (true) {
    ASSIGN_OR_RETURN(bool row, q.Step());
    if (!row) break;
    out.push_back(
        {static_cast<int>(q.Int(0)), q.Text(1), q.Text(2), q.Text(3), q.Double(4), q.Int(5)});
  }
  return out;
}

// Read-only queries for the dashboard and result tools.

absl::StatusOr<std::vector<JobStore::CandidateRow>> JobStore::ListCandidates(
    const std::string& job_id) {
  ASSIGN_OR_RETURN(Reader reader, Reader::Take(this));
  Db* db = reader.db();
  ASSIGN_OR_RETURN(auto q, db->Prepare("SELECT id, job_id, parent_id, source, detail_json, "
                                       "created_ms FROM candidates WHERE job_id = ? "
                                       "ORDER BY created_ms, rowid"));
  q.Bind(1, job_id);
  std::vector<CandidateRow> out;
  while (true) {
    ASSIGN_OR_RETURN(bool row, q.Step());
    if (!row) break;
    out.push_back({q.Text(0), q.Text(1), q.Text(2), q.Text(3), q.Text(4), q.Int(5)});
  }
  return out;
}

absl::StatusOr<std::string> JobStore::AddArtifact(const std::string& candidate_id,
                                                  const std::string& target,
                                                  const std::string& kind, const std::string& bytes,
                                                  const std::string& metadata_json,
                                                  int64_t now_ms) {
  std::lock_guard lock(mu_);
  std::string id = NewId("a");
  ASSIGN_OR_RETURN(auto tx, Transaction::Begin(db_.get()));
  ASSIGN_OR_RETURN(auto ins, db_->Prepare("INSERT INTO artifacts (id, candidate_id, target, kind, "
                                          "bytes, metadata_json, created_ms) "
                                          "VALUES (?,?,?,?,?,?,?)"));
  ins.Bind(1, id).Bind(2, candidate_id).Bind(3, target).Bind(4, kind);
  ins.BindBlob(5, bytes).Bind(6, metadata_json).Bind(7, now_ms);
  RETURN_IF_ERROR(ins.Run());
  RETURN_IF_ERROR(tx->Commit());
  Bump();
  return id;
}

absl::StatusOr<std::vector<JobStore::ArtifactRow>> JobStore::ListArtifacts(
    const std::string& job_id, const std::string& candidate_id) {
  ASSIGN_OR_RETURN(Reader reader, Reader::Take(this));
  Db* db = reader.db();
  ASSIGN_OR_RETURN(auto q, db->Prepare("SELECT a.id, a.candidate_id, a.target, a.kind, a.bytes, "
                                       "a.metadata_json, a.created_ms FROM artifacts a "
                                       "JOIN candidates c ON c.id = a.candidate_id "
                                       "WHERE c.job_id = ?1 AND (?2 = '' OR a.candidate_id = ?2) "
                                       "ORDER BY a.created_ms, a.rowid"));
  q.Bind(1, job_id).Bind(2, candidate_id);
  std::vector<ArtifactRow> out;
  while (true) {
    ASSIGN_OR_RETURN(bool row, q.Step());
    if (!row) break;
    out.push_back({q.Text(0), q.Text(1), q.Text(2), q.Text(3), q.Text(4), q.Text(5), q.Int(6)});
  }
  return out;
}

}  // namespace argus::store
