#include "server/server.h"

#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/health_check_service_interface.h>

#include "absl/strings/str_cat.h"
#include "base/status.h"
#include "server/auth.h"
#include "server/clock.h"
#include "server/services.h"
#include "spdlog/spdlog.h"

namespace argus::server {

Server::Server(ServerOptions options) : options_(std::move(options)) {}

Server::~Server() { Shutdown(); }

absl::StatusOr<std::string> Server::Start() {
  store::StoreOptions store_options;
  store_options.lease_ms = options_.lease_ms;
  store_options.max_attempts = options_.max_attempts;
  store_options.new_store = options_.new_store;
  ASSIGN_OR_RETURN(options_.auth,
                   Authenticator::FromFiles(options_.token_file, options_.worker_token_file,
                                            options_.admin_token_file));
  ASSIGN_OR_RETURN(auto credentials, MakeServerCredentials(options_));
  ASSIGN_OR_RETURN(store_, store::JobStore::Open(options_.db_path, store_options));
  jobs_ = std::make_unique<JobServiceImpl>(store_.get(), options_, &stopping_);
  if (!options_.read_only) {
    planner_ = std::make_unique<planner::Planner>(store_.get(), options_.planner);
    if (auto st = planner_->Init(); !st.ok()) {
      spdlog::warn("planner: {} (tune jobs will fail)", st.ToString());
    }
    jobs_->set_planner(planner_.get());
    workers_ = std::make_unique<WorkerServiceImpl>(store_.get(), options_, &stopping_);
  }

  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort(options_.listen, credentials, &port);
  builder.SetMaxReceiveMessageSize(options_.max_message_bytes);
  builder.SetMaxSendMessageSize(options_.max_message_bytes);
  builder.RegisterService(jobs_.get());
  if (workers_) builder.RegisterService(workers_.get());
  server_ = builder.BuildAndStart();
  if (!server_ || port == 0) {
    server_.reset();
    return absl::UnavailableError(
        absl::StrCat("cannot listen on ", options_.listen, " (address in use or invalid)"));
  }
  std::string host = options_.listen.substr(0, options_.listen.rfind(':'));
  if (options_.read_only) return absl::StrCat(host, ":", port);
  reaper_ = std::thread([this] { ReapLoop(); });
  if (auto st = planner_->ResumeUnfinished(); !st.ok()) {
    spdlog::error("planner: resuming tune jobs: {}", st.ToString());
  }
  return absl::StrCat(host, ":", port);
}

void Server::ReapLoop() {
  while (!stopping_.load()) {
    int64_t now = NowMs();
    auto expired = store_->ExpireLeases(now);
    if (!expired.ok()) {
      spdlog::error("lease reaper: {}", expired.status().ToString());
    } else if (*expired > 0) {
      spdlog::info("lease reaper: {} expired leases returned to the queue", *expired);
    }
    auto overdue = store_->FailOverdueJobs(now);
    if (overdue.ok()) {
      for (const auto& id : *overdue) spdlog::warn("job {} failed: deadline exceeded", id);
    }
    for (int i = 0; i < 10 && !stopping_.load(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
}

void Server::Shutdown() {
  std::lock_guard lock(shutdown_mu_);
  stopping_.store(true);
  if (planner_) planner_->Shutdown();
  if (server_) server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
  if (reaper_.joinable()) reaper_.join();
}

void Server::Wait() {
  if (server_) server_->Wait();
}

}  // namespace argus::server
