#include "gpu_worker/privileges.h"

#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "base/subprocess.h"
#include "gpu_worker/host_inventory.h"
#include "spdlog/spdlog.h"

namespace argus::worker {

absl::Status DropRunnerPrivileges(const std::string& run_as, const std::string& runner_path) {
  if (run_as.empty()) {
    if (geteuid() == 0) {
      spdlog::warn(
          "argus-worker runs as root without --run_as: candidates (argus-runner) run as root too");
    }
    return absl::OkStatus();
  }
  auto who = LookUpUser(run_as);
  if (!who.ok())
    return absl::InvalidArgumentError(absl::StrCat("--run_as: ", who.status().message()));
  if (who->uid == 0)
    return absl::InvalidArgumentError("--run_as: must name an unprivileged user, not root");
  // The daemon resolves an empty runner path the same way (daemon.cc).
  std::string runner = runner_path.empty() ? ExecutableDir() + "/argus-runner" : runner_path;
  if (auto st = SetRunAs(*who, {runner}); !st.ok()) {
    return absl::PermissionDeniedError(absl::StrCat("--run_as: ", st.message()));
  }
  spdlog::info("argus-runner runs as {} (uid {}, gid {})", who->user, who->uid, who->gid);
  return absl::OkStatus();
}

}  // namespace argus::worker
