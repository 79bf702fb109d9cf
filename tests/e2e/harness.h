// tests/e2e/harness.h: real processes for end-to-end tests.
//
// Starts argus-server and argus-worker binaries from the build tree on
// loopback, each logging to a file in a per-test temp directory, and runs
// the argus CLI as a child with a watchdog. Nothing here is mocked.
//
// Thread safety: one harness per test, used from the test's thread.
#ifndef ARGUS_TESTS_E2E_HARNESS_H_
#define ARGUS_TESTS_E2E_HARNESS_H_

#include <map>
#include <string>
#include <vector>

#include "base/subprocess.h"
#include "nlohmann/json.hpp"

namespace argus::e2e {

class Harness {
 public:
  Harness();
  ~Harness();

  std::string dir() const { return dir_; }
  std::string db() const { return dir_ + "/argus.db"; }
  std::string address() const { return address_; }
  pid_t server_pid() const { return server_.pid(); }

  // Starts argus-server on `listen` (default: a free loopback port) and waits
  // for its "listening on" line.
  void StartServer(const std::vector<std::string>& extra_flags = {},
                   const std::string& listen = "127.0.0.1:0");
  // Returns the server's wait status (as waitpid gives it).
  int KillServer(int sig);
  // Starts argus-verifier on `listen` (default: a free loopback port; give
  // the previous address to restart it there) and waits until it listens.
  // Returns its address.
  std::string StartVerifier(const std::string& listen = "127.0.0.1:0");
  void KillVerifier(int sig);
  // Starts a worker; returns its index.
  int StartWorker(const std::vector<std::string>& extra_flags = {});
  void KillWorker(int index, int sig);

  // Runs `argus ARGS... --server ADDRESS` and returns the result.
  ProcessResult Cli(std::vector<std::string> args, int timeout_s = 60);
  // Runs the CLI with --json and parses stdout.
  nlohmann::json CliJson(std::vector<std::string> args, int* exit_code = nullptr);

  // Waits until `pred` is true, polling; returns false on timeout.
  static bool WaitFor(const std::function<bool()>& pred, int timeout_ms);
  std::string ServerLog() const;
  std::string Log(const std::string& name) const;  // a file in dir()

  static std::string Bin(const std::string& name);

  // Added to every CLI run and worker start (tokens, TLS flags, env), and
  // to the server's environment.
  std::vector<std::string> cli_env, cli_flags, worker_env, worker_flags, server_env;
  std::vector<std::string> verifier_flags;  // added to every verifier start

 private:
  std::string dir_;
  std::string address_;
  Child server_;
  int server_starts_ = 0;
  Child verifier_;
  int verifier_starts_ = 0;
  std::vector<Child> workers_;
};

}  // namespace argus::e2e

#endif  // ARGUS_TESTS_E2E_HARNESS_H_
