// gpu_worker/host_inventory.h: what this host can run kernels on.
//
// The daemon never loads a GPU driver itself: a driver fault must not take
// it down. It asks the runner (`argus-runner --inventory`, a child process
// with a watchdog) which runtimes it could dlopen and which devices they
// show. The interpreter backend is always there.
//
// Thread safety: CollectInventory is thread-safe.
#ifndef ARGUS_GPU_WORKER_HOST_INVENTORY_H_
#define ARGUS_GPU_WORKER_HOST_INVENTORY_H_

#include <string>

#include "argus/v1/common.pb.h"

namespace argus::worker {

struct InventoryOptions {
  std::string runner_path;  // empty: look beside the running binary
  int device_index = -1;    // >= 0: report only this GPU (one worker per GPU)
};

v1::Inventory CollectInventory(const InventoryOptions& options);

// The directory holding the running executable ("" if unknown).
std::string ExecutableDir();

}  // namespace argus::worker

#endif  // ARGUS_GPU_WORKER_HOST_INVENTORY_H_
