// store/store.h: the durable job store of argus-server, over SQLite.
//
// Holds jobs, their tasks (units of work leased to workers), workers,
// candidates, trajectory steps and artifacts. Every state change runs in one
// transaction and is committed (WAL, synchronous=FULL) before the call
// returns, so a caller that acknowledges after a successful return never
// acknowledges something a crash could lose. The schema is versioned; Open()
// applies pending migrations in order.
//
// Leases: a leased task carries an expiry time. ExpireLeases() (called by the
// server's reaper, and by lease requests at most every 100 ms) puts expired
// tasks back in the queue; a task whose lease expired max_attempts times
// fails. Queued tasks are handed out oldest first (task creation time, then
// their order in the job), through an index, so a lease costs the same with
// 10 or 10,000 tasks queued.
//
// Reads and writes: writes go through one connection under a mutex; reads
// (GetJob, ListJobs, the dashboard's queries, the planner's polls) take one
// of `StoreOptions::readers` query-only connections, each in its own read
// transaction, so under WAL a long listing never holds up a lease, a report
// or another read, and a write never waits for a reader.
//
// Changes: every committed write bumps version(); WaitForChange() blocks on a
// condition variable until it moves, so waiters (long-polling leases,
// WatchJob streams, planner threads waiting for a result) cost nothing while
// nothing happens.
//
// Thread safety: all methods are thread-safe.
#ifndef ARGUS_STORE_STORE_H_
#define ARGUS_STORE_STORE_H_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "argus/v1/jobs.pb.h"
#include "argus/v1/workers.pb.h"
#include "store/sqlite.h"

namespace argus::store {

inline constexpr int kSchemaVersion = 2;

// A task to create with a job.
struct NewTask {
  std::string kind;              // probe, candidate
  std::string payload_json;      // what the worker runs
  std::string required_arch;     // empty: any worker
  bool once_per_worker = false;  // a worker takes at most one task of this kind in the job
};

struct StoreOptions {
  int64_t lease_ms = 30'000;
  int max_attempts = 3;
  int readers = 4;  // read connections (a read waits only when all are busy)
  // An existing zero-byte file is refused (a truncated store would otherwise
  // silently become an empty one) unless the operator asks for a new store
  // there. A missing file is always created.
  bool new_store = false;
};

// What ListJobs returns: one page, newest first.
struct JobQuery {
  v1::JobState state = v1::JOB_STATE_UNSPECIFIED;  // UNSPECIFIED: any
  v1::JobKind kind = v1::JOB_KIND_UNSPECIFIED;     // UNSPECIFIED: any
  int limit = 100;                                 // clamped to [1, 10,000]
  // A previous page's next_page_token: the page starts after that job.
  std::string page_token;
  // The page ends before its jobs' serialized size would pass this (0: no
  // bound); it always holds at least one job, so paging always progresses.
  int64_t max_bytes = 0;
  // Set: only the jobs whose spec names this client (a client token lists
  // its own jobs).
  std::optional<std::string> client;
};
struct JobPage {
  std::vector<v1::Job> jobs;    // without tasks
  std::string next_page_token;  // empty: no more jobs
};

class JobStore {
 public:
  // Opens the store and checks it (PRAGMA quick_check): a damaged file is
  // refused with FAILED_PRECONDITION naming the file and what is wrong,
  // before anything reads or writes it.
  static absl::StatusOr<std::unique_ptr<JobStore>> Open(const std::string& path,
                                                        StoreOptions options = {});

  // Jobs.
  absl::StatusOr<v1::Job> CreateJob(const v1::JobSpec& spec, const std::vector<NewTask>& tasks,
                                    int64_t now_ms, int64_t deadline_ms);
  absl::StatusOr<v1::Job> GetJob(const std::string& id, bool with_tasks = true);
  // A malformed page token is kInvalidArgument.
  absl::StatusOr<JobPage> ListJobs(const JobQuery& query);
  // The first page of up to `limit` jobs in `state`.
  absl::StatusOr<std::vector<v1::Job>> ListJobs(int limit, v1::JobState state);
  absl::StatusOr<v1::Job> CancelJob(const std::string& id, int64_t now_ms);
  // Fails jobs whose deadline has passed; returns their ids.
  absl::StatusOr<std::vector<std::string>> FailOverdueJobs(int64_t now_ms);
  // Number of jobs not yet finished whose spec names `client`.
  absl::StatusOr<int64_t> CountActiveJobs(const std::string& client);

  // Workers.
  absl::StatusOr<std::string> RegisterWorker(const v1::Inventory& inventory,
                                             const std::string& requested_id, int64_t now_ms);
  absl::StatusOr<std::vector<v1::WorkerInfo>> ListWorkers(int64_t now_ms, int64_t alive_ms);
  // Ids of workers whose last heartbeat is within alive_ms of now.
  absl::StatusOr<std::vector<std::string>> AliveWorkers(int64_t now_ms, int64_t alive_ms);

  // Leases.
  absl::StatusOr<std::optional<v1::LeasedTask>> LeaseTask(const std::string& worker_id,
                                                          int64_t now_ms);
  // Renews the leases the worker still holds; returns the ids it no longer holds.
  absl::StatusOr<std::vector<std::string>> Heartbeat(const std::string& worker_id,
                                                     const std::vector<std::string>& task_ids,
                                                     bool healthy, int64_t now_ms);
  // Returns the number of tasks put back in the queue (or failed after too many tries).
  absl::StatusOr<int> ExpireLeases(int64_t now_ms);
  // Records a result; false when the worker no longer held the lease.
  absl::StatusOr<bool> ReportResult(const std::string& worker_id, const std::string& task_id,
                                    bool ok, const std::string& result_json,
                                    const std::string& error, int64_t now_ms);

