// gpu_worker/daemon.h: the argus-worker daemon loop.
//
// A WorkerDaemon dials out to argus-server, registers with its inventory,
// heartbeats (renewing the leases it holds), leases tasks, runs each through
// the handler registered for its kind and reports the result. A result is
// retried until the server answers, so a server restart loses nothing the
// worker finished; a lease the server revoked (job cancelled, or expired and
// given to another worker) makes the worker abandon that task. After a GPU
// candidate faults, hangs or crashes, the daemon re-probes its GPUs
// (device_claim.h); if one is gone it heartbeats "unhealthy" and leases
// nothing until the GPU is back, then re-registers with the fresh inventory.
//
// Thread safety: Run() blocks on the calling thread; Stop() may be called
// from any thread. Handlers run on the daemon's thread, one task at a time.
#ifndef ARGUS_GPU_WORKER_DAEMON_H_
#define ARGUS_GPU_WORKER_DAEMON_H_

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "absl/status/statusor.h"
#include "argus/v1/workers.grpc.pb.h"
#include "gpu_worker/candidate.h"
#include "gpu_worker/device_claim.h"
#include "gpu_worker/dial.h"
#include "gpu_worker/host_inventory.h"

namespace argus::worker {

// Runs one task; returns the result JSON. `revoked` turns true when the
// server took the task back; a long handler should check it and give up.
using TaskHandler = std::function<absl::StatusOr<std::string>(const v1::LeasedTask& task,
                                                              const std::atomic<bool>& revoked)>;

struct DaemonOptions {
  std::string server;  // host:port
  DialOptions dial;    // worker token, TLS (gpu_worker/dial.h)
  InventoryOptions inventory;
  int64_t task_delay_ms = 0;      // fault injection for tests: hold each task this long
  int64_t lease_wait_ms = 2'000;  // long-poll length
  // The "candidate" handler (candidate.h). runner_path "" = the inventory's
  // runner; default_backend "" = "gpu" when the inventory found a GPU, else
  // "interp".
  CandidateOptions candidate;
  // Run-time limit per task: past it the task is revoked (handlers and the
  // children they run must give up) and reported failed. 0: no limit.
  int64_t max_task_ms = 0;
  // While unhealthy, how often the GPUs are probed again.
  int64_t health_recheck_ms = 5'000;
};

class WorkerDaemon {
 public:
  explicit WorkerDaemon(DaemonOptions options);
  ~WorkerDaemon();

  // Registers a handler for a task kind. "probe" and "candidate" are
  // registered by default.
  void Handle(const std::string& kind, TaskHandler handler);
  // Drops the handler of a kind: such tasks are then reported as failed
  // ("no handler"), e.g. for a worker that must not run candidates.
  void Remove(const std::string& kind) { handlers_.erase(kind); }

  // Runs until Stop(). Returns an error only for unrecoverable problems.
  absl::Status Run();
  void Stop();

  const std::string& worker_id() const { return worker_id_; }
  const v1::Inventory& inventory() const { return inventory_; }
  int64_t tasks_done() const { return tasks_done_.load(); }
  bool healthy() const { return healthy_.load(); }

 private:
  absl::Status Register();
  void HeartbeatLoop();
  void RunTask(const v1::LeasedTask& task);
  void Report(const v1::ReportResultRequest& report);
  // After a candidate's result: re-probes the GPUs when the outcome suggests
  // the device itself may be broken.
  void CheckHealthAfter(const std::string& result_json);
  // While unhealthy: waits, re-probes, and re-registers once the GPU is back.
  void RecoverHealth();
  bool SleepUnlessStopped(std::chrono::milliseconds d);

  DaemonOptions options_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::WorkerService::Stub> stub_;
  v1::Inventory inventory_;
  std::map<std::string, TaskHandler> handlers_;
  std::string worker_id_;
  int64_t heartbeat_ms_ = 2'000;
  std::atomic<bool> stop_{false};
  std::atomic<bool> need_register_{false};
  std::atomic<int64_t> tasks_done_{0};
  std::atomic<bool> healthy_{true};
  std::unique_ptr<GpuHealth> health_;

  std::mutex mu_;  // guards current_task_ and revoked_
  std::string current_task_;
  std::shared_ptr<std::atomic<bool>> revoked_;
};

}  // namespace argus::worker

#endif  // ARGUS_GPU_WORKER_DAEMON_H_
