// tune_interp_worker: a real worker process whose "candidate" handler is the
// planner's reference-interpreter backend (planner/interp_backend.h), for the
// Python tests of `argus tune`, `argus watch` and `argus batch` with tune
// jobs on machines without a GPU. (argus-worker runs the worker's own
// candidate payload; until the planner's payload and it agree, this is the
// process that runs planner candidates on the interpreter.)
#include <iostream>

#include "base/flags.h"
#include "base/signals.h"
#include "gpu_worker/daemon.h"
#include "planner/interp_backend.h"

int main(int argc, char** argv) {
  argus::worker::DaemonOptions options;
  argus::worker::DialFiles dial;
  argus::FlagSet flags("tune_interp_worker", "--server HOST:PORT [--worker_token_file F]");
  flags.String("server", &options.server, "argus-server address");
  flags.String("worker_token_file", &dial.token_file, "file holding the worker token");
  auto args = flags.Parse(argc, argv);
  if (!args.ok() || options.server.empty()) {
    std::cerr << (args.ok() ? flags.Help() : std::string(args.status().message())) << "\n";
    return 2;
  }
  auto dial_options = argus::worker::LoadDialOptions(dial);
  if (!dial_options.ok()) {
    std::cerr << "tune_interp_worker: " << dial_options.status().message() << "\n";
    return 2;
  }
  options.dial = *dial_options;
  options.lease_wait_ms = 200;
  argus::worker::WorkerDaemon daemon(options);
  daemon.Handle("candidate", argus::planner::InterpCandidateHandler());
  argus::OnTerminationSignal([&daemon] { daemon.Stop(); });
  auto st = daemon.Run();
  if (!st.ok()) {
    std::cerr << "tune_interp_worker: " << st.message() << "\n";
    return 1;
  }
  return 0;
}
