// argus-worker: pulls work from argus-server and runs it on this host's
// GPUs (through argus-runner children) or the reference interpreter.
#include <iostream>

#include "base/daemon_flags.h"
#include "base/flags.h"
#include "base/signals.h"
#include "gpu_worker/daemon.h"

int main(int argc, char** argv) {
  argus::worker::DaemonOptions options;
  int64_t device = -1;
  bool inventory_only = false;
  argus::FlagSet flags(
      "argus-worker",
      "--server HOST:PORT [flags]\n\nexample: argus-worker --server 127.0.0.1:7070");
  flags.String("server", &options.server, "argus-server address (host:port)");
  flags.String("runner", &options.inventory.runner_path,
               "path of argus-runner (default: beside this binary)");
  flags.String("backend", &options.candidate.default_backend,
               "candidate backend: interp or gpu (default: gpu when a GPU was found)");
  flags.Int("device", &device, "GPU index this worker owns (-1: all GPUs of the host)");
  flags.Int("task_delay_ms", &options.task_delay_ms,
            "fault injection for tests: hold every task this long before running it");
  flags.Bool("inventory", &inventory_only, "print the inventory as JSON and exit");
  if (auto rc = argus::ParseDaemonFlags("argus-worker", flags, argc, argv)) return *rc;
  options.inventory.device_index = static_cast<int>(device);
  if (inventory_only) {
    auto inv = argus::worker::CollectInventory(options.inventory);
    std::cout << inv.DebugString();
    return 0;
  }
  if (options.server.empty()) {
    std::cerr << "argus-worker: --server HOST:PORT is required\n";
    return 2;
  }
  argus::worker::WorkerDaemon daemon(options);
  argus::OnTerminationSignal([&daemon] { daemon.Stop(); });
  auto st = daemon.Run();
  if (!st.ok()) {
    std::cerr << "argus-worker: " << st.message() << "\n";
    return 1;
  }
  return 0;
}
