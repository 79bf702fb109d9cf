// clients/cli/connection.h: how the CLI reaches argus-server.
//
// The address comes from --server, else $ARGUS_SERVER. Every call has a
// deadline; an unreachable server becomes one UNAVAILABLE status naming the
// address, never a hang.
//
// Thread safety: a Connection may be shared by threads (gRPC stubs are).
#ifndef ARGUS_CLIENTS_CLI_CONNECTION_H_
#define ARGUS_CLIENTS_CLI_CONNECTION_H_

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "argus/v1/jobs.grpc.pb.h"
#include "gpu_worker/dial.h"

namespace argus::cli {

class Connection {
 public:
  explicit Connection(std::string address, const worker::DialOptions& dial = {});
  const std::string& address() const { return address_; }
  // Keeps `server` (an in-process one this connection talks to) alive until
  // the connection is gone.
  void KeepServerAlive(std::shared_ptr<void> server) { server_ = std::move(server); }
  v1::JobService::Stub* jobs() { return jobs_.get(); }

  // A context with the default deadline (or `timeout`).
  std::unique_ptr<grpc::ClientContext> Context(
      std::chrono::milliseconds timeout = std::chrono::seconds(15)) const;
  // Converts a failed call into a status whose message is fit for the user.
  absl::Status Failed(const std::string& what, const grpc::Status& st) const;

  absl::StatusOr<v1::Job> Submit(const v1::JobSpec& spec);
  absl::StatusOr<v1::Job> Get(const std::string& id);
  // The compiled kernel stored for a job's candidate (ListArtifacts): a ptx
  // or hsaco artifact, of `target` where there are several; nullopt if none.
  absl::StatusOr<std::optional<v1::Artifact>> BestArtifact(const std::string& job,
                                                           const std::string& candidate,
                                                           const std::string& target);
  // Streams events until the job ends, calling on_event for each. Reconnects
  // (and resumes) when the stream breaks, for up to `reconnect_for`.
  absl::StatusOr<v1::Job> Watch(const std::string& id,
                                const std::function<void(const v1::JobEvent&)>& on_event,
                                std::chrono::milliseconds reconnect_for = std::chrono::seconds(60));

 private:
  std::shared_ptr<void> server_;  // destroyed after the channel and stub below
  std::string address_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::JobService::Stub> jobs_;
};

// --server if given, else $ARGUS_SERVER, else "".
std::string ResolveServerAddress(const std::string& flag_value);

// Token from --token_file, else $ARGUS_TOKEN; TLS from --tls_ca/--tls_cert/--tls_key.
absl::StatusOr<worker::DialOptions> ResolveDialOptions(const worker::DialFiles& files);

bool JobFinished(v1::JobState s);

}  // namespace argus::cli

#endif  // ARGUS_CLIENTS_CLI_CONNECTION_H_
