#include "base/subprocess.h"

#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <set>
#include <thread>

#include "absl/strings/str_cat.h"

extern char** environ;

namespace argus {
namespace {

std::vector<std::string> BuildEnv(const std::vector<std::string>& extra,
                                  const std::vector<std::string>& drop) {
  std::set<std::string> dropped(drop.begin(), drop.end());
  for (const auto& e : extra) dropped.insert(e.substr(0, e.find('=')));
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) {
    std::string entry(*e);
    if (!dropped.count(entry.substr(0, entry.find('=')))) env.push_back(entry);
  }
  env.insert(env.end(), extra.begin(), extra.end());
  return env;
}

std::vector<char*> CStrings(std::vector<std::string>& v) {
  std::vector<char*> out;
  for (auto& s : v) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

struct RunAsPolicy {
  std::mutex mu;
  std::optional<RunAs> who;
  std::set<std::string> programs;
};

RunAsPolicy& Policy() {
  static RunAsPolicy* p = new RunAsPolicy;
  return *p;
}

std::optional<RunAs> RunAsFor(const ProcessOptions& o) {
  if (o.run_as) return o.run_as;
  RunAsPolicy& p = Policy();
  std::lock_guard lock(p.mu);
  if (p.who && p.programs.count(o.argv[0])) return p.who;
  return std::nullopt;
}

// Hands the daemon's private directories named by path arguments (the
// directory itself, or the one a file argument is in) to `who`.
absl::Status GrantArgumentDirs(const std::vector<std::string>& argv, const RunAs& who) {
  namespace fs = std::filesystem;
  for (size_t i = 1; i < argv.size(); ++i) {
    if (argv[i].empty() || argv[i][0] != '/') continue;
    fs::path p(argv[i]);
    struct stat st;
    if (stat(p.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) p = p.parent_path();
    if (p.empty() || p == "/" || stat(p.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) continue;
    if (st.st_uid != geteuid() || (st.st_mode & 077) != 0) continue;  // not private to us
    if (chown(p.c_str(), who.uid, who.gid) != 0) {
      return absl::PermissionDeniedError(
          absl::StrCat("chown ", p.string(), " to ", who.user, ": ", std::strerror(errno)));
    }
    // Files already there (the spec, the artifact) go with it.
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(p, ec)) {
      if (lchown(e.path().c_str(), who.uid, who.gid) != 0) {
        return absl::PermissionDeniedError(absl::StrCat("chown ", e.path().string(), " to ",
                                                        who.user, ": ", std::strerror(errno)));
      }
    }
  }
  return absl::OkStatus();
}

double Seconds(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

absl::StatusOr<RunAs> LookUpUser(const std::string& name) {
  std::vector<char> buf(16384);
  passwd pw;
  passwd* found = nullptr;
  int rc = getpwnam_r(name.c_str(), &pw, buf.data(), buf.size(), &found);
  if (rc != 0 || found == nullptr) {
    return absl::NotFoundError(absl::StrCat("no user '", name, "' in the password database"));
  }
  return RunAs{name, pw.pw_uid, pw.pw_gid};
}

absl::Status SetRunAs(std::optional<RunAs> who, std::vector<std::string> programs) {
  if (who && geteuid() != 0 && geteuid() != who->uid) {
    return absl::PermissionDeniedError(absl::StrCat("cannot run children as ", who->user, " (uid ",
                                                    who->uid, "): this process is uid ", geteuid(),
                                                    ", not root"));
  }
  RunAsPolicy& p = Policy();
  std::lock_guard lock(p.mu);
  p.who = std::move(who);
  p.programs = std::set<std::string>(programs.begin(), programs.end());
  return absl::OkStatus();
}

absl::StatusOr<ProcessResult> RunWithTimeout(const ProcessOptions& options) {
  if (options.argv.empty()) return absl::InvalidArgumentError("RunWithTimeout: empty argv");
  std::optional<RunAs> run_as = RunAsFor(options);
  // Switching needs root; a process already running as the identity has
  // nothing to drop.
  if (run_as && run_as->uid == geteuid() && run_as->gid == getegid()) run_as.reset();
  if (run_as) {
    if (geteuid() != 0) {
      return absl::PermissionDeniedError(
          absl::StrCat("cannot run ", options.argv[0], " as ", run_as->user, ": not root"));
    }
    if (auto st = GrantArgumentDirs(options.argv, *run_as); !st.ok()) return st;
  }
  int in_pipe[2], out_pipe[2], err_pipe[2];
  if (pipe2(in_pipe, O_CLOEXEC) || pipe2(out_pipe, O_CLOEXEC) || pipe2(err_pipe, O_CLOEXEC)) {
    return absl::InternalError(absl::StrCat("pipe: ", std::strerror(errno)));
  }
  std::vector<std::string> argv = options.argv;
  std::vector<std::string> env = BuildEnv(options.extra_env, options.drop_env);
  auto c_argv = CStrings(argv);
  auto c_env = CStrings(env);
  auto start = std::chrono::steady_clock::now();
  pid_t pid = fork();
  if (pid < 0) return absl::InternalError(absl::StrCat("fork: ", std::strerror(errno)));
  if (pid == 0) {
    setpgid(0, 0);
    dup2(in_pipe[0], 0);
    dup2(out_pipe[1], 1);
    dup2(err_pipe[1], 2);
    // Nothing else of the parent's goes with the child: not a socket of its
    // authenticated gRPC channel, not a file it forgot to mark close-on-exec.
    if (syscall(SYS_close_range, 3U, ~0U, 0U) != 0) {
      for (int fd = 3; fd < 65536; ++fd) close(fd);
    }
    if (run_as) {
      // Groups first (setgid/setgroups need root), then the uid; never run
      // the program if any step fails.
      if (setgroups(1, &run_as->gid) != 0 || setgid(run_as->gid) != 0 || setuid(run_as->uid) != 0 ||
          setuid(0) == 0) {
        dprintf(2, "cannot drop privileges to uid %u gid %u: %s\n",
                static_cast<unsigned>(run_as->uid), static_cast<unsigned>(run_as->gid),
                std::strerror(errno));
        _exit(126);
      }
    }
    execve(c_argv[0], c_argv.data(), c_env.data());
    dprintf(2, "exec %s: %s\n", c_argv[0], std::strerror(errno));
    _exit(127);
  }
  setpgid(pid, pid);
  close(in_pipe[0]);
  close(out_pipe[1]);
  close(err_pipe[1]);
  // Feed stdin from a thread so a child that does not read cannot block us.
  std::thread feeder([fd = in_pipe[1], text = options.stdin_text] {
    signal(SIGPIPE, SIG_IGN);
    size_t off = 0;
    while (off < text.size()) {
      ssize_t n = write(fd, text.data() + off, text.size() - off);
      if (n <= 0) break;
      off += n;
    }
    close(fd);
  });
  ProcessResult result;
  std::string* sinks[2] = {&result.stdout_text, &result.stderr_text};
  int fds[2] = {out_pipe[0], err_pipe[0]};
  bool open[2] = {true, true};
  bool timed_out = false, cancelled = false;
  auto deadline = start + options.timeout;
  char buf[65536];
  while (open[0] || open[1]) {
    auto now = std::chrono::steady_clock::now();
    if (now >= deadline) {
      timed_out = true;
      break;
    }
    if (options.cancel != nullptr && options.cancel->load()) {
      cancelled = true;
      break;
    }
    int wait_ms =
        static_cast<int>(
            std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count()) +
        1;
    if (options.cancel != nullptr) wait_ms = std::min(wait_ms, 50);
    pollfd pfds[2];
    int n = 0;
    int map[2];
    for (int i = 0; i < 2; ++i) {
      if (open[i]) {
        pfds[n] = {fds[i], POLLIN, 0};
        map[n++] = i;
      }
    }
    int r = poll(pfds, n, wait_ms);
    if (r < 0 && errno == EINTR) continue;
    for (int j = 0; j < n; ++j) {
      if (!(pfds[j].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      int i = map[j];
      ssize_t got = read(fds[i], buf, sizeof buf);
      if (got <= 0) {
        open[i] = false;
        continue;
      }
      if (sinks[i]->size() < options.max_output_bytes) sinks[i]->append(buf, got);
    }
  }
  int status = 0;
  const bool killed = timed_out || cancelled;
  if (killed) {
    kill(-pid, SIGKILL);
    kill(pid, SIGKILL);
  }
  waitpid(pid, &status, 0);
  // Grandchildren may still hold the pipes; kill the group to release them.
  if (!killed) kill(-pid, SIGKILL);
  close(fds[0]);
  close(fds[1]);
  feeder.join();
  result.wall_seconds = Seconds(start);
  if (killed) {
    result.end = timed_out ? ProcessResult::End::kTimedOut : ProcessResult::End::kCancelled;
    result.signal = SIGKILL;
  } else if (WIFSIGNALED(status)) {
    result.end = ProcessResult::End::kSignaled;
    result.signal = WTERMSIG(status);
  } else {
    result.end = ProcessResult::End::kExited;
    result.exit_code = WEXITSTATUS(status);
  }
  return result;
}

Child::Child(Child&& other) noexcept : pid_(other.pid_), status_(other.status_) { other.pid_ = -1; }

Child& Child::operator=(Child&& other) noexcept {
  if (this != &other) {
    if (pid_ > 0) Kill(SIGKILL);
    pid_ = other.pid_;
    status_ = other.status_;
    other.pid_ = -1;
  }
  return *this;
}

Child::~Child() {
  if (pid_ > 0) Kill(SIGKILL);
}

absl::StatusOr<Child> Child::Start(const std::vector<std::string>& argv,
                                   const std::string& log_path,
                                   const std::vector<std::string>& extra_env) {
  if (argv.empty()) return absl::InvalidArgumentError("Child::Start: empty argv");
  std::vector<std::string> args = argv;
  std::vector<std::string> env = BuildEnv(extra_env, {});
  auto c_argv = CStrings(args);
  auto c_env = CStrings(env);
  int log_fd = -1;
  if (!log_path.empty()) {
    log_fd = open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (log_fd < 0) {
      return absl::InternalError(absl::StrCat("open ", log_path, ": ", std::strerror(errno)));
    }
  }
  pid_t pid = fork();
  if (pid < 0) return absl::InternalError(absl::StrCat("fork: ", std::strerror(errno)));
  if (pid == 0) {
    setpgid(0, 0);
    if (log_fd >= 0) {
      dup2(log_fd, 1);
      dup2(log_fd, 2);
    }
    int devnull = open("/dev/null", O_RDONLY);
    if (devnull >= 0) dup2(devnull, 0);
    execve(c_argv[0], c_argv.data(), c_env.data());
    dprintf(2, "exec %s: %s\n", c_argv[0], std::strerror(errno));
    _exit(127);
  }
  if (log_fd >= 0) close(log_fd);
  Child child;
  child.pid_ = pid;
  return child;
}

bool Child::running() {
  if (pid_ <= 0) return false;
  int status;
  pid_t r = waitpid(pid_, &status, WNOHANG);
  if (r == pid_) {
    status_ = status;
    pid_ = -1;
    return false;
  }
  return true;
}

int Child::Kill(int sig, bool wait) {
  if (pid_ <= 0) return status_;
  kill(pid_, sig);
  if (wait) {
    int status = 0;
    waitpid(pid_, &status, 0);
    kill(-pid_, SIGKILL);  // anything it left in its group
    status_ = status;
    pid_ = -1;
  }
  return status_;
}

int Child::Wait(std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (running()) {
    if (std::chrono::steady_clock::now() >= deadline) return -1;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return status_;
}

}  // namespace argus
