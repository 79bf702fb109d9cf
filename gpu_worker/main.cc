// argus-worker: pulls work from argus-server and runs it on this host's
// GPUs (through argus-runner children) or the reference interpreter.
#include <sys/prctl.h>

#include <iostream>
#include <optional>

#include "absl/strings/str_join.h"
#include "base/daemon_flags.h"
#include "base/flags.h"
#include "base/signals.h"
#include "gpu_worker/daemon.h"
#include "gpu_worker/device_claim.h"
#include "gpu_worker/privileges.h"
#include "gpu_worker/verifier_client.h"
#include "spdlog/spdlog.h"

int main(int argc, char** argv) {
  argus::worker::DaemonOptions options;
  int64_t device = -1;
  bool inventory_only = false;
  argus::worker::DialFiles dial;
  std::string verifier;
  std::string run_as;
  argus::FlagSet flags(
      "argus-worker",
      "--server HOST:PORT [flags]\n\nexample: argus-worker --server 127.0.0.1:7070");
  flags.String("server", &options.server, "argus-server address (host:port)");
  flags.String("runner", &options.inventory.runner_path,
               "path of argus-runner (default: beside this binary)");
  flags.String("backend", &options.candidate.default_backend,
               "candidate backend: interp or gpu (default: gpu when a GPU was found)");
  flags.Int("device", &device, "GPU index this worker owns (-1: all GPUs of the host)");
  bool share_device = false;
  flags.Bool(
      "share_device", &share_device,
      "let several workers claim --device together (e.g. to fill one GPU); without it "
      "a second worker for the same GPU refuses to start. Sharing workers take turns on the GPU: "
      "one runner at a time, so no two candidates are timed together");
  flags.Int("task_delay_ms", &options.task_delay_ms,
            "fault injection for tests: hold every task this long before running it");
  flags.String("worker_token_file", &dial.token_file,
               "file holding the worker token (the server's --worker_token_file)");
  flags.String("tls_ca", &dial.tls_ca, "PEM CA that signs the server certificate (turns on TLS)");
  flags.String("tls_cert", &dial.tls_cert, "PEM client certificate, for servers that need mTLS");
  flags.String("tls_key", &dial.tls_key, "PEM private key of --tls_cert");
  flags.Int("max_task_ms", &options.max_task_ms,
            "run-time limit per task (candidate); past it the task fails (0: none)");
  flags.String("verifier", &verifier,
               "argus-verifier address (host:port): run only candidates it verifies (the "
               "payload must say verified, and this worker re-verifies; it waits while the "
               "service is down)");
  argus::worker::DialFiles verifier_dial;
  argus::worker::AddVerifierDialFlags(&flags, &verifier_dial);
  flags.Double("runner_grace_s", &options.candidate.watchdog_grace_s,
               "the watchdog kills a runner this long past its candidate's timeout_s");
  flags.Bool("inventory", &inventory_only, "print the inventory as JSON and exit");
  flags.String("run_as", &run_as,
               "when started as root: run argus-runner (and so the submitted kernels) as this "
               "unprivileged user, e.g. nobody");
  if (auto rc = argus::ParseDaemonFlags("argus-worker", flags, argc, argv)) return *rc;
  options.inventory.device_index = static_cast<int>(device);
  if (auto st = argus::worker::DropRunnerPrivileges(run_as, options.inventory.runner_path);
      !st.ok()) {
    std::cerr << "argus-worker: " << st.message() << "\n";
    return 2;
  }
  // No child (argus-runner, submitted kernels) may inherit a credential, or
  // ptrace this process / read its memory to find one.
  prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
  for (const auto& name : argus::worker::ScrubCredentialEnvironment()) {
    spdlog::info("removed ${} from the environment children inherit", name);
  }
  auto dial_options = argus::worker::LoadDialOptions(dial);
  if (!dial_options.ok()) {
    std::cerr << "argus-worker: " << dial_options.status().message() << "\n";
    return 2;
  }
  options.dial = *dial_options;
  if (inventory_only) {
    auto inv = argus::worker::CollectInventory(options.inventory);
    std::cout << inv.DebugString();
    return 0;
  }
  if (options.server.empty()) {
    std::cerr << "argus-worker: --server HOST:PORT is required\n";
    return 2;
  }
  // --device N must name a GPU this host has, and no other worker may hold it.
  std::optional<argus::worker::DeviceClaim> claim;
  if (device >= 0) {
    auto gpus = argus::worker::GpuList(argus::worker::CollectInventory(options.inventory));
    if (gpus.empty()) {
      argus::worker::InventoryOptions all = options.inventory;
      all.device_index = -1;
      auto found = argus::worker::GpuList(argus::worker::CollectInventory(all));
      std::cerr << "argus-worker: --device " << device << ": no such GPU on this host (found: "
                << (found.empty() ? "none" : absl::StrJoin(found, ", "))
                << "; argus-worker --inventory shows what was probed)\n";
      return 2;
    }
    auto c = argus::worker::ClaimDevice(static_cast<int>(device), share_device);
    if (!c.ok()) {
      std::cerr << "argus-worker: --device " << device << ": " << c.status().message() << "\n";
      return 2;
    }
    claim = std::move(*c);
    options.candidate.gpu_run_lock = claim->run_lock_path();
  }
  if (!verifier.empty()) {
    argus::worker::VerifierClientOptions vo;
    vo.address = verifier;
    auto vdial = argus::worker::LoadDialOptions(verifier_dial);
    if (!vdial.ok()) {
      std::cerr << "argus-worker: --verifier_*: " << vdial.status().message() << "\n";
      return 2;
    }
    vo.dial = *vdial;
    vo.max_wait_ms = 10 * 60'000;  // then the task fails and the server hands it out again
    auto client = std::make_shared<argus::worker::VerifierClient>(vo);
    options.candidate.require_verification = true;
    options.candidate.verify = [client](const argus::worker::KernelSpec& k, const std::string&) {
      return client->Verify(k);
    };
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
