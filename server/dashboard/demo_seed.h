// server/dashboard/demo_seed.h: writes a realistic tune job (candidates and
// trajectory steps, some verified and measured, some rejected with
// counterexamples) into a JobStore through its public methods, for the
// dashboard's tests and the browser test while the planner does not yet
// produce such jobs itself. Documents the detail_json keys the dashboard reads
// (see docs/dashboard.md).
//
// Thread safety: as the JobStore.
#ifndef ARGUS_SERVER_DASHBOARD_DEMO_SEED_H_
#define ARGUS_SERVER_DASHBOARD_DEMO_SEED_H_

#include <string>

#include "absl/status/statusor.h"
#include "store/store.h"

namespace argus::dashboard {

struct SeededJob {
  std::string job_id;
  std::string best_candidate_id;
  double best_speedup = 0;
  int candidates = 0;
  int rejected = 0;
};

// Creates a tune job for a bf16 GEMM on sm_90a with `n` candidates derived
// from `source` (a DSL kernel); every fourth one is rejected by the verifier.
absl::StatusOr<SeededJob> SeedTuneJob(store::JobStore* store, const std::string& source,
                                      int n = 12);

}  // namespace argus::dashboard

#endif  // ARGUS_SERVER_DASHBOARD_DEMO_SEED_H_
