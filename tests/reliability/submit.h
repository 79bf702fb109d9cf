// tests/reliability/submit.h: the requests the reliability tests send to a
// real argus-server: a context with a deadline, a probe job, a small tune
// job on the interpreter.
//
// Thread safety: the functions share nothing; a stub may be shared.
#ifndef ARGUS_TESTS_RELIABILITY_SUBMIT_H_
#define ARGUS_TESTS_RELIABILITY_SUBMIT_H_

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <memory>
#include <string>

#include "argus/v1/jobs.grpc.pb.h"

namespace argus::reliability {

inline std::unique_ptr<grpc::ClientContext> Ctx(int seconds = 10) {
  auto ctx = std::make_unique<grpc::ClientContext>();
  ctx->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(seconds));
  return ctx;
}

// A probe job for one worker, submitted as `client`; its id in *id.
inline grpc::Status SubmitProbe(v1::JobService::Stub* jobs, const std::string& client,
                                std::string* id = nullptr) {
  v1::SubmitJobRequest req;
  req.mutable_spec()->set_kind(v1::JOB_KIND_PROBE);
  req.mutable_spec()->set_probe_workers(1);
  req.mutable_spec()->set_client(client);
  v1::SubmitJobResponse resp;
  auto st = jobs->SubmitJob(Ctx().get(), req, &resp);
  if (id) *id = resp.job().id();
  return st;
}

// A tune job of softmax 4 x n (f32) on the interpreter, trying `candidates`.
inline grpc::Status SubmitTune(v1::JobService::Stub* jobs, int64_t n, int candidates,
                               const std::string& client, std::string* id = nullptr) {
  v1::SubmitJobRequest req;
  v1::JobSpec* spec = req.mutable_spec();
  spec->set_kind(v1::JOB_KIND_TUNE);
  spec->set_target("interp");
  spec->set_max_candidates(candidates);
  spec->set_client(client);
  spec->mutable_problem()->set_family("softmax");
  spec->mutable_problem()->set_dtype("f32");
  (*spec->mutable_problem()->mutable_shape())["R"] = 4;
  (*spec->mutable_problem()->mutable_shape())["N"] = n;
  v1::SubmitJobResponse resp;
  auto st = jobs->SubmitJob(Ctx().get(), req, &resp);
  if (id) *id = resp.job().id();
  return st;
}

}  // namespace argus::reliability

#endif  // ARGUS_TESTS_RELIABILITY_SUBMIT_H_
