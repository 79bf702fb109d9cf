// clients/batch/manifest.h: batch manifests, the batch state file and the
// result tables written by `argus batch`.
//
// A manifest (YAML or JSON, see docs/cli.md) lists problems; each problem on
// each of its targets is one entry, i.e. one job. Validation errors name the
// file, line and field: "gemms.yaml:12: problems[3].shape.M: expected an
// integer, got 'x'". The state file records, per entry, the job submitted
// for it, so that `argus batch --resume` after an interruption watches the
// jobs already submitted instead of submitting them again; it is rewritten
// atomically (temp file + rename) after every change.
//
// Thread safety: plain values and functions.
#ifndef ARGUS_CLIENTS_BATCH_MANIFEST_H_
#define ARGUS_CLIENTS_BATCH_MANIFEST_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "argus/v1/jobs.pb.h"
#include "nlohmann/json.hpp"

namespace argus::batch {

struct Entry {
  std::string key;     // "name@target", unique in the manifest
  std::string name;    // the problem's name
  std::string target;  // sm_90a, gfx942, interp, auto; "" for probes
  int line = 0;        // where the problem is in the manifest
  v1::JobSpec spec;
};

struct Manifest {
  std::string name;
  std::vector<Entry> entries;
};

// Parses and validates a manifest; `file` names it in errors. YAML unless the
// file name ends in .json or the text starts with '{'.
absl::StatusOr<Manifest> ParseManifest(const std::string& text, const std::string& file);
absl::StatusOr<Manifest> LoadManifest(const std::string& path);

// What the batch knows about one entry.
struct EntryState {
  std::string key;
  std::string job_id;  // empty: not submitted yet
  std::string state;   // queued, running, succeeded, failed, cancelled, refused
  std::string error;
  double best_speedup = 0;     // 0: none
  std::string best_candidate;  // candidate id, when the job reports one
  std::string artifact;        // where the best kernel's artifact is, when reported
  int64_t submitted_unix_ms = 0;
  int tried = 0;  // tune: candidates the planner has finished (from the job; not saved)
};

struct BatchState {
  std::string manifest;  // path of the manifest
  std::string server;
  std::map<std::string, EntryState> entries;  // by key
};

absl::StatusOr<BatchState> LoadState(const std::string& path);
absl::Status SaveState(const std::string& path, const BatchState& state);

bool Finished(const std::string& state);

// Fills state/error/best_* of `es` from a job (its result_json may carry
// {"best": {"candidate_id", "speedup", "artifact"}}).
void UpdateFromJob(const v1::Job& job, EntryState* es);

// The results table: one row per entry.
std::string ResultsCsv(const Manifest& m, const BatchState& s);
nlohmann::json ResultsJson(const Manifest& m, const BatchState& s);
// The dispatch table a runtime loads: problem/shape/dtype/target -> best
// kernel, for every entry that succeeded with a best kernel.
nlohmann::json DispatchTable(const Manifest& m, const BatchState& s);

// "M=4096,N=4096,K=4096" in the manifest's order of M, N, K, then the rest.
std::string ShapeText(const v1::Problem& p);

}  // namespace argus::batch

#endif  // ARGUS_CLIENTS_BATCH_MANIFEST_H_