  // Candidates, trajectory steps and artifacts (used by the planner).
  // AddCandidate is idempotent: a planner retrying a step after a store
  // error adds the candidate its first attempt may have committed.
  absl::Status AddCandidate(const std::string& id, const std::string& job_id,
                            const std::string& parent_id, const std::string& source,
                            const std::string& detail_json, int64_t now_ms);
  absl::Status AddTrajectoryStep(const std::string& job_id, int step,
                                 const std::string& candidate_id, const std::string& action,
                                 const std::string& detail_json, double reward, int64_t now_ms);
  absl::StatusOr<int64_t> CountRows(const std::string& table);

  // Planner-driven jobs (kind TUNE): the store never finishes them when their
  // tasks are done; the planner adds tasks as it goes and finishes the job.
  absl::StatusOr<std::string> AddTask(const std::string& job_id, const NewTask& task,
                                      int64_t now_ms);
  struct TaskState {
    std::string state, result_json, error;
  };
  absl::StatusOr<TaskState> GetTask(const std::string& task_id);
  struct TaskRow {
    std::string id, state, payload_json;
  };
  // A job's tasks of one kind in the order they were added (the planner
  // finds the candidate a previous run of the job left in flight here).
  absl::StatusOr<std::vector<TaskRow>> ListTasks(const std::string& job_id,
                                                 const std::string& kind);
  // Stores the job's progress summary (and moves it to RUNNING).
  absl::Status SetJobProgress(const std::string& job_id, const std::string& result_json,
                              int64_t now_ms);
  // Finishes an unfinished job; a no-op on a finished one (cancelled meanwhile).
  absl::Status FinishJob(const std::string& job_id, bool ok, const std::string& result_json,
                         const std::string& error, int64_t now_ms);
  struct StepRow {
    int step = 0;
    std::string candidate_id, action, detail_json;
    double reward = 0;
    int64_t created_ms = 0;
  };
  // A job's trajectory steps in step order (the planner's memory and the
  // dashboard's plot both read them here).
  absl::StatusOr<std::vector<StepRow>> ListTrajectory(const std::string& job_id);

  // Increases whenever anything changes.
  int64_t version() const { return version_.load(); }
  // Blocks until version() differs from `seen`, WakeWaiters() is called or
  // `deadline` passes; returns version().
  int64_t WaitForChange(int64_t seen, std::chrono::steady_clock::time_point deadline);
  // Wakes every WaitForChange() (e.g. at shutdown, so waiters see it at once).
  void WakeWaiters();

  // Read-only queries for the dashboard and result tools (clients/).
  struct CandidateRow {
    std::string id, job_id, parent_id, source, detail_json;
    int64_t created_ms = 0;
  };
  // A job's candidates in creation order.
  absl::StatusOr<std::vector<CandidateRow>> ListCandidates(const std::string& job_id);

  // Artifacts: a compiled kernel (PTX, code object) or other file made for a
  // candidate, with its metadata (codegen's JSON). Returns the new id.
  struct ArtifactRow {
    std::string id, candidate_id, target, kind, bytes, metadata_json;
    int64_t created_ms = 0;
  };
  absl::StatusOr<std::string> AddArtifact(const std::string& candidate_id,
                                          const std::string& target, const std::string& kind,
                                          const std::string& bytes,
                                          const std::string& metadata_json, int64_t now_ms);
  // The artifacts of a job's candidates (of one candidate if candidate_id is
  // not empty), oldest first.
  absl::StatusOr<std::vector<ArtifactRow>> ListArtifacts(const std::string& job_id,
                                                         const std::string& candidate_id);

 private:
  // A read connection, held for one read transaction (a consistent snapshot).
  class Reader {
   public:
    static absl::StatusOr<Reader> Take(JobStore* store);
    Reader(Reader&& other) noexcept : store_(other.store_), db_(std::move(other.db_)) {}
    ~Reader();
    Db* db() { return db_.get(); }

   private:
    Reader(JobStore* store, std::unique_ptr<Db> db) : store_(store), db_(std::move(db)) {}
    JobStore* store_;
    std::unique_ptr<Db> db_;
  };

  JobStore(std::unique_ptr<Db> db, StoreOptions options) : db_(std::move(db)), options_(options) {}
  absl::Status Migrate();
  absl::Status OpenReaders(const std::string& path);
  // Reads a job on `db` (the writer under mu_, or a Reader's).
  static absl::StatusOr<v1::Job> GetJobOn(Db* db, const std::string& id, bool with_tasks);
  absl::StatusOr<v1::Job> GetJobLocked(const std::string& id, bool with_tasks) {
    return GetJobOn(db_.get(), id, with_tasks);
  }
  absl::Status FinishJobIfDoneLocked(const std::string& job_id, int64_t now_ms);
  absl::StatusOr<int> ExpireLeasesLocked(int64_t now_ms);
  void Bump();

  std::mutex mu_;
  std::unique_ptr<Db> db_;
  StoreOptions options_;
  std::atomic<int64_t> version_{0};
  static constexpr int64_t kExpireEveryMs = 100;
  int64_t last_expire_ms_ = 0;  // guarded by mu_
  std::mutex readers_mu_;
  std::condition_variable readers_cv_;
  std::vector<std::unique_ptr<Db>> readers_;  // the idle ones; guarded by readers_mu_
  std::mutex change_mu_;
  std::condition_variable change_cv_;
  int64_t wakeups_ = 0;  // guarded by change_mu_
};

// A fresh random id with a prefix, e.g. "j-3f9a0c1d2b4e5f60".
std::string NewId(const std::string& prefix);

}  // namespace argus::store

#endif  // ARGUS_STORE_STORE_H_
