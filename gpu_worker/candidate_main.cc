// argus-candidate: one candidate through the worker's path, without a server.
//   argus-candidate --payload P.json [--backend interp|gpu] [--runner PATH]
//   argus-candidate --payload P.json --prepare DIR   (compile + spec.json only)
// Prints the result JSON (or the spec with --prepare).
#include <fstream>
#include <iostream>
#include <sstream>

#include "base/flags.h"
#include "gpu_worker/candidate.h"
#include "gpu_worker/host_inventory.h"

int main(int argc, char** argv) {
  std::string payload, backend, runner, prepare;
  argus::FlagSet flags("argus-candidate",
                       "--payload P.json [--backend interp|gpu] [--prepare DIR]");
  flags.String("payload", &payload, "candidate payload JSON file (gpu_worker/candidate.h)");
  flags.String("backend", &backend, "interp or gpu (overrides the payload's)");
  flags.String("runner", &runner, "argus-runner path (default: beside this binary)");
  flags.String("prepare", &prepare, "only compile and write the run spec into this directory");
  auto args = flags.Parse(argc, argv);
  if (!args.ok()) {
    std::cerr << args.status().message() << "\n";
    return 2;
  }
  if (flags.help_requested()) {
    std::cout << flags.Help();
    return 0;
  }
  std::ifstream in(payload);
  if (!in) {
    std::cerr << "argus-candidate: cannot read --payload " << payload << "\n";
    return 2;
  }
  std::stringstream ss;
  ss << in.rdbuf();
  auto req = argus::worker::ParseCandidate(ss.str());
  if (!req.ok()) {
    std::cerr << "argus-candidate: " << req.status().message() << "\n";
    return 2;
  }
  if (!backend.empty()) req->backend = backend;
  if (!prepare.empty()) {
    auto spec = argus::worker::PrepareGpuRun(*req, prepare);
    if (!spec.ok()) {
      std::cerr << "argus-candidate: " << spec.status().message() << "\n";
      return 1;
    }
    std::cout << spec->dump(2) << "\n";
    return 0;
  }
  argus::worker::CandidateOptions o;
  o.runner_path = runner.empty() ? argus::worker::ExecutableDir() + "/argus-runner" : runner;
  std::cout << argus::worker::RunCandidate(*req, o).dump(2) << "\n";
  return 0;
}
