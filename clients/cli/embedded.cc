#include "clients/cli/embedded.h"

#include <cstdlib>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "base/status.h"
#include "server/clock.h"
#include "spdlog/spdlog.h"

namespace argus::cli {

absl::StatusOr<std::string> EmbeddedStateDir() {
  std::filesystem::path dir;
  if (const char* home = std::getenv("ARGUS_HOME"); home && *home) {
    dir = home;
  } else if (const char* state = std::getenv("XDG_STATE_HOME"); state && *state) {
    dir = std::filesystem::path(state) / "argus";
  } else if (const char* h = std::getenv("HOME"); h && *h) {
    dir = std::filesystem::path(h) / ".local/state/argus";
  } else {
    dir = std::filesystem::temp_directory_path() / "argus";
  }
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec)
    return absl::FailedPreconditionError(
        absl::StrCat("cannot create ", dir.string(), ": ", ec.message()));
  return dir.string();
}

absl::StatusOr<std::string> EmbeddedStorePath() {
  ASSIGN_OR_RETURN(std::string dir, EmbeddedStateDir());
  return dir + "/argus.db";
}

absl::StatusOr<std::unique_ptr<Connection>> ConnectOrOpenEmbeddedStore(
    const std::string& server_flag, const worker::DialFiles& dial, std::string* embedded_store) {
  std::string addr = ResolveServerAddress(server_flag);
  if (!addr.empty()) {
    ASSIGN_OR_RETURN(worker::DialOptions options, ResolveDialOptions(dial));
    return std::make_unique<Connection>(addr, options);
  }
  ASSIGN_OR_RETURN(std::string db, EmbeddedStorePath());
  if (!std::filesystem::exists(db)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "no server: pass --server HOST:PORT or set ARGUS_SERVER (and no embedded store at ", db,
        ": no command has run without --server yet)"));
  }
  auto embedded = std::make_shared<Embedded>();
  EmbeddedOptions options;
  options.read_only = true;
  ASSIGN_OR_RETURN(std::string address, embedded->Start(db, options));
  auto conn = std::make_unique<Connection>(address);
  conn->KeepServerAlive(std::move(embedded));
  if (embedded_store) *embedded_store = db;
  return conn;
}

Embedded::~Embedded() { Stop(); }

absl::StatusOr<std::string> Embedded::Start(const std::string& db_path,
                                            const EmbeddedOptions& embedded) {
  server::ServerOptions options;
  options.listen = "127.0.0.1:0";
  options.db_path = db_path;
  options.heartbeat_ms = 500;
  options.lease_ms = embedded.lease_ms;
  options.read_only = embedded.read_only;
  options.planner.llm_endpoints = embedded.llm_endpoints;
  server_ = std::make_unique<server::Server>(options);
  ASSIGN_OR_RETURN(std::string address, server_->Start());
  if (embedded.read_only) return address;
  worker::DaemonOptions wopts;
  wopts.server = address;
  wopts.lease_wait_ms = embedded.lease_wait_ms;
  wopts.candidate = embedded.candidate;
  worker_ = std::make_unique<worker::WorkerDaemon>(wopts);
  if (embedded.candidate_handler) worker_->Handle("candidate", embedded.candidate_handler);
  worker_thread_ = std::thread([this] {
    auto st = worker_->Run();
    if (!st.ok()) spdlog::error("embedded worker: {}", st.ToString());
  });
  // Wait for the worker to register so that a probe finds it.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < deadline) {
    auto alive = server_->store()->AliveWorkers(server::NowMs(), 1500);
    if (alive.ok() && !alive->empty() && !worker_->worker_id().empty()) return address;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return absl::DeadlineExceededError("the embedded worker did not register within 60 s");
}

void Embedded::Stop() {
  if (worker_) worker_->Stop();
  if (worker_thread_.joinable()) worker_thread_.join();
  if (server_) server_->Shutdown();
}

}  // namespace argus::cli
