// base/subprocess.h: running a child process with a watchdog.
//
// Used by the worker (one runner child per candidate), by the CLI's embedded
// mode and by the end-to-end tests that start real servers and workers. A
// child that outlives its deadline is killed (SIGKILL to its process group).
//
// Thread safety: RunWithTimeout is thread-safe (it touches only its own
// child). A Child object is not; use it from one thread.
#ifndef ARGUS_BASE_SUBPROCESS_H_
#define ARGUS_BASE_SUBPROCESS_H_

#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace argus {

struct ProcessResult {
  // How the child ended.
  enum class End { kExited, kSignaled, kTimedOut };
  End end = End::kExited;
  int exit_code = 0;  // when kExited
  int signal = 0;     // when kSignaled (or the kill signal when kTimedOut)
  std::string stdout_text;
  std::string stderr_text;
  double wall_seconds = 0;
};

struct ProcessOptions {
  std::vector<std::string> argv;              // argv[0] is the program path
  std::vector<std::string> extra_env;         // "NAME=value", added to environ
  std::vector<std::string> drop_env;          // names removed from the environment
  std::string stdin_text;                     // written to the child's stdin
  std::chrono::milliseconds timeout{60'000};  // wall-clock limit
  size_t max_output_bytes = 16 << 20;         // per stream; the rest is dropped
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
