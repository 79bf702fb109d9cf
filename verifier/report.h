// verifier/report.h: what a verification found — one structure, rendered as
// text for people and JSON for the planner.
//
// A Report lists Findings: a violated invariant (with a Counterexample taken
// from a Z3 model), an "unknown" (solver timeout, unsupported construct) or a
// note. A kernel is verified only when every obligation was proved and no
// finding is a violation or an unknown.
//
// Thread safety: plain data; the functions are pure.
#ifndef ARGUS_VERIFIER_REPORT_H_
#define ARGUS_VERIFIER_REPORT_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "dsl/source.h"

namespace argus::verifier {

struct Counterexample {
  std::vector<int64_t> block;  // block_id(0..2)
  int64_t thread = -1, warp = -1, lane = -1;
  int64_t element = -1;                       // index within the thread's fragment, or -1
  std::vector<int64_t> coordinates;           // logical coordinates of the element
  std::map<std::string, int64_t> iterations;  // loop variable -> value
  std::string expected, actual;
  dsl::Loc written_at;            // where the actual value was written ({0,0}: never)
  std::string written_source;     // that statement's source line
  std::string written_iteration;  // e.g. "k=3"
  std::string other;              // a second party (the other thread of a race)
};

enum class Severity { kViolation, kUnknown, kNote };

struct Finding {
  Severity severity = Severity::kViolation;
  std::string check;  // tag_assert, oob, shared_race, read_before_wait, ...
  std::string message;
  dsl::Loc loc;
  std::string source_line;
  bool has_cex = false;
  Counterexample cex;
};

struct Report {
  std::string file, kernel;
  int obligations = 0, proved = 0;
  double seconds = 0;
  // Z3 steps of the costliest obligation (what solver_rlimit bounds).
  uint64_t max_steps = 0;
  bool cached = false;
  std::vector<Finding> findings;
  bool verified() const;
};

const char* SeverityName(Severity s);
std::string ToText(const Report& r);
std::string ToJson(const Report& r);

}  // namespace argus::verifier

#endif  // ARGUS_VERIFIER_REPORT_H_
