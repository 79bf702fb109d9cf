// base/subprocess.h: running a child process with a watchdog.
//
// Used by the worker (one runner child per candidate), by the CLI's embedded
// mode and by the end-to-end tests that start real servers and workers. A
// child that outlives its deadline is killed (SIGKILL to its process group).
//
// Privileges: a daemon started as root can name an unprivileged identity
// (SetRunAs, e.g. argus-worker --run_as nobody) for the programs it runs
// on behalf of users (argus-runner and the kernels it loads). Their children
// call setgroups/setgid/setuid before exec and fail (exit 126) rather than run
// privileged. Directories named by their path arguments that are private
// to the daemon (owned by it, mode 0700: the work directory made per
// candidate) are handed to that identity first, so the child can read its
// spec and write its result there, and nothing else of the daemon's.
//
// Thread safety: RunWithTimeout is thread-safe (it touches only its own
// child). SetRunAs is meant for start-up, before threads run children. A
// Child object is not thread-safe; use it from one thread.
#ifndef ARGUS_BASE_SUBPROCESS_H_
#define ARGUS_BASE_SUBPROCESS_H_

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace argus {

struct ProcessResult {
  // How the child ended.
  enum class End { kExited, kSignaled, kTimedOut, kCancelled };
  End end = End::kExited;
  int exit_code = 0;  // when kExited
  int signal = 0;     // when kSignaled (or the kill signal when kTimedOut / kCancelled)
  std::string stdout_text;
  std::string stderr_text;
  double wall_seconds = 0;
};

// An unprivileged identity for children.
struct RunAs {
  std::string user;
  uid_t uid = 0;
  gid_t gid = 0;
};

// The user's identity from the password database, or NOT_FOUND.
absl::StatusOr<RunAs> LookUpUser(const std::string& name);

// Children whose argv[0] is one of `programs` run as `who` (nullopt: as this
// process). Fails unless this process can switch to `who` (it must be root,
// or already be `who`).
absl::Status SetRunAs(std::optional<RunAs> who, std::vector<std::string> programs);

struct ProcessOptions {
  std::vector<std::string> argv;              // argv[0] is the program path
  std::vector<std::string> extra_env;         // "NAME=value", added to environ
  std::vector<std::string> drop_env;          // names removed from the environment
  std::string stdin_text;                     // written to the child's stdin
  std::chrono::milliseconds timeout{60'000};  // wall-clock limit
  size_t max_output_bytes = 16 << 20;         // per stream; the rest is dropped
  std::optional<RunAs> run_as;                // else SetRunAs's, when argv[0] is named there
  // When set, polled every 50 ms: once true, the child's process group is
  // killed and the result is End::kCancelled (a revoked task's runner).
  const std::atomic<bool>* cancel = nullptr;
};

// Runs a child to completion (or its deadline) and collects its output.
absl::StatusOr<ProcessResult> RunWithTimeout(const ProcessOptions& options);

// A long-lived child (servers and workers in tests, the embedded server).
// Its stdout/stderr go to the given log file (appended), or are inherited.
class Child {
 public:
  Child() = default;
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;
  Child(Child&& other) noexcept;
  Child& operator=(Child&& other) noexcept;
  ~Child();  // kills (SIGKILL) and reaps the child if still running

  static absl::StatusOr<Child> Start(const std::vector<std::string>& argv,
                                     const std::string& log_path = "",
                                     const std::vector<std::string>& extra_env = {});
  pid_t pid() const { return pid_; }
  bool running();
  // Sends `sig`; then, when wait is true, reaps the child. Returns its exit status.
  int Kill(int sig, bool wait = true);
  // Waits up to `timeout` for a normal exit; returns the wait status or -1.
  int Wait(std::chrono::milliseconds timeout);

 private:
  pid_t pid_ = -1;
  int status_ = -1;
};

}  // namespace argus

#endif  // ARGUS_BASE_SUBPROCESS_H_
