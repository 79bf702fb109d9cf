// server/limits.h: the bounds of what argus-server stores and returns.
//
// Every string, map and list a request brings is checked here before the
// store sees it, so a field over its bound is refused with INVALID_ARGUMENT
// naming the field and the bound ("spec.llm_model: 7340032 bytes, the limit
// is 256") and nothing of the request is stored. Bounded fields keep every
// stored row far below the gRPC message limit; FitJob() is the last guard of
// the answers: a job whose tasks' results together pass the response budget
// has its largest texts replaced by a note saying how much was left out, so
// GetJob, WatchJob and ListJobs never fail with RESOURCE_EXHAUSTED because of
// a row.
//
// Thread safety: pure functions.
#ifndef ARGUS_SERVER_LIMITS_H_
#define ARGUS_SERVER_LIMITS_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "argus/v1/jobs.pb.h"
#include "argus/v1/workers.pb.h"

namespace argus::server {

// Fixed bounds (bytes or entries); the two that operators tune are flags.
inline constexpr int64_t kMaxIdBytes = 128;          // job, task, worker, candidate ids
inline constexpr int64_t kMaxNameBytes = 256;        // client, family, dtype, model, keys, ...
inline constexpr int64_t kMaxUrlBytes = 2048;        // spec.llm_endpoint
inline constexpr int64_t kMaxMapEntries = 64;        // shape, options, constants, runtimes
inline constexpr int64_t kMaxDevices = 64;           // inventory.devices
inline constexpr int64_t kMaxTaskIds = 1024;         // heartbeat.task_ids
inline constexpr int64_t kMaxErrorBytes = 16 << 10;  // report.error

struct RequestLimits {
  int64_t max_source_bytes = 256 << 10;  // spec.source (--max_source_bytes)
  int64_t max_result_bytes = 256 << 10;  // report.result_json (--max_result_bytes)
};

// "FIELD: N bytes, the limit is L[ (FLAG)]" when size > limit.
absl::Status CheckSize(absl::string_view field, int64_t size, int64_t limit,
                       absl::string_view flag = "");

// Every field of a job spec except the numbers the services check themselves.
absl::Status CheckJobSpec(const v1::JobSpec& spec, const RequestLimits& limits);
absl::Status CheckInventory(const v1::Inventory& inventory);
absl::Status CheckHeartbeat(const v1::HeartbeatRequest& req);
absl::Status CheckReport(const v1::ReportResultRequest& req, const RequestLimits& limits);

// Shrinks `job` to at most `budget` serialized bytes by replacing its largest
// texts (tasks' results, then the job's result, then the spec's strings) with
// a JSON note {"elided_bytes": N, "why": ...}. Returns how many bytes it took
// out (0: the job already fit).
int64_t FitJob(v1::Job* job, int64_t budget);

}  // namespace argus::server

#endif  // ARGUS_SERVER_LIMITS_H_
