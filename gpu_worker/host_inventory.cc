#include "gpu_worker/host_inventory.h"

#include <unistd.h>

#include <filesystem>

#include "gpu_worker/inventory.h"

namespace argus::worker {

std::string ExecutableDir() {
  char buf[4096];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return "";
  buf[n] = 0;
  return std::filesystem::path(buf).parent_path().string();
}

v1::Inventory CollectInventory(const InventoryOptions& options) {
  v1::Inventory inv;
  char host[256] = {0};
  gethostname(host, sizeof host - 1);
  inv.set_hostname(host);
  inv.set_worker_version("argus-worker 0.1");
  v1::Device* interp = inv.add_devices();
  interp->set_backend("interp");
  interp->set_index(0);
  interp->set_name("reference interpreter (CPU)");
  interp->set_arch("interp");
  interp->set_memory_bytes(static_cast<int64_t>(sysconf(_SC_PHYS_PAGES)) * sysconf(_SC_PAGESIZE));

  std::string runner = options.runner_path;
  if (runner.empty()) runner = ExecutableDir() + "/argus-runner";
  if (access(runner.c_str(), X_OK) != 0) {
    (*inv.mutable_runtimes())["argus-runner"] = "not found at " + runner + " (GPUs not probed)";
    return inv;
  }
  auto probed = gpu_worker::ProbeInventory(runner, std::chrono::seconds(30));
  if (!probed.ok()) {
    (*inv.mutable_runtimes())["argus-runner"] = std::string(probed.status().message());
    return inv;
  }
  for (const auto& [runtime, library] : probed->runtime_library) {
    (*inv.mutable_runtimes())[runtime] = "loaded " + library;
  }
  for (const auto& [runtime, why] : probed->runtime_error) {
    (*inv.mutable_runtimes())[runtime] = "unavailable: " + why;
  }
  if (probed->cublas_available) (*inv.mutable_runtimes())["cublas"] = probed->cublas_library;
  for (const auto& d : probed->devices) {
    if (options.device_index >= 0 && d.index != options.device_index) continue;
    v1::Device* dev = inv.add_devices();
    dev->set_backend(d.runtime);
    dev->set_index(d.index);
    dev->set_name(d.name);
    dev->set_arch(d.arch);
    dev->set_memory_bytes(static_cast<int64_t>(d.total_memory_bytes));
  }
  return inv;
}

}  // namespace argus::worker
