// gpu_worker/privileges.h: who argus-runner runs as.
//
// The runner executes code that users submitted. A worker started as root
// with --run_as USER runs every argus-runner child as USER (setgroups,
// setgid, setuid before exec; base/subprocess.h), so a kernel or a runner
// exploit cannot read the worker's token file or anything else root owns.
// Started as root without --run_as, it warns that candidates run as root;
// started unprivileged, there is nothing to drop (--run_as must then name
// the worker's own user).
//
// Thread safety: call once at start-up, before the daemon runs.
#ifndef ARGUS_GPU_WORKER_PRIVILEGES_H_
#define ARGUS_GPU_WORKER_PRIVILEGES_H_

#include <string>

#include "absl/status/status.h"

namespace argus::worker {

// `runner_path` as given to the worker (empty: argus-runner beside it).
// Refuses root as the identity and users it cannot switch to.
absl::Status DropRunnerPrivileges(const std::string& run_as, const std::string& runner_path);

}  // namespace argus::worker

#endif  // ARGUS_GPU_WORKER_PRIVILEGES_H_
