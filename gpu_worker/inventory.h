// gpu_worker/inventory.h: what GPU runtimes and devices this machine has.
//
// The worker daemon never links a GPU runtime; it asks `argus-runner
// --inventory` (a child process, so that a broken driver cannot take the
// daemon down) and parses its JSON here. The daemon registers with the
// server the devices found ("cuda" sm_90a H200, "hip" gfx942 MI300X) or, when
// none, only the CPU interpreter backend.
//
// Thread safety: ProbeInventory is thread-safe (one child per call); the
// structs are plain values.
#ifndef ARGUS_GPU_WORKER_INVENTORY_H_
#define ARGUS_GPU_WORKER_INVENTORY_H_

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace argus::gpu_worker {

struct GpuDevice {
  std::string runtime;  // "cuda" | "hip"
  int index = 0;
  std::string name;  // "NVIDIA H200"
  std::string arch;  // "sm_90a" | "gfx942"
  std::string compute_capability;
  uint64_t total_memory_bytes = 0;
  int multiprocessors = -1;
  int l2_bytes = -1;
  int max_shared_per_block_optin = -1;
};

struct Inventory {
  std::map<std::string, std::string> runtime_library;  // available runtime -> library path
  std::map<std::string, std::string> runtime_error;    // unavailable runtime -> why
  std::map<std::string, std::string> driver_version;
  std::vector<GpuDevice> devices;
  bool cublas_available = false;
  std::string cublas_library;
  std::string raw_json;  // the runner's output, verbatim
};

absl::StatusOr<Inventory> ParseInventoryJson(const std::string& text);

// Runs `<runner_path> --inventory` and parses its output.
absl::StatusOr<Inventory> ProbeInventory(
    const std::string& runner_path,
    std::chrono::milliseconds timeout = std::chrono::milliseconds(60'000));

}  // namespace argus::gpu_worker

#endif  // ARGUS_GPU_WORKER_INVENTORY_H_
