#include "server/services.h"

#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "nlohmann/json.hpp"
#include "planner/planner.h"
#include "proto/status.h"
#include "server/auth.h"
#include "server/clock.h"
#include "server/limits.h"
#include "spdlog/spdlog.h"

namespace argus::server {
namespace {

using grpc::ServerContext;
using grpc::Status;

// How long a worker may go without a heartbeat and still count as alive.
int64_t AliveMs(const ServerOptions& o) { return 3 * o.heartbeat_ms; }

bool Finished(v1::JobState s) {
  return s == v1::JOB_STATE_SUCCEEDED || s == v1::JOB_STATE_FAILED || s == v1::JOB_STATE_CANCELLED;
}

Status Invalid(const std::string& msg) { return Status(grpc::INVALID_ARGUMENT, msg); }

// What a read-only view (ServerOptions::read_only) answers a change.
Status ReadOnly(const ServerOptions& o) {
  return Status(grpc::FAILED_PRECONDITION,
                absl::StrCat("the store ", o.db_path,
                             " is open read-only here, as no server runs it (an embedded argus "
                             "tune stops with Ctrl-C; to change jobs, start argus-server --db ",
                             o.db_path, " and pass --server)"));
}

// Every handler starts here: refuse calls without the right token.
#define AUTHORIZE(ctx, role, name)                                                            \
  do {                                                                                        \
    if (Status auth_st = Authorize(options_, ctx, role, name); !auth_st.ok()) return auth_st; \
  } while (0)

RequestLimits Limits(const ServerOptions& o) { return {o.max_source_bytes, o.max_result_bytes}; }

// What one answer may hold: half the message limit, and under the 4 MiB a
// gRPC client accepts by default, so that no client needs a larger limit.
int64_t ResponseBudget(const ServerOptions& o) {
  return std::min<int64_t>(o.max_message_bytes / 2, 3 << 20);
}

// Refuses an id longer than any the server hands out.
#define CHECK_ID(field, value)                                                   \
  do {                                                                           \
    if (auto id_st = CheckSize(field, (value).size(), kMaxIdBytes); !id_st.ok()) \
      return ToGrpc(id_st);                                                      \
  } while (0)

// Whether `who` may see the job: its submitter or an admin (on an open server
// everyone). Others are told it does not exist, as for an unknown id.
Status CheckOwner(const ServerOptions& o, const Principal& who, const v1::Job& job) {
  if (!o.auth || !o.auth->enabled() || who.admin || job.spec().client() == who.name) {
    return Status::OK;
  }
  return Status(grpc::NOT_FOUND, absl::StrCat("job ", job.id(), " does not exist"));
}

// A worker acts only as ids of its own credential (server/auth.h).
Status CheckWorkerId(const ServerOptions& o, const ServerContext* ctx, const Principal& who,
                     const std::string& field, const std::string& worker_id) {
  std::string prefix = WorkerIdPrefix(WorkerCredential(o, ctx, who));
  if (prefix.empty() || absl::StartsWith(worker_id, prefix)) return Status::OK;
  return Status(grpc::PERMISSION_DENIED,
                absl::StrCat(field, ": '", worker_id,
                             "' is not a worker id of this credential (its ids start with '",
                             prefix, "'); a worker acts only under the id it registered"));
}

// Input bounds a job must respect before anything is stored (server/limits.h).
Status CheckLimits(const v1::JobSpec& spec, const ServerOptions& o) {
  if (auto st = CheckJobSpec(spec, Limits(o)); !st.ok()) return ToGrpc(st);
  if (spec.max_candidates() < 0) return Invalid("spec.max_candidates: must not be negative");
  if (spec.max_candidates() > o.max_candidates) {
    return Invalid(absl::StrCat("spec.max_candidates: ", spec.max_candidates(), ", the limit is ",
                                o.max_candidates, " (--max_candidates)"));
  }
  return Status::OK;
}

}  // namespace

namespace {

// The planner's summary (result_json) of a tune job as TuneProgress.
void FillTuneProgress(const v1::Job& job, int default_max_candidates, v1::TuneProgress* p) {
  p->set_max_candidates(job.spec().max_candidates() > 0 ? job.spec().max_candidates()
                                                        : default_max_candidates);
  for (const auto& t : job.tasks()) {
    if (t.state() == "queued" || t.state() == "leased") p->set_in_flight(p->in_flight() + 1);
  }
  auto r = nlohmann::json::parse(job.result_json(), nullptr, false);
  if (!r.is_object()) return;
  auto num = [&](const char* key) {
    auto it = r.find(key);
    return it != r.end() && it->is_number_integer() ? it->get<int32_t>() : 0;
  };
  p->set_tried(num("tried"));
  p->set_verified(num("verified"));
  p->set_rejected(num("rejected"));
  p->set_measured_ok(num("measured_ok"));
  if (auto t = r.find("target"); t != r.end() && t->is_string()) p->set_target(*t);
  if (auto b = r.find("best"); b != r.end() && b->is_object()) {
    p->set_best_ratio(b->value("ratio", 0.0));
    p->set_best_candidate_id(b->value("candidate_id", ""));
  }
  if (auto l = r.find("last"); l != r.end() && l->is_object()) {
    std::string line = absl::StrCat("step ", l->value("step", 0), " ", l->value("action", ""), " ",
                                    l->value("config", ""), ": ", l->value("outcome", ""));
    if (l->value("outcome", "") == "ok") {
      absl::StrAppend(&line, absl::StrFormat(" %.3fx", l->value("ratio", 0.0)));
    }
    p->set_last(line);
  }
}

}  // namespace

v1::JobEvent MakeJobEvent(const v1::Job& job, const std::string& message,
                          int default_max_candidates) {
  v1::JobEvent ev;
  ev.set_job_id(job.id());
  ev.set_state(job.state());
  ev.set_tasks_total(job.tasks_size());
  for (const auto& t : job.tasks()) {
    if (t.state() == "done") ev.set_tasks_done(ev.tasks_done() + 1);
    if (t.state() == "failed") ev.set_tasks_failed(ev.tasks_failed() + 1);
  }
  ev.set_message(message);
  ev.set_unix_ms(NowMs());
  // A finished job's elapsed time stops at its last change.
  const int64_t until = Finished(job.state()) ? job.updated_unix_ms() : ev.unix_ms();
  ev.set_elapsed_ms(std::max<int64_t>(0, until - job.created_unix_ms()));
  if (job.deadline_unix_ms() > 0) {
    ev.set_remaining_ms(
        Finished(job.state()) ? 0 : std::max<int64_t>(0, job.deadline_unix_ms() - ev.unix_ms()));
  }
  if (job.spec().kind() == v1::JOB_KIND_TUNE) {
    FillTuneProgress(job, default_max_candidates, ev.mutable_tune());
  }
  *ev.mutable_job() = job;
  return ev;
}

Status JobServiceImpl::SubmitJob(ServerContext* ctx, const v1::SubmitJobRequest* req,
                                 v1::SubmitJobResponse* resp) {
  Principal who;
  AUTHORIZE(ctx, Role::kClient, &who);
  if (options_.read_only) return ReadOnly(options_);
  v1::JobSpec spec = req->spec();
  if (!who.name.empty()) spec.set_client(who.name);  // the token says who submits
  if (auto st = CheckLimits(spec, options_); !st.ok()) return st;
  int64_t now = NowMs();
  if (spec.deadline_ms() < 0) return Invalid("spec.deadline_ms: must not be negative");
  if (spec.deadline_ms() > options_.max_deadline_ms) {
    resp->add_notices(absl::StrCat("spec.deadline_ms: ", spec.deadline_ms(),
                                   " is past the server's limit; clamped to ",
                                   options_.max_deadline_ms, " (--max_deadline_ms)"));
    spec.set_deadline_ms(options_.max_deadline_ms);
  }
  if (options_.max_concurrent_jobs_per_client > 0) {
    auto active = store_->CountActiveJobs(spec.client());
    if (!active.ok()) return ToGrpc(active.status());
    if (*active >= options_.max_concurrent_jobs_per_client) {
      return Status(
          grpc::RESOURCE_EXHAUSTED,
          absl::StrCat("client '", spec.client(), "' already has ", *active,
                       " unfinished jobs (limit ", options_.max_concurrent_jobs_per_client, ")"));
    }
  }
  std::vector<store::NewTask> tasks;
  switch (spec.kind()) {
    case v1::JOB_KIND_PROBE: {
      auto alive = store_->AliveWorkers(now, AliveMs(options_));
      if (!alive.ok()) return ToGrpc(alive.status());
      if (spec.probe_workers() < 0) return Invalid("spec.probe_workers: must not be negative");
      int n = spec.probe_workers() ? spec.probe_workers() : static_cast<int>(alive->size());
      if (n == 0) {
        return Status(grpc::FAILED_PRECONDITION,
                      "no workers are connected: start one with argus-worker --server ADDRESS");
      }
      if (n > 1024) return Invalid("spec.probe_workers: at most 1024");
      for (int i = 0; i < n; ++i) tasks.push_back({"probe", "{}", "", true});
      break;
    }
    case v1::JOB_KIND_TUNE: {
      if (!planner_) return Status(grpc::UNIMPLEMENTED, "this server runs no planner");
      if (auto st = planner_->Validate(spec); !st.ok()) return ToGrpc(st);
      break;  // no tasks yet: the planner adds candidates as it goes
    }
    default:
      return Invalid("spec.kind: unknown job kind (PROBE or TUNE)");
  }
  int64_t deadline = now + (spec.deadline_ms() ? spec.deadline_ms() : options_.default_deadline_ms);
  auto job = store_->CreateJob(spec, tasks, now, deadline);
  if (!job.ok()) return ToGrpc(job.status());
  spdlog::info("job {} submitted: kind {} with {} tasks", job->id(), v1::JobKind_Name(spec.kind()),
               tasks.size());
  for (const auto& notice : resp->notices()) spdlog::info("job {}: {}", job->id(), notice);
  if (spec.kind() == v1::JOB_KIND_TUNE) planner_->Start(job->id());
  *resp->mutable_job() = std::move(*job);
  return Status::OK;
}

Status JobServiceImpl::GetJob(ServerContext* ctx, const v1::GetJobRequest* req, v1::Job* resp) {
  Principal who;
  AUTHORIZE(ctx, Role::kClient, &who);
  if (req->id().empty()) return Invalid("id: required");
  CHECK_ID("id", req->id());
  auto job = store_->GetJob(req->id());
  if (!job.ok()) return ToGrpc(job.status());
  if (Status st = CheckOwner(options_, who, *job); !st.ok()) return st;
  *resp = std::move(*job);
  FitJob(resp, ResponseBudget(options_));
  return Status::OK;
}

Status JobServiceImpl::ListJobs(ServerContext* ctx, const v1::ListJobsRequest* req,
                                v1::ListJobsResponse* resp) {
  Principal who;
  AUTHORIZE(ctx, Role::kClient, &who);
  store::JobQuery query;
  query.state = req->state();
  query.kind = req->kind();
  query.limit =
      req->limit() > 0 ? std::min(req->limit(), options_.list_page_size) : options_.list_page_size;
  query.page_token = req->page_token();
  query.max_bytes = ResponseBudget(options_);
  // A client token lists its own jobs.
  if (options_.auth && options_.auth->enabled() && !who.admin) query.client = who.name;
  auto page = store_->ListJobs(query);
  if (!page.ok()) return ToGrpc(page.status());
  for (auto& j : page->jobs) {
    FitJob(&j, ResponseBudget(options_));
    *resp->add_jobs() = std::move(j);
  }
  resp->set_next_page_token(page->next_page_token);
  return Status::OK;
}

Status JobServiceImpl::CancelJob(ServerContext* ctx, const v1::CancelJobRequest* req,
                                 v1::Job* resp) {
  Principal who;
  AUTHORIZE(ctx, Role::kClient, &who);
  if (req->id().empty()) return Invalid("id: required");
  CHECK_ID("id", req->id());
  if (options_.read_only) return ReadOnly(options_);
  auto owned = store_->GetJob(req->id(), false);
  if (!owned.ok()) return ToGrpc(owned.status());
  if (Status st = CheckOwner(options_, who, *owned); !st.ok()) return st;
  auto job = store_->CancelJob(req->id(), NowMs());
  if (!job.ok()) return ToGrpc(job.status());
  *resp = std::move(*job);
  return Status::OK;
}

Status JobServiceImpl::WatchJob(ServerContext* ctx, const v1::WatchJobRequest* req,
                                grpc::ServerWriter<v1::JobEvent>* writer) {
  Principal who;
  AUTHORIZE(ctx, Role::kClient, &who);
  if (req->id().empty()) return Invalid("id: required");
  CHECK_ID("id", req->id());
  // Each stream holds a server thread while it lasts: their number is bounded.
  if (watchers_.fetch_add(1) >= options_.max_watchers) {
    watchers_.fetch_sub(1);
    return Status(grpc::RESOURCE_EXHAUSTED,
                  absl::StrCat("already ", options_.max_watchers,
                               " WatchJob streams open (--max_watchers); poll GetJob instead"));
  }
  struct Release {
    std::atomic<int>* n;
    ~Release() { n->fetch_sub(1); }
  } release{&watchers_};
  if (auto owned = store_->GetJob(req->id(), false); owned.ok()) {
    if (Status st = CheckOwner(options_, who, *owned); !st.ok()) return st;
  }
  int64_t seen_version = -1;
  std::string last_sent;
  while (!ctx->IsCancelled() && !stopping_->load()) {
    int64_t version = store_->version();
    // A read-only view's store is written by another process, whose writes
    // this one's version does not count: look at every wake-up (500 ms).
    if (version != seen_version || options_.read_only) {
      seen_version = version;
      auto job = store_->GetJob(req->id());
      if (!job.ok()) return ToGrpc(job.status());
      FitJob(&*job, ResponseBudget(options_));
      v1::JobEvent ev = MakeJobEvent(*job, "", options_.planner.default_max_candidates);
      // Send only real changes (state, tasks added or finished, planner progress).
      std::string key = absl::StrCat(ev.state(), "/", ev.tasks_total(), "/", ev.tasks_done(), "/",
                                     ev.tasks_failed(), "/", job->updated_unix_ms());
      if (key != last_sent) {
        last_sent = key;
        if (!writer->Write(ev)) return Status::OK;  // client went away
      }
      if (Finished(job->state())) return Status::OK;
    }
    // Sleeps until the store changes; wakes at least every 500 ms to notice
    // a client gone away.
    store_->WaitForChange(version,
                          std::chrono::steady_clock::now() + std::chrono::milliseconds(500));
  }
  return Status(grpc::UNAVAILABLE, "server shutting down; watch again to resume");
}

Status JobServiceImpl::ListWorkers(ServerContext* ctx, const v1::ListWorkersRequest*,
                                   v1::ListWorkersResponse* resp) {
  AUTHORIZE(ctx, Role::kClient, nullptr);
  auto workers = store_->ListWorkers(NowMs(), AliveMs(options_));
  if (!workers.ok()) return ToGrpc(workers.status());
  for (auto& w : *workers) *resp->add_workers() = std::move(w);
  return Status::OK;
}

Status JobServiceImpl::ListArtifacts(ServerContext* ctx, const v1::ListArtifactsRequest* req,
                                     v1::ListArtifactsResponse* resp) {
  Principal who;
  AUTHORIZE(ctx, Role::kClient, &who);
  if (req->job_id().empty()) return Invalid("job_id: required");
  CHECK_ID("job_id", req->job_id());
  CHECK_ID("candidate_id", req->candidate_id());
  auto job = store_->GetJob(req->job_id(), false);
  if (!job.ok()) return ToGrpc(job.status());
  if (Status st = CheckOwner(options_, who, *job); !st.ok()) return st;
  auto rows = store_->ListArtifacts(req->job_id(), req->candidate_id());
  if (!rows.ok()) return ToGrpc(rows.status());
  for (auto& r : *rows) {
    v1::Artifact* a = resp->add_artifacts();
    a->set_id(r.id);
    a->set_candidate_id(r.candidate_id);
    a->set_target(r.target);
    a->set_kind(r.kind);
    a->set_bytes(std::move(r.bytes));
    a->set_metadata_json(r.metadata_json);
    a->set_created_unix_ms(r.created_ms);
  }
  return Status::OK;
}

Status WorkerServiceImpl::RegisterWorker(ServerContext* ctx, const v1::RegisterWorkerRequest* req,
                                         v1::RegisterWorkerResponse* resp) {
  Principal who;
  AUTHORIZE(ctx, Role::kWorker, &who);
  CHECK_ID("requested_id", req->requested_id());
  if (auto st = CheckInventory(req->inventory()); !st.ok()) return ToGrpc(st);
  std::string requested = req->requested_id();
  if (std::string prefix = WorkerIdPrefix(WorkerCredential(options_, ctx, who));
      !prefix.empty() && requested.empty()) {
    requested = prefix + store::NewId("w").substr(2);  // a fresh id of this credential
  }
  if (!requested.empty()) {
    if (Status st = CheckWorkerId(options_, ctx, who, "requested_id", requested); !st.ok()) {
      spdlog::warn("worker registration refused: {}", st.error_message());
      return st;
    }
  }
  auto id = store_->RegisterWorker(req->inventory(), requested, NowMs());
  if (!id.ok()) return ToGrpc(id.status());
  spdlog::info("worker {} registered from {} with {} devices", *id, req->inventory().hostname(),
               req->inventory().devices_size());
  resp->set_worker_id(*id);
  resp->set_lease_ms(options_.lease_ms);
  resp->set_heartbeat_ms(options_.heartbeat_ms);
  return Status::OK;
}

Status WorkerServiceImpl::LeaseTask(ServerContext* ctx, const v1::LeaseTaskRequest* req,
                                    v1::LeaseTaskResponse* resp) {
  Principal who;
  AUTHORIZE(ctx, Role::kWorker, &who);
  if (req->worker_id().empty()) return Invalid("worker_id: required");
  CHECK_ID("worker_id", req->worker_id());
  if (Status st = CheckWorkerId(options_, ctx, who, "worker_id", req->worker_id()); !st.ok()) {
    return st;
  }
  auto deadline = std::chrono::steady_clock::now() +
                  std::chrono::milliseconds(std::clamp<int64_t>(req->wait_ms(), 0, 30'000));
  int64_t seen_version = -1;
  auto last_try = std::chrono::steady_clock::now();
  while (true) {
    int64_t version = store_->version();
    auto now = std::chrono::steady_clock::now();
    // Re-query on any change, and every 500 ms so expired leases are found.
    if (version != seen_version || now - last_try > std::chrono::milliseconds(500)) {
      seen_version = version;
      last_try = now;
      auto task = store_->LeaseTask(req->worker_id(), NowMs());
      if (!task.ok()) return ToGrpc(task.status());
      if (task->has_value()) {
        resp->set_granted(true);
        *resp->mutable_task() = std::move(**task);
        spdlog::debug("task {} leased to {}", resp->task().task_id(), req->worker_id());
        return Status::OK;
      }
    }
    if (now >= deadline || ctx->IsCancelled() || stopping_->load()) break;
    store_->WaitForChange(version, std::min(deadline, last_try + std::chrono::milliseconds(500)));
  }
  resp->set_granted(false);
  return Status::OK;
}

Status WorkerServiceImpl::Heartbeat(ServerContext* ctx, const v1::HeartbeatRequest* req,
                                    v1::HeartbeatResponse* resp) {
  Principal who;
  AUTHORIZE(ctx, Role::kWorker, &who);
  if (auto st = CheckHeartbeat(*req); !st.ok()) return ToGrpc(st);
  if (Status st = CheckWorkerId(options_, ctx, who, "worker_id", req->worker_id()); !st.ok()) {
    return st;
  }
  std::vector<std::string> ids(req->task_ids().begin(), req->task_ids().end());
  auto revoked = store_->Heartbeat(req->worker_id(), ids, req->healthy(), NowMs());
  if (!revoked.ok()) return ToGrpc(revoked.status());
  for (auto& id : *revoked) resp->add_revoked_task_ids(id);
  return Status::OK;
}

Status WorkerServiceImpl::ReportResult(ServerContext* ctx, const v1::ReportResultRequest* req,
                                       v1::ReportResultResponse* resp) {
  Principal who;
  AUTHORIZE(ctx, Role::kWorker, &who);
  if (req->task_id().empty()) return Invalid("task_id: required");
  if (auto st = CheckReport(*req, Limits(options_)); !st.ok()) return ToGrpc(st);
  if (Status st = CheckWorkerId(options_, ctx, who, "worker_id", req->worker_id()); !st.ok()) {
    spdlog::warn("result for task {} refused: {}", req->task_id(), st.error_message());
    return st;
  }
  auto accepted = store_->ReportResult(req->worker_id(), req->task_id(), req->ok(),
                                       req->result_json(), req->error(), NowMs());
  if (!accepted.ok()) return ToGrpc(accepted.status());
  if (!*accepted) {
    spdlog::warn("result for task {} from {} refused: lease not held", req->task_id(),
                 req->worker_id());
  }
  resp->set_accepted(*accepted);
  return Status::OK;
}

}  // namespace argus::server
