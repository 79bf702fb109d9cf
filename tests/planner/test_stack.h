// tests/planner/test_stack.h: for the planner's tests — a real argus-server (with
// its planner) on loopback and a real worker daemon whose "candidate" handler
// runs the reference interpreter.
//
// Thread safety: use from the test's thread.
#ifndef ARGUS_TESTS_PLANNER_TEST_STACK_H_
#define ARGUS_TESTS_PLANNER_TEST_STACK_H_

#include <catch2/catch.hpp>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>

#include "argus/v1/jobs.grpc.pb.h"
#include "gpu_worker/daemon.h"
#include "planner/interp_backend.h"
#include "server/server.h"

namespace argus::planner {

namespace fs = std::filesystem;

class Stack {
 public:
  explicit Stack(const std::string& name, PlannerOptions planner = {}, bool fresh = true,
                 bool interp_handler = true) {
    db_ = (fs::temp_directory_path() / ("argus_planner_test_" + name + ".db")).string();
    if (fresh) {
      for (const char* ext : {"", "-wal", "-shm"}) fs::remove(db_ + ext);
    }
    server::ServerOptions o;
    o.db_path = db_;
    o.heartbeat_ms = 200;
    o.planner = planner;
    server_ = std::make_unique<server::Server>(o);
    address_ = *server_->Start();
    worker::DaemonOptions w;
    w.server = address_;
    w.lease_wait_ms = 200;
    worker_ = std::make_unique<worker::WorkerDaemon>(w);
    if (interp_handler) {
      worker_->Handle("candidate", InterpCandidateHandler());
    } else {
      worker_->Remove("candidate");
    }
    thread_ = std::thread([this] { (void)worker_->Run(); });
    stub_ =
        v1::JobService::NewStub(grpc::CreateChannel(address_, grpc::InsecureChannelCredentials()));
  }
  ~Stack() {
    worker_->Stop();
    thread_.join();
    server_->Shutdown();
  }
  grpc::Status Submit(const v1::JobSpec& spec, v1::Job* job) {
    grpc::ClientContext ctx;
    v1::SubmitJobRequest req;
    *req.mutable_spec() = spec;
    v1::SubmitJobResponse resp;
    auto st = stub_->SubmitJob(&ctx, req, &resp);
    *job = resp.job();
    return st;
  }
  v1::Job Tune(const v1::JobSpec& spec) {
    v1::Job job;
    auto st = Submit(spec, &job);
    REQUIRE(st.ok());
    for (int i = 0; i < 6000; ++i) {
      job = *server_->store()->GetJob(job.id(), false);
      if (job.state() >= v1::JOB_STATE_SUCCEEDED) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return job;
  }
  store::JobStore* store() { return server_->store(); }

 private:
  std::string db_, address_;
  std::unique_ptr<server::Server> server_;
  std::unique_ptr<worker::WorkerDaemon> worker_;
  std::thread thread_;
  std::unique_ptr<v1::JobService::Stub> stub_;
};

}  // namespace argus::planner

#endif  // ARGUS_TESTS_PLANNER_TEST_STACK_H_
