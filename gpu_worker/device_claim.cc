#include "gpu_worker/device_claim.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace argus::worker {

namespace {

// What identifies GPU `index` of this process on the host: with
// CUDA_VISIBLE_DEVICES (or HIP_/ROCR_VISIBLE_DEVICES) set, as Slurm and the
// Kubernetes device plugins do, device 0 of two workers may be two different
// GPUs, so the key is the entry the variable maps it to.
std::string PhysicalGpuKey(int index) {
  for (const char* var : {"CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES"}) {
    const char* v = std::getenv(var);
    if (v == nullptr || *v == 0) continue;
    std::vector<std::string> parts = absl::StrSplit(v, ',');
    if (index < 0 || index >= static_cast<int>(parts.size())) break;
    std::string key;
    for (char c : parts[static_cast<size_t>(index)]) {
      key += std::isalnum(static_cast<unsigned char>(c)) || c == '-' ? c : '_';
    }
    return key;
  }
  return std::to_string(index);
}

}  // namespace

absl::StatusOr<DeviceClaim> ClaimDevice(int index, bool shared, const std::string& lock_dir) {
  std::string dir = lock_dir;
  if (dir.empty()) {
    const char* env = std::getenv("ARGUS_LOCK_DIR");
    dir = env != nullptr && *env ? env : "/tmp";
  }
  const std::string path = absl::StrCat(dir, "/argus-gpu-", PhysicalGpuKey(index), ".lock");
  auto lock = FileLock::Acquire(path, shared ? FileLock::Mode::kShared : FileLock::Mode::kExclusive,
                                FileLock::Wait::kNo);
  if (!lock.ok() && !absl::IsUnavailable(lock.status())) return lock.status();
  if (!lock.ok()) {
    // The holder's pid, written by an exclusive claimer, for the message.
    std::string who;
    {
      std::ifstream in(path);
      std::getline(in, who);
    }
    return absl::FailedPreconditionError(absl::StrCat(
        "GPU ", index, " is already claimed by another worker",
        who.empty() ? "" : absl::StrCat(" (pid ", who, ")"), " through ", path,
        shared ? "; it holds the GPU exclusively"
               : "; start each worker with its own --device, or all of them with --share_device"));
  }
  DeviceClaim claim;
  claim.lock_ = std::move(*lock);
  if (shared) {
    claim.run_lock_path_ = absl::StrCat(dir, "/argus-gpu-", PhysicalGpuKey(index), ".run.lock");
  } else if (ftruncate(claim.lock_.fd(), 0) == 0) {
    const std::string pid = std::to_string(getpid()) + "\n";
    if (pwrite(claim.lock_.fd(), pid.data(), pid.size(), 0) < 0) {
      // The pid is only for the message a second claimer prints.
    }
  }
  return claim;
}

std::vector<std::string> GpuList(const v1::Inventory& inventory) {
  std::vector<std::string> out;
  for (const v1::Device& d : inventory.devices()) {
    if (d.backend() == "interp") continue;
    out.push_back(absl::StrCat(d.backend(), ":", d.index(), " ", d.arch()));
  }
  std::sort(out.begin(), out.end());
  return out;
}

absl::Status GpuHealth::Check() const {
  const std::vector<std::string> now = GpuList(CollectInventory(options_));
  std::vector<std::string> missing;
  std::set_difference(expected_.begin(), expected_.end(), now.begin(), now.end(),
                      std::back_inserter(missing));
  if (missing.empty()) return absl::OkStatus();
  return absl::UnavailableError(
      absl::StrCat("GPU gone from the host's inventory: ", absl::StrJoin(missing, ", "),
                   now.empty() ? " (no GPU left)" : ""));
}

bool GpuHealth::Suspicious(const std::string& outcome) {
  return outcome == "fault" || outcome == "timeout" || outcome == "crash";
}

}  // namespace argus::worker
