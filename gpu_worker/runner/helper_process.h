// gpu_worker/runner/helper_process.h: runs a helper program (the PyTorch SDPA
// baseline) as a child of argus-runner and collects its standard output.
//
// argus-runner links only glibc, so this is plain posix_spawn + pipe + poll
// rather than base/subprocess.h. A helper that outlives its time limit is
// killed (SIGKILL to its process group) and reported as such.
//
// Thread safety: RunHelper is reentrant; it changes no process-wide state
// beyond the child it spawns.
#ifndef ARGUS_GPU_WORKER_RUNNER_HELPER_PROCESS_H_
#define ARGUS_GPU_WORKER_RUNNER_HELPER_PROCESS_H_

#include <string>
#include <vector>

namespace argus::runner {

struct HelperResult {
  bool started = false;    // the program could be spawned
  bool timed_out = false;  // killed at the time limit
  int exit_code = -1;      // -1 when it died of a signal or was killed
  std::string out;         // its standard output (at most 4 MiB kept)
  std::string error;       // why it did not start / how it ended, for messages
};

// Runs argv[0] (searched on PATH) with argv, standard error inherited.
HelperResult RunHelper(const std::vector<std::string>& argv, double timeout_s);

}  // namespace argus::runner

#endif  // ARGUS_GPU_WORKER_RUNNER_HELPER_PROCESS_H_
