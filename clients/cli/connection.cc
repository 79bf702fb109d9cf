#include "clients/cli/connection.h"

#include <cstdlib>
#include <iostream>
#include <optional>
#include <thread>

#include "absl/strings/str_cat.h"
#include "clients/cli/server_strings.h"
#include "proto/status.h"

namespace argus::cli {

std::string ResolveServerAddress(const std::string& flag_value) {
  if (!flag_value.empty()) return flag_value;
  const char* env = std::getenv("ARGUS_SERVER");
  return env ? env : "";
}

absl::StatusOr<worker::DialOptions> ResolveDialOptions(const worker::DialFiles& files) {
  auto dial = worker::LoadDialOptions(files);
  if (!dial.ok()) return dial.status();
  const char* env = std::getenv("ARGUS_TOKEN");
  if (files.token_file.empty() && env) dial->token = env;
  return dial;
}

bool JobFinished(v1::JobState s) {
  return s == v1::JOB_STATE_SUCCEEDED || s == v1::JOB_STATE_FAILED || s == v1::JOB_STATE_CANCELLED;
}

Connection::Connection(std::string address, const worker::DialOptions& dial)
    : address_(std::move(address)) {
  grpc::ChannelArguments args;
  worker::SetFastReconnect(&args);  // a watch resumes soon after a server restart
  args.SetMaxReceiveMessageSize(64 << 20);
  channel_ = worker::Dial(address_, dial, args);
  jobs_ = v1::JobService::NewStub(channel_);
}

std::unique_ptr<grpc::ClientContext> Connection::Context(std::chrono::milliseconds timeout) const {
  auto ctx = std::make_unique<grpc::ClientContext>();
  ctx->set_deadline(std::chrono::system_clock::now() + timeout);
  return ctx;
}

absl::Status Connection::Failed(const std::string& what, const grpc::Status& st) const {
  absl::Status s = FromGrpc(st);
  if (st.error_code() == grpc::UNAVAILABLE || st.error_code() == grpc::DEADLINE_EXCEEDED) {
    return absl::UnavailableError(
        absl::StrCat("cannot reach argus-server at ", address_, ": ", st.error_message()));
  }
  return absl::Status(s.code(), absl::StrCat(what, ": ", st.error_message()));
}

absl::StatusOr<v1::Job> Connection::Submit(const v1::JobSpec& spec) {
  v1::SubmitJobRequest req;
  *req.mutable_spec() = spec;
  v1::SubmitJobResponse resp;
  auto ctx = Context();
  grpc::Status st = jobs_->SubmitJob(ctx.get(), req, &resp);
  if (!st.ok()) return Failed("submit", st);
  for (const auto& notice : resp.notices()) std::cerr << "argus: note: " << notice << "\n";
  // Job ids name files (artifacts, batch state): a plain name or nothing.
  if (auto bad = CheckFileNamePart("the job id", resp.job().id()); !bad.ok()) return bad;
  return resp.job();
}

absl::StatusOr<v1::Job> Connection::Get(const std::string& id) {
  v1::GetJobRequest req;
  req.set_id(id);
  v1::Job job;
  auto ctx = Context();
  grpc::Status st = jobs_->GetJob(ctx.get(), req, &job);
  if (!st.ok()) return Failed("job " + id, st);
  return job;
}

absl::StatusOr<std::optional<v1::Artifact>> Connection::BestArtifact(const std::string& job,
                                                                     const std::string& candidate,
                                                                     const std::string& target) {
  if (candidate.empty()) return std::optional<v1::Artifact>();
  v1::ListArtifactsRequest req;
  req.set_job_id(job);
  req.set_candidate_id(candidate);
  v1::ListArtifactsResponse resp;
  auto ctx = Context();
  grpc::Status st = jobs_->ListArtifacts(ctx.get(), req, &resp);
  if (!st.ok()) return Failed("artifacts of job " + job, st);
  std::optional<v1::Artifact> pick;
  for (const auto& a : resp.artifacts()) {
    if (a.kind() != "ptx" && a.kind() != "hsaco") continue;
    if (!pick || (a.target() == target && pick->target() != target)) pick = a;
  }
  return pick;
}

absl::StatusOr<v1::Job> Connection::Watch(const std::string& id,
                                          const std::function<void(const v1::JobEvent&)>& on_event,
                                          std::chrono::milliseconds reconnect_for) {
  auto broken_since = std::chrono::steady_clock::time_point{};
  while (true) {
    v1::WatchJobRequest req;
    req.set_id(id);
    grpc::ClientContext ctx;  // no deadline: jobs may run long
    auto reader = jobs_->WatchJob(&ctx, req);
    v1::JobEvent ev;
    std::optional<v1::Job> last;
    while (reader->Read(&ev)) {
      broken_since = {};
      on_event(ev);
      last = ev.job();
    }
    grpc::Status st = reader->Finish();
    if (last && JobFinished(last->state())) return *last;
    if (st.ok()) {
      // The stream ended cleanly; the job must have finished.
      return Get(id);
    }
    if (st.error_code() == grpc::RESOURCE_EXHAUSTED) {
      // The server's streams are all taken (--max_watchers): poll instead.
      auto job = Get(id);
      if (!job.ok()) return job.status();
      v1::JobEvent polled;
      polled.set_job_id(id);
      polled.set_state(job->state());
      *polled.mutable_job() = *job;
      on_event(polled);
      if (JobFinished(job->state())) return *job;
      std::this_thread::sleep_for(std::chrono::seconds(1));
      continue;
    }
    if (st.error_code() != grpc::UNAVAILABLE) return Failed("watch " + id, st);
    // The server went away: reconnect and resume.
    auto now = std::chrono::steady_clock::now();
    if (broken_since == std::chrono::steady_clock::time_point{}) broken_since = now;
    if (now - broken_since > reconnect_for) return Failed("watch " + id, st);
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
}

}  // namespace argus::cli
