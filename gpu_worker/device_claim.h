// gpu_worker/device_claim.h: one worker per GPU, and a GPU that falls off.
//
// ClaimDevice takes an flock(2) on a per-GPU lock file so that a second
// worker started for the same GPU index on the same host fails at start
// with the holder's pid, instead of two daemons silently timing each other's
// kernels. The lock is keyed by the physical GPU: the entry that
// CUDA_VISIBLE_DEVICES (HIP_/ROCR_VISIBLE_DEVICES) maps the index to, where set. Sharing one GPU on
// purpose (several workers on one H200, say) is an explicit shared claim, and no exclusive claim
// can coexist with it. The lock dies with the process, so a SIGKILLed worker leaves nothing stale.
//
// GpuHealth re-probes the host's GPUs (through the runner's inventory, never
// in this process) after a candidate ended in a fault, a timeout or a crash:
// a device that vanished from the inventory or a runtime that no longer
// loads means the worker must stop leasing GPU work until it is back.
//
// Thread safety: DeviceClaim is move-only and owned by one thread;
// GpuHealth::Check is thread-compatible.
#ifndef ARGUS_GPU_WORKER_DEVICE_CLAIM_H_
#define ARGUS_GPU_WORKER_DEVICE_CLAIM_H_

#include <string>

#include "absl/status/statusor.h"
#include "base/file_lock.h"
#include "gpu_worker/host_inventory.h"
#include "proto/argus/v1/common.pb.h"

namespace argus::worker {

class DeviceClaim {
 public:
  const std::string& path() const { return lock_.path(); }
  // Where workers sharing this GPU take turns running kernels (RunLockPath);
  // "" for an exclusive claim, which has the GPU to itself.
  const std::string& run_lock_path() const { return run_lock_path_; }

 private:
  friend absl::StatusOr<DeviceClaim> ClaimDevice(int, bool, const std::string&);
  FileLock lock_;
  std::string run_lock_path_;
};

// Claims GPU `index` of this host: exclusively, or shared with other workers
// that also claim it shared. Workers sharing a GPU compile and check side by
// side but must not time kernels at the same time (each would see the other's
// load in its ratios): they hold an exclusive lock on the claim's
// run_lock_path() while their runner runs (CandidateOptions::gpu_run_lock). `lock_dir` "" =
// $ARGUS_LOCK_DIR, else /tmp. FailedPrecondition, naming the holder, when another worker holds it.
absl::StatusOr<DeviceClaim> ClaimDevice(int index, bool shared, const std::string& lock_dir = "");

// The GPUs (non-interpreter devices) of an inventory, as "backend:index arch"
// strings, sorted; two inventories with the same list see the same GPUs.
std::vector<std::string> GpuList(const v1::Inventory& inventory);

class GpuHealth {
 public:
  GpuHealth(InventoryOptions options, v1::Inventory registered)
      : options_(std::move(options)), expected_(GpuList(registered)) {}
  // Ok when the host still shows every GPU it registered with; otherwise
  // Unavailable with what is missing. Runs the runner's inventory probe.
  absl::Status Check() const;
  // The candidate outcomes after which a GPU is re-probed.
  static bool Suspicious(const std::string& outcome);

 private:
  InventoryOptions options_;
  std::vector<std::string> expected_;
};

}  // namespace argus::worker

#endif  // ARGUS_GPU_WORKER_DEVICE_CLAIM_H_
