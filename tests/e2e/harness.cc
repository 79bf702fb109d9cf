#include "tests/e2e/harness.h"

#include <signal.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <thread>

namespace argus::e2e {

std::string Harness::Bin(const std::string& name) {
  return std::string(ARGUS_BINARY_DIR) + "/bin/" + name;
}

Harness::Harness() {
  std::random_device rd;
  dir_ = (std::filesystem::temp_directory_path() /
          ("argus-e2e-" + std::to_string(getpid()) + "-" + std::to_string(rd())))
             .string();
  std::filesystem::create_directories(dir_);
}

Harness::~Harness() {
  for (auto& w : workers_) w.Kill(SIGKILL);
  server_.Kill(SIGKILL);
  verifier_.Kill(SIGKILL);
}

std::string Harness::Log(const std::string& name) const {
  std::ifstream in(dir_ + "/" + name);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string Harness::ServerLog() const {
  return Log("server-" + std::to_string(server_starts_) + ".log");
}

std::string Harness::StartVerifier(const std::string& listen) {
  ++verifier_starts_;
  std::string log = "verifier-" + std::to_string(verifier_starts_) + ".log";
  std::vector<std::string> argv = {Bin("argus-verifier"), "--listen", listen};
  argv.insert(argv.end(), verifier_flags.begin(), verifier_flags.end());
  auto child = Child::Start(argv, dir_ + "/" + log);
  REQUIRE(child.ok());
  verifier_ = std::move(*child);
  const std::string marker = "listening on ";
  std::string address;
  bool up = WaitFor(
      [&] {
        std::string text = Log(log);
        auto pos = text.find(marker);
        auto end = pos == std::string::npos ? pos : text.find('\n', pos);
        if (end == std::string::npos) return false;
        address = text.substr(pos + marker.size(), end - pos - marker.size());
        return true;
      },
      20'000);
  INFO("verifier log:\n" << Log(log));
  REQUIRE(up);
  return address;
}

void Harness::KillVerifier(int sig) { verifier_.Kill(sig); }

void Harness::StartServer(const std::vector<std::string>& extra, const std::string& listen) {
  ++server_starts_;
  std::vector<std::string> argv = {Bin("argus-server"), "--listen", listen, "--db", db()};
  argv.insert(argv.end(), extra.begin(), extra.end());
  std::string log = dir_ + "/server-" + std::to_string(server_starts_) + ".log";
  auto child = Child::Start(argv, log, server_env);
  REQUIRE(child.ok());
  server_ = std::move(*child);
  const std::string marker = "listening on ";
  bool up = WaitFor(
      [&] {
        std::string text = ServerLog();
        auto pos = text.find(marker);
        if (pos == std::string::npos) return false;
        auto end = text.find('\n', pos);
        if (end == std::string::npos) return false;
        address_ = text.substr(pos + marker.size(), end - pos - marker.size());
        return true;
      },
      20'000);
  INFO("server log:\n" << ServerLog());
  REQUIRE(up);
}

int Harness::KillServer(int sig) { return server_.Kill(sig); }

int Harness::StartWorker(const std::vector<std::string>& extra) {
  int index = static_cast<int>(workers_.size());
  std::vector<std::string> argv = {Bin("argus-worker"), "--server", address_, "--log_level",
                                   "debug"};
  argv.insert(argv.end(), worker_flags.begin(), worker_flags.end());
  argv.insert(argv.end(), extra.begin(), extra.end());
  auto child = Child::Start(argv, dir_ + "/worker-" + std::to_string(index) + ".log", worker_env);
  REQUIRE(child.ok());
  workers_.push_back(std::move(*child));
  return index;
}

void Harness::KillWorker(int index, int sig) { workers_.at(index).Kill(sig); }

ProcessResult Harness::Cli(std::vector<std::string> args, int timeout_s) {
  ProcessOptions opt;
  opt.argv = {Bin("argus")};
  opt.argv.insert(opt.argv.end(), args.begin(), args.end());
  if (!address_.empty()) {
    opt.argv.push_back("--server");
    opt.argv.push_back(address_);
  }
  opt.argv.insert(opt.argv.end(), cli_flags.begin(), cli_flags.end());
  opt.extra_env = cli_env;
  opt.timeout = std::chrono::seconds(timeout_s);
  auto r = RunWithTimeout(opt);
  REQUIRE(r.ok());
  return *r;
}

nlohmann::json Harness::CliJson(std::vector<std::string> args, int* exit_code) {
  args.push_back("--json");
  ProcessResult r = Cli(args);
  if (exit_code) *exit_code = r.exit_code;
  INFO("stdout: " << r.stdout_text << "\nstderr: " << r.stderr_text);
  auto json = nlohmann::json::parse(r.stdout_text, nullptr, false);
  REQUIRE_FALSE(json.is_discarded());
  return json;
}

bool Harness::WaitFor(const std::function<bool()>& pred, int timeout_ms) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (std::chrono::steady_clock::now() < deadline) {
    if (pred()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return pred();
}

}  // namespace argus::e2e
