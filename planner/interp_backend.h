// planner/interp_backend.h: the planner's interpreter worker — the worker's
// own interpreter backend (gpu_worker/candidate.h) given the problem
// catalog's reference semantics, for the embedded `argus tune` and the
// planner's tests.
//
// Payloads are the one candidate schema (gpu_worker/candidate_schema.h).
// With check op "problem" the inputs get the problem's valid values
// (PrepareInputs: e.g. expert ids) and the outputs are checked against
// problems.h's Reference() with ToleranceFor() (the first mismatching element
// is the counterexample); runner check ops use runner_core's references, as
// on any worker. The baseline kernel runs on the same inputs; "time" is the
// interpreted instruction count (unit "interp_instructions"), "speedup" =
// baseline_time / time.
//
// Thread safety: reentrant.
#ifndef ARGUS_PLANNER_INTERP_BACKEND_H_
#define ARGUS_PLANNER_INTERP_BACKEND_H_

#include <string>

#include "absl/status/statusor.h"
#include "gpu_worker/candidate.h"
#include "gpu_worker/daemon.h"

namespace argus::planner {

// The problem catalog as a worker's ProblemReference.
worker::ProblemReference CatalogReference();

// Worker options of the planner's interpreter worker (interp backend,
// CatalogReference).
worker::CandidateOptions InterpCandidateOptions();

// A bad payload is an error status; a bad kernel is an ok result JSON whose
// outcome says what went wrong.
absl::StatusOr<std::string> RunCandidateInInterpreter(const std::string& payload_json);

// A WorkerDaemon handler for kind "candidate" over RunCandidateInInterpreter.
worker::TaskHandler InterpCandidateHandler();

}  // namespace argus::planner

#endif  // ARGUS_PLANNER_INTERP_BACKEND_H_
