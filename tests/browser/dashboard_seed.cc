// dashboard_seed: writes a realistic tune job (candidates, trajectory,
// counterexamples) into an argus-server job store, for the browser test.
// The server may be running on the same file (SQLite WAL allows it).
#include <fstream>
#include <iostream>
#include <sstream>

#include "base/flags.h"
#include "server/dashboard/demo_seed.h"

int main(int argc, char** argv) {
  std::string db, source_file;
  int64_t n = 12;
  argus::FlagSet flags("dashboard_seed", "--db FILE --source KERNEL.py [--n N]");
  flags.String("db", &db, "job store file");
  flags.String("source", &source_file, "a DSL kernel to base the candidates on");
  flags.Int("n", &n, "number of candidates");
  auto args = flags.Parse(argc, argv);
  if (!args.ok() || db.empty() || source_file.empty()) {
    std::cerr << (args.ok() ? flags.Help() : std::string(args.status().message())) << "\n";
    return 2;
  }
  std::ifstream in(source_file);
  if (!in) {
    std::cerr << "dashboard_seed: cannot read " << source_file << "\n";
    return 2;
  }
  std::stringstream ss;
  ss << in.rdbuf();
  auto store = argus::store::JobStore::Open(db);
  if (!store.ok()) {
    std::cerr << "dashboard_seed: " << store.status().message() << "\n";
    return 1;
  }
  auto seeded = argus::dashboard::SeedTuneJob(store->get(), ss.str(), static_cast<int>(n));
  if (!seeded.ok()) {
    std::cerr << "dashboard_seed: " << seeded.status().message() << "\n";
    return 1;
  }
  std::cout << "{\"job_id\": \"" << seeded->job_id << "\", \"best_candidate_id\": \""
            << seeded->best_candidate_id << "\", \"best_speedup\": " << seeded->best_speedup
            << ", \"candidates\": " << seeded->candidates << ", \"rejected\": " << seeded->rejected
            << "}\n";
  return 0;
}
