// verifier/verify.h: the verifier — proves a kernel's data-flow invariants.
//
// Verify() runs an abstract interpretation of each kernel of a Module over
// one symbolic thread (thread id, block ids, loop iterations and element
// indexes are Z3 integers with their ranges; loops are never unrolled: a
// loop body is interpreted once for a symbolic iteration k and facts about
// earlier iterations are instances of the same events at k-1, k-2, ... or
// at any earlier iteration). Shared memory is a list of write events; a read
// is resolved to the most recent write that covers its element. Each
// obligation (tag assertions, bounds, races, async waits, barrier
// divergence, MMA K agreement, uninitialized reads) is discharged with
// Solver::Prove; refutations become Counterexamples (report.h). Results are
// cached by (IR dump hash, dims, options).
//
// Thread safety: Verify() is reentrant (each call has its own Z3 context);
// the cache is guarded by a mutex.
#ifndef ARGUS_VERIFIER_VERIFY_H_
#define ARGUS_VERIFIER_VERIFY_H_

#include <cstdint>
#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "dsl/check.h"
#include "dsl/ir.h"
#include "verifier/report.h"
#include "verifier/solver.h"

namespace argus::verifier {

struct VerifyOptions {
  // Concrete values of symbolic tensor dims (e.g. M=4096); others are
  // symbolic in [1, max_dim].
  std::map<std::string, int64_t> dims;
  int64_t max_dim = int64_t{1} << 20;
  // Z3 steps per obligation: exhausting them is "unknown". Deterministic, so
  // a kernel's verdict does not depend on the machine's load.
  uint64_t solver_rlimit = Solver::kDefaultRlimit;
  // Wall-clock last resort per obligation (a watchdog interrupts Z3); well
  // above what solver_rlimit allows, so it decides only pathological queries.
  unsigned solver_timeout_ms = 60'000;
  int window = 4;  // earlier iterations resolved exactly
  bool use_cache = true;
  // Wall-clock budget for the whole verification (0: none). Obligations
  // past it are reported "unknown: deadline exceeded", never "proved".
  int64_t deadline_ms = 0;
  // Verify only the kernel of this name (a file may hold several, e.g. the
  // serial, overlapped and ping-pong FA3 kernels); empty: every kernel.
  std::string kernel;
};

absl::StatusOr<Report> Verify(const dsl::ir::Module& module, const VerifyOptions& options);

// Compiles `text` (with constant overrides) and verifies it. Input errors
// are kInvalidArgument with the front end's located diagnostic.
absl::StatusOr<Report> VerifySource(const std::string& file_name, const std::string& text,
                                    const dsl::CheckOptions& check, const VerifyOptions& options);

}  // namespace argus::verifier

#endif  // ARGUS_VERIFIER_VERIFY_H_
