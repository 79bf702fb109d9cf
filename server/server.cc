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

namespace {

// Bounds that would let one stored row outgrow an answer are refused.
absl::Status CheckBounds(const ServerOptions& o) {
  int64_t quarter = o.max_message_bytes / 4;
  for (auto [flag, value] : {std::pair{"--max_source_bytes", int64_t{o.max_source_bytes}},
                             {"--max_result_bytes", int64_t{o.max_result_bytes}}}) {
    if (value < 1 || value > quarter) {
      return absl::InvalidArgumentError(absl::StrCat(flag, " must be in [1, ", quarter,
                                                     "] (a quarter of the ", o.max_message_bytes,
                                                     "-byte message limit)"));
    }
  }
  if (o.max_deadline_ms < 1) return absl::InvalidArgumentError("--max_deadline_ms must be >= 1");
  if (o.list_page_size < 1 || o.list_page_size > 10'000) {
    return absl::InvalidArgumentError("--list_page_size must be in [1, 10000]");
  }
  if (o.max_watchers < 1) return absl::InvalidArgumentError("--max_watchers must be >= 1");
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::string> Server::Start() {
  RETURN_IF_ERROR(CheckBounds(options_));
  store::StoreOptions store_options;
  store_options.lease_ms = options_.lease_ms;
  store_options.max_attempts = options_.max_attempts;
  store_options.new_store = options_.new_store;
  ASSIGN_OR_RETURN(options_.auth, LoadServerAuth(options_));
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
  if (store_) store_->WakeWaiters();  // long polls and streams see stopping_ now
  if (planner_) planner_->Shutdown();
  if (server_) server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
  if (reaper_.joinable()) reaper_.join();
}

void Server::Wait() {
  if (server_) server_->Wait();
}

}  // namespace argus::server
