// clients/cli/embedded.h: the embedded default — an in-process argus-server
// and a local worker, for commands run without --server.
//
// The store lives in a per-user state directory ($ARGUS_HOME, else
// $XDG_STATE_HOME/argus, else ~/.local/state/argus) so results outlive the
// command. The server listens on loopback only.
//
// Thread safety: Start/Stop from one thread.
#ifndef ARGUS_CLIENTS_CLI_EMBEDDED_H_
#define ARGUS_CLIENTS_CLI_EMBEDDED_H_

#include <memory>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "clients/cli/connection.h"
#include "gpu_worker/daemon.h"
#include "planner/llm_endpoints.h"
#include "server/server.h"

namespace argus::cli {

// How the embedded server and its worker are set up. The defaults serve
// probes; `argus tune` holds leases longer (a full-size GPU candidate can run
// for a minute) and may give the worker the planner's candidate handler.
struct EmbeddedOptions {
  // Serve the store for reading only, with no worker (ServerOptions::read_only):
  // for the verbs that look at jobs an earlier embedded command ran.
  bool read_only = false;
  int64_t lease_ms = 5000;
  int64_t lease_wait_ms = 500;
  worker::CandidateOptions candidate;     // the worker's own candidate handler's
  worker::TaskHandler candidate_handler;  // when set, replaces that handler
  // The LLM endpoints the embedded planner may call: the user's own (argus
  // tune --llm_endpoint URL), as an operator gives them to argus-server.
  std::vector<planner::LlmEndpoint> llm_endpoints;
};

class Embedded {
 public:
  ~Embedded();
  // Starts the server and one local worker and waits until it registered.
  // Returns the server address.
  absl::StatusOr<std::string> Start(const std::string& db_path,
                                    const EmbeddedOptions& options = {});
  void Stop();

 private:
  std::unique_ptr<server::Server> server_;
  std::unique_ptr<worker::WorkerDaemon> worker_;
  std::thread worker_thread_;
};

// Where the embedded store lives (created if missing).
absl::StatusOr<std::string> EmbeddedStateDir();

// The embedded store: EmbeddedStateDir()/argus.db, the one store every
// command run without --server uses.
absl::StatusOr<std::string> EmbeddedStorePath();

// A connection to --server / $ARGUS_SERVER; with neither, to a read-only
// embedded server over the embedded store when there is one (what earlier
// commands without --server wrote), else an error saying how to name a
// server. `embedded_store` is set to the store's path in the second case.
absl::StatusOr<std::unique_ptr<Connection>> ConnectOrOpenEmbeddedStore(
    const std::string& server_flag, const worker::DialFiles& dial,
    std::string* embedded_store = nullptr);

}  // namespace argus::cli

#endif  // ARGUS_CLIENTS_CLI_EMBEDDED_H_
