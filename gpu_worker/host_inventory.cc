#include "gpu_worker/host_inventory.h"

#include <unistd.h>

#include <filesystem>

#include "base/subprocess.h"
#include "nlohmann/json.hpp"

namespace argus::worker {

std::string ExecutableDir() {
  char buf[4096];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return "";
  buf[n] = 0;
  return std::filesystem::path(buf).parent_path().string();
}

bool ParseRunnerInventory(const std::string& text, int device_index, v1::Inventory* inventory,
                          std::string* error) {
  auto json = nlohmann::json::parse(text, nullptr, false);
  if (json.is_discarded() || !json.is_object()) {
    *error = "runner --inventory printed no JSON object";
    return false;
  }
  if (json.contains("runtimes") && json["runtimes"].is_object()) {
    for (auto& [name, value] : json["runtimes"].items()) {
      (*inventory->mutable_runtimes())[name] =
          value.is_string() ? value.get<std::string>() : value.dump();
    }
  }
  if (json.contains("devices") && json["devices"].is_array()) {
    for (const auto& d : json["devices"]) {
      if (!d.is_object()) continue;
      int index = d.value("index", 0);
      if (device_index >= 0 && index != device_index) continue;
      v1::Device* dev = inventory->add_devices();
      dev->set_backend(d.value("backend", ""));
      dev->set_index(index);
      dev->set_name(d.value("name", ""));
      dev->set_arch(d.value("arch", ""));
      dev->set_memory_bytes(d.value("memory_bytes", int64_t{0}));
    }
  }
  return true;
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
  ProcessOptions p;
  p.argv = {runner, "--inventory"};
  p.timeout = std::chrono::seconds(30);
  auto result = RunWithTimeout(p);
  std::string error;
  if (!result.ok()) {
    error = std::string(result.status().message());
  } else if (result->end != ProcessResult::End::kExited || result->exit_code != 0) {
    error = "runner --inventory did not finish cleanly: " + result->stderr_text.substr(0, 300);
  } else if (ParseRunnerInventory(result->stdout_text, options.device_index, &inv, &error)) {
    return inv;
  }
  (*inv.mutable_runtimes())["argus-runner"] = error;
  return inv;
}

}  // namespace argus::worker
