#include "gpu_worker/inventory.h"

#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "base/status.h"
#include "base/subprocess.h"

namespace argus::gpu_worker {

using nlohmann::json;

absl::StatusOr<Inventory> ParseInventoryJson(const std::string& text) {
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    return absl::InvalidArgumentError("runner inventory is not a JSON object");
  }
  Inventory inv;
  inv.raw_json = text;
  try {
    for (const json& r : j.at("runtimes")) {
      const std::string name = r.at("name").get<std::string>();
      if (!r.value("available", false)) {
        inv.runtime_error[name] = r.value("error", "");
        continue;
      }
      inv.runtime_library[name] = r.value("library", "");
      inv.driver_version[name] = r.value("driver_version", "");
      for (const json& d : r.value("devices", json::array())) {
        if (d.contains("error")) continue;
        GpuDevice g;
        g.runtime = name;
        g.index = d.value("index", 0);
        g.name = d.value("name", "");
        g.arch = d.value("arch", "");
        g.compute_capability = d.value("compute_capability", "");
        g.total_memory_bytes = d.value("total_memory_bytes", uint64_t{0});
        g.multiprocessors = d.value("multiprocessors", -1);
        g.l2_bytes = d.value("l2_bytes", -1);
        g.max_shared_per_block_optin = d.value("max_shared_per_block_optin", -1);
        inv.devices.push_back(g);
      }
    }
    if (j.contains("baselines") && j["baselines"].contains("cublas")) {
      const json& c = j["baselines"]["cublas"];
      inv.cublas_available = c.value("available", false);
      inv.cublas_library = c.value("library", "");
    }
  } catch (const json::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("bad runner inventory: ", e.what()));
  }
  return inv;
}

absl::StatusOr<Inventory> ProbeInventory(const std::string& runner_path,
                                         std::chrono::milliseconds timeout) {
  ProcessOptions opt;
  opt.argv = {runner_path, "--inventory"};
  opt.timeout = timeout;
  ASSIGN_OR_RETURN(ProcessResult r, RunWithTimeout(opt));
  if (r.end != ProcessResult::End::kExited || r.exit_code != 0) {
    return absl::UnavailableError(absl::StrCat(runner_path, " --inventory failed (exit ",
                                               r.exit_code, ", signal ", r.signal,
                                               "): ", r.stderr_text));
  }
  return ParseInventoryJson(r.stdout_text);
}

}  // namespace argus::gpu_worker
