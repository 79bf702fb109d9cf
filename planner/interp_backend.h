// planner/interp_backend.h: runs a "candidate" task on the reference
// interpreter — the worker backend of machines without a GPU, and the one the
// planner's tests use.
//
// The payload (docs/planner.md) holds the candidate and the baseline kernel.
// Both run on the same random inputs; the candidate's outputs are checked
// against the problem's reference semantics (problems.h). The interpreter
// has no clock worth timing, so "time" is its deterministic cost: the number
// of instructions executed (unit "interp_instructions"); ratio =
// baseline / candidate, like a GPU's speed-up. Outcomes: ok, wrong (with the
// first mismatching element as a counterexample), compile_error,
// runtime_error (out of bounds, divergent barrier, runaway loop, ...).
//
// Thread safety: reentrant.
#ifndef ARGUS_PLANNER_INTERP_BACKEND_H_
#define ARGUS_PLANNER_INTERP_BACKEND_H_

#include <string>

#include "absl/status/statusor.h"
#include "gpu_worker/daemon.h"

namespace argus::planner {

// A bad payload is an error status; a bad kernel is an ok result JSON whose
// outcome says what went wrong.
absl::StatusOr<std::string> RunCandidateInInterpreter(const std::string& payload_json);

// A WorkerDaemon handler for kind "candidate" over RunCandidateInInterpreter.
worker::TaskHandler InterpCandidateHandler();

}  // namespace argus::planner

#endif  // ARGUS_PLANNER_INTERP_BACKEND_H_
