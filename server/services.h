// server/services.h: the gRPC service implementations of argus-server.
//
// JobServiceImpl turns requests into JobStore transactions and streams job
// progress; WorkerServiceImpl registers workers and hands out leases. Every
// handler answers only after the store has committed.
//
// Thread safety: thread-safe; gRPC calls handlers from many threads.
#ifndef ARGUS_SERVER_SERVICES_H_
#define ARGUS_SERVER_SERVICES_H_

#include <atomic>

#include "argus/v1/jobs.grpc.pb.h"
#include "argus/v1/workers.grpc.pb.h"
#include "server/server.h"
#include "store/store.h"

namespace argus::planner {
class Planner;
}

namespace argus::server {

class JobServiceImpl final : public v1::JobService::Service {
 public:
  JobServiceImpl(store::JobStore* store, const ServerOptions& options,
                 const std::atomic<bool>* stopping)
      : store_(store), options_(options), stopping_(stopping) {}

  grpc::Status SubmitJob(grpc::ServerContext*, const v1::SubmitJobRequest*,
                         v1::SubmitJobResponse*) override;
  grpc::Status GetJob(grpc::ServerContext*, const v1::GetJobRequest*, v1::Job*) override;
  grpc::Status ListJobs(grpc::ServerContext*, const v1::ListJobsRequest*,
                        v1::ListJobsResponse*) override;
  grpc::Status CancelJob(grpc::ServerContext*, const v1::CancelJobRequest*, v1::Job*) override;
  grpc::Status WatchJob(grpc::ServerContext*, const v1::WatchJobRequest*,
                        grpc::ServerWriter<v1::JobEvent>*) override;
  grpc::Status ListWorkers(grpc::ServerContext*, const v1::ListWorkersRequest*,
                           v1::ListWorkersResponse*) override;
  grpc::Status ListArtifacts(grpc::ServerContext*, const v1::ListArtifactsRequest*,
                             v1::ListArtifactsResponse*) override;
  // Tune jobs go to the planner; without one they are refused.
  void set_planner(planner::Planner* planner) { planner_ = planner; }

 private:
  planner::Planner* planner_ = nullptr;
  store::JobStore* store_;
  ServerOptions options_;
  const std::atomic<bool>* stopping_;
  std::atomic<int> watchers_{0};  // open WatchJob streams
};

class WorkerServiceImpl final : public v1::WorkerService::Service {
 public:
  WorkerServiceImpl(store::JobStore* store, const ServerOptions& options,
                    const std::atomic<bool>* stopping)
      : store_(store), options_(options), stopping_(stopping) {}

  grpc::Status RegisterWorker(grpc::ServerContext*, const v1::RegisterWorkerRequest*,
                              v1::RegisterWorkerResponse*) override;
  grpc::Status LeaseTask(grpc::ServerContext*, const v1::LeaseTaskRequest*,
                         v1::LeaseTaskResponse*) override;
  grpc::Status Heartbeat(grpc::ServerContext*, const v1::HeartbeatRequest*,
                         v1::HeartbeatResponse*) override;
  grpc::Status ReportResult(grpc::ServerContext*, const v1::ReportResultRequest*,
                            v1::ReportResultResponse*) override;

 private:
  store::JobStore* store_;
  ServerOptions options_;
  const std::atomic<bool>* stopping_;
};

// An event for `job` as it stands: task counts, elapsed and remaining time,
// and for tune jobs the planner's progress (TuneProgress) read from the
// summary it stores after each step (planner/planner.h); a tune job without a
// max_candidates of its own has the planner's `default_max_candidates`.
v1::JobEvent MakeJobEvent(const v1::Job& job, const std::string& message,
                          int default_max_candidates = 0);

}  // namespace argus::server

#endif  // ARGUS_SERVER_SERVICES_H_
