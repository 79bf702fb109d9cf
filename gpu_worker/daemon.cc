#include "gpu_worker/daemon.h"

#include <google/protobuf/util/json_util.h>
#include <grpcpp/grpcpp.h>

#include <nlohmann/json.hpp>
#include <thread>

#include "absl/strings/str_cat.h"
#include "base/status.h"
#include "proto/status.h"
#include "spdlog/spdlog.h"

namespace argus::worker {
namespace {

// The worker's own retries while the server is unreachable stay short, so
// that with SetFastReconnect it is back at work within a second.
constexpr std::chrono::milliseconds kMaxRetryBackoff{400};
constexpr std::chrono::milliseconds kLeaseRetry{200};

std::unique_ptr<grpc::ClientContext> Context(std::chrono::milliseconds timeout) {
  auto ctx = std::make_unique<grpc::ClientContext>();
  ctx->set_deadline(std::chrono::system_clock::now() + timeout);
  return ctx;
}

}  // namespace

WorkerDaemon::WorkerDaemon(DaemonOptions options) : options_(std::move(options)) {
  grpc::ChannelArguments args;
  SetFastReconnect(&args);  // back at work within a second of a server restart
  channel_ = Dial(options_.server, options_.dial, args);
  stub_ = v1::WorkerService::NewStub(channel_);
  Handle("probe",
         [this](const v1::LeasedTask&, const std::atomic<bool>&) -> absl::StatusOr<std::string> {
           std::string json;
           auto st = google::protobuf::util::MessageToJsonString(inventory_, &json);
           if (!st.ok()) return absl::InternalError(std::string(st.message()));
           return json;
         });
  Handle("candidate",
         [this](const v1::LeasedTask& task,
                const std::atomic<bool>& revoked) -> absl::StatusOr<std::string> {
           CandidateOptions o = options_.candidate;
           o.cancel = &revoked;
           if (o.runner_path.empty()) o.runner_path = options_.inventory.runner_path;
           if (o.runner_path.empty()) o.runner_path = ExecutableDir() + "/argus-runner";
           if (o.default_backend.empty()) {
             o.default_backend = "interp";
             for (const v1::Device& d : inventory_.devices())
               if (d.backend() != "interp") o.default_backend = "gpu";
           }
           absl::StatusOr<std::string> result = HandleCandidate(task.payload_json(), o);
           if (result.ok() && o.default_backend == "gpu") CheckHealthAfter(*result);
           return result;
         });
}

WorkerDaemon::~WorkerDaemon() { Stop(); }

void WorkerDaemon::Handle(const std::string& kind, TaskHandler handler) {
  handlers_[kind] = std::move(handler);
}

void WorkerDaemon::Stop() { stop_.store(true); }

bool WorkerDaemon::SleepUnlessStopped(std::chrono::milliseconds d) {
  auto until = std::chrono::steady_clock::now() + d;
  while (!stop_.load() && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return !stop_.load();
}

absl::Status WorkerDaemon::Register() {
  v1::RegisterWorkerRequest req;
  *req.mutable_inventory() = inventory_;
  req.set_requested_id(worker_id_);
  auto backoff = std::chrono::milliseconds(100);
  while (!stop_.load()) {
    v1::RegisterWorkerResponse resp;
    auto ctx = Context(std::chrono::seconds(5));
    grpc::Status st = stub_->RegisterWorker(ctx.get(), req, &resp);
    if (st.ok()) {
      worker_id_ = resp.worker_id();
      heartbeat_ms_ = std::max<int64_t>(resp.heartbeat_ms(), 10);
      spdlog::info("registered with {} as {}", options_.server, worker_id_);
      need_register_.store(false);
      return absl::OkStatus();
    }
    if (st.error_code() != grpc::UNAVAILABLE && st.error_code() != grpc::DEADLINE_EXCEEDED) {
      return absl::Status(FromGrpc(st).code(), absl::StrCat("register: ", st.error_message()));
    }
    spdlog::warn("server {} unreachable ({}); retrying", options_.server, st.error_message());
    SleepUnlessStopped(backoff);
    backoff = std::min(backoff * 2, kMaxRetryBackoff);
  }
  return absl::CancelledError("stopped");
}

void WorkerDaemon::HeartbeatLoop() {
  // While a task runs, heartbeat at least every 400 ms (checked every 100 ms,
  // so a task that starts in the middle of a long idle interval is covered):
  // a revocation (the job cancelled) then stops its runner within a second.
  using std::chrono::milliseconds;
  auto last = std::chrono::steady_clock::now();
  while (SleepUnlessStopped(milliseconds(std::min<int64_t>(heartbeat_ms_, 100)))) {
    int64_t interval_ms;
    {
      std::lock_guard lock(mu_);
      interval_ms = current_task_.empty() ? heartbeat_ms_ : std::min<int64_t>(heartbeat_ms_, 400);
    }
    if (std::chrono::steady_clock::now() - last < milliseconds(interval_ms)) continue;
    last = std::chrono::steady_clock::now();
    v1::HeartbeatRequest req;
    req.set_worker_id(worker_id_);
    req.set_healthy(healthy_.load());
    std::shared_ptr<std::atomic<bool>> revoked;
    {
      std::lock_guard lock(mu_);
      if (!current_task_.empty()) req.add_task_ids(current_task_);
      revoked = revoked_;
    }
    v1::HeartbeatResponse resp;
    auto ctx = Context(std::chrono::milliseconds(std::max<int64_t>(heartbeat_ms_, 1000)));
    grpc::Status st = stub_->Heartbeat(ctx.get(), req, &resp);
    if (st.error_code() == grpc::NOT_FOUND) {
      need_register_.store(true);
      continue;
    }
    if (!st.ok()) {
      spdlog::debug("heartbeat: {}", st.error_message());
      continue;
    }
    for (const auto& id : resp.revoked_task_ids()) {
      spdlog::warn("lease on task {} revoked by the server; abandoning it", id);
      if (revoked) revoked->store(true);
    }
  }
}

absl::Status WorkerDaemon::Run() {
  inventory_ = CollectInventory(options_.inventory);
  health_ = std::make_unique<GpuHealth>(options_.inventory, inventory_);
  RETURN_IF_ERROR(Register());
  std::thread heartbeat([this] { HeartbeatLoop(); });
  while (!stop_.load()) {
    if (!healthy_.load()) {
      RecoverHealth();
      continue;
    }
    if (need_register_.load()) {
      if (!Register().ok()) break;
    }
    v1::LeaseTaskRequest req;
    req.set_worker_id(worker_id_);
    req.set_wait_ms(options_.lease_wait_ms);
    v1::LeaseTaskResponse resp;
    auto ctx = Context(std::chrono::milliseconds(options_.lease_wait_ms + 5000));
    grpc::Status st = stub_->LeaseTask(ctx.get(), req, &resp);
    if (st.error_code() == grpc::NOT_FOUND) {
      need_register_.store(true);
      continue;
    }
    if (!st.ok()) {
      spdlog::warn("lease: {}", st.error_message());
      SleepUnlessStopped(kLeaseRetry);
      continue;
    }
    if (resp.granted()) RunTask(resp.task());
  }
  stop_.store(true);
  heartbeat.join();
  return absl::OkStatus();
}

void WorkerDaemon::RunTask(const v1::LeasedTask& task) {
  auto revoked = std::make_shared<std::atomic<bool>>(false);
  {
    std::lock_guard lock(mu_);
    current_task_ = task.task_id();
    revoked_ = revoked;
  }
  spdlog::info("running task {} ({}) of job {}", task.task_id(), task.kind(), task.job_id());
  // Watchdog for --max_task_ms: revokes the task when it runs too long.
  std::atomic<bool> timed_out{false}, finished{false};
  std::thread watchdog;
  if (options_.max_task_ms > 0) {
    watchdog = std::thread([&] {
      auto until =
          std::chrono::steady_clock::now() + std::chrono::milliseconds(options_.max_task_ms);
      while (!finished.load() && std::chrono::steady_clock::now() < until) {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      }
      if (!finished.load()) {
        timed_out.store(true);
        revoked->store(true);
      }
    });
  }
  auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(options_.task_delay_ms);
  while (!stop_.load() && !revoked->load() && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  v1::ReportResultRequest report;
  report.set_worker_id(worker_id_);
  report.set_task_id(task.task_id());
  auto it = handlers_.find(task.kind());
  if (it == handlers_.end()) {
    report.set_ok(false);
    report.set_error(absl::StrCat("this worker has no handler for task kind '", task.kind(), "'"));
  } else {
    auto result = it->second(task, *revoked);
    report.set_ok(result.ok());
    if (result.ok()) {
      report.set_result_json(*result);
    } else {
      report.set_error(std::string(result.status().message()));
    }
  }
  finished.store(true);
  if (watchdog.joinable()) watchdog.join();
  if (timed_out.load()) {
    report.set_ok(false);
    report.set_result_json("");
    report.set_error(absl::StrCat("task ran past the worker's run-time limit of ",
                                  options_.max_task_ms, " ms (--max_task_ms); stopped"));
    spdlog::warn("task {}: {}", task.task_id(), report.error());
    Report(report);
  } else if (!stop_.load() && !revoked->load()) {
    Report(report);
  }
  std::lock_guard lock(mu_);
  current_task_.clear();
  revoked_.reset();
}

void WorkerDaemon::CheckHealthAfter(const std::string& result_json) {
  nlohmann::json r = nlohmann::json::parse(result_json, nullptr, false);
  if (!r.is_object() || !GpuHealth::Suspicious(r.value("outcome", ""))) return;
  absl::Status h = health_->Check();
  if (h.ok()) return;
  spdlog::error("worker {} unhealthy: {}; leasing nothing until the GPU is back", worker_id_,
                std::string(h.message()));
  healthy_.store(false);
}

void WorkerDaemon::RecoverHealth() {
  if (!SleepUnlessStopped(std::chrono::milliseconds(options_.health_recheck_ms))) return;
  absl::Status h = health_->Check();
  if (!h.ok()) {
    spdlog::warn("still unhealthy: {}", std::string(h.message()));
    return;
  }
  inventory_ = CollectInventory(options_.inventory);
  health_ = std::make_unique<GpuHealth>(options_.inventory, inventory_);
  spdlog::info("GPU back; re-registering with the fresh inventory");
  need_register_.store(true);
  healthy_.store(true);
}

void WorkerDaemon::Report(const v1::ReportResultRequest& report) {
  // Retry until the server answers: the result must not be lost to a
  // server restart. The heartbeat keeps the lease alive meanwhile.
  auto backoff = std::chrono::milliseconds(100);
  while (!stop_.load()) {
    v1::ReportResultResponse resp;
    auto ctx = Context(std::chrono::seconds(10));
    grpc::Status st = stub_->ReportResult(ctx.get(), report, &resp);
    if (st.ok()) {
      if (resp.accepted()) {
        tasks_done_.fetch_add(1);
        spdlog::info("task {} reported ({})", report.task_id(), report.ok() ? "ok" : "failed");
      } else {
        spdlog::warn("task {}: result refused, the lease was lost", report.task_id());
      }
      return;
    }
    if (st.error_code() != grpc::UNAVAILABLE && st.error_code() != grpc::DEADLINE_EXCEEDED) {
      spdlog::error("task {}: report failed: {}", report.task_id(), st.error_message());
      return;
    }
    SleepUnlessStopped(backoff);
    backoff = std::min(backoff * 2, kMaxRetryBackoff);
  }
}

}  // namespace argus::worker
