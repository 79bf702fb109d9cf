#include "server/limits.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status.h"
#include "nlohmann/json.hpp"

namespace argus::server {
namespace {

absl::Status CheckCount(absl::string_view field, int64_t n, int64_t limit) {
  if (n <= limit) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(field, ": ", n, " entries, the limit is ", limit));
}

// A map of names: its entry count, every key, and (for string maps) every value.
template <typename Map>
absl::Status CheckMap(absl::string_view field, const Map& map) {
  RETURN_IF_ERROR(CheckCount(field, static_cast<int64_t>(map.size()), kMaxMapEntries));
  for (const auto& [key, value] : map) {
    RETURN_IF_ERROR(CheckSize(absl::StrCat(field, " key"), key.size(), kMaxNameBytes));
    if constexpr (std::is_same_v<std::decay_t<decltype(value)>, std::string>) {
      RETURN_IF_ERROR(
          CheckSize(absl::StrCat(field, "[", key.substr(0, 64), "]"), value.size(), kMaxNameBytes));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckName(absl::string_view field, const std::string& value) {
  return CheckSize(field, static_cast<int64_t>(value.size()), kMaxNameBytes);
}

absl::Status CheckId(absl::string_view field, const std::string& value) {
  return CheckSize(field, static_cast<int64_t>(value.size()), kMaxIdBytes);
}

std::string ElidedNote(int64_t bytes) {
  return nlohmann::json({{"elided_bytes", bytes},
                         {"why", "over the response budget; the full text stays in the store"}})
      .dump();
}

}  // namespace

absl::Status CheckSize(absl::string_view field, int64_t size, int64_t limit,
                       absl::string_view flag) {
  if (size <= limit) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(field, ": ", size, " bytes, the limit is ", limit,
                                                 flag.empty() ? "" : " (", flag,
                                                 flag.empty() ? "" : ")"));
}

absl::Status CheckJobSpec(const v1::JobSpec& spec, const RequestLimits& limits) {
  RETURN_IF_ERROR(CheckSize("spec.source", static_cast<int64_t>(spec.source().size()),
                            limits.max_source_bytes, "--max_source_bytes"));
  RETURN_IF_ERROR(CheckName("spec.client", spec.client()));
  RETURN_IF_ERROR(CheckName("spec.target", spec.target()));
  RETURN_IF_ERROR(CheckName("spec.policy", spec.policy()));
  RETURN_IF_ERROR(CheckName("spec.llm_model", spec.llm_model()));
  RETURN_IF_ERROR(CheckSize("spec.llm_endpoint", static_cast<int64_t>(spec.llm_endpoint().size()),
                            kMaxUrlBytes));
  RETURN_IF_ERROR(CheckMap("spec.constants", spec.constants()));
  const v1::Problem& p = spec.problem();
  RETURN_IF_ERROR(CheckName("spec.problem.family", p.family()));
  RETURN_IF_ERROR(CheckName("spec.problem.dtype", p.dtype()));
  RETURN_IF_ERROR(CheckMap("spec.problem.shape", p.shape()));
  RETURN_IF_ERROR(CheckMap("spec.problem.options", p.options()));
  return absl::OkStatus();
}

absl::Status CheckInventory(const v1::Inventory& inv) {
  RETURN_IF_ERROR(CheckName("inventory.hostname", inv.hostname()));
  RETURN_IF_ERROR(CheckName("inventory.worker_version", inv.worker_version()));
  RETURN_IF_ERROR(CheckCount("inventory.devices", inv.devices_size(), kMaxDevices));
  for (const v1::Device& d : inv.devices()) {
    RETURN_IF_ERROR(CheckName("inventory.devices.backend", d.backend()));
    RETURN_IF_ERROR(CheckName("inventory.devices.name", d.name()));
    RETURN_IF_ERROR(CheckName("inventory.devices.arch", d.arch()));
  }
  // Runtime values are dlopen messages, longer than a name.
  RETURN_IF_ERROR(CheckCount("inventory.runtimes", inv.runtimes_size(), kMaxMapEntries));
  for (const auto& [lib, what] : inv.runtimes()) {
    RETURN_IF_ERROR(CheckName("inventory.runtimes key", lib));
    RETURN_IF_ERROR(
        CheckSize("inventory.runtimes value", static_cast<int64_t>(what.size()), kMaxUrlBytes));
  }
  return absl::OkStatus();
}

absl::Status CheckHeartbeat(const v1::HeartbeatRequest& req) {
  RETURN_IF_ERROR(CheckId("worker_id", req.worker_id()));
  RETURN_IF_ERROR(CheckCount("task_ids", req.task_ids_size(), kMaxTaskIds));
  for (const auto& id : req.task_ids()) RETURN_IF_ERROR(CheckId("task_ids", id));
  return absl::OkStatus();
}

absl::Status CheckReport(const v1::ReportResultRequest& req, const RequestLimits& limits) {
  RETURN_IF_ERROR(CheckId("worker_id", req.worker_id()));
  RETURN_IF_ERROR(CheckId("task_id", req.task_id()));
  RETURN_IF_ERROR(CheckSize("result_json", static_cast<int64_t>(req.result_json().size()),
                            limits.max_result_bytes, "--max_result_bytes"));
  RETURN_IF_ERROR(CheckSize("error", static_cast<int64_t>(req.error().size()), kMaxErrorBytes));
  return absl::OkStatus();
}

int64_t FitJob(v1::Job* job, int64_t budget) {
  int64_t size = static_cast<int64_t>(job->ByteSizeLong());
  if (size <= budget) return 0;
  std::vector<std::string*> texts;
  for (v1::Task& t : *job->mutable_tasks()) texts.push_back(t.mutable_result_json());
  std::stable_sort(texts.begin(), texts.end(), [](const std::string* a, const std::string* b) {
    return a->size() > b->size();
  });
  texts.push_back(job->mutable_result_json());
  v1::JobSpec* spec = job->mutable_spec();
  // Rows stored before today's bounds may hold anything in any string.
  for (std::string* s : {spec->mutable_source(), spec->mutable_llm_model(),
                         spec->mutable_llm_endpoint(), spec->mutable_client(),
                         spec->mutable_target(), spec->mutable_policy(), job->mutable_error()}) {
    texts.push_back(s);
  }
  int64_t removed = 0;
  for (std::string* text : texts) {
    if (size <= budget) break;
    std::string note = ElidedNote(static_cast<int64_t>(text->size()));
    if (note.size() >= text->size()) continue;
    int64_t saved = static_cast<int64_t>(text->size() - note.size());
    removed += saved;
    size -= saved;  // an upper bound: shorter lengths may also shorten their varints
    *text = std::move(note);
  }
  return removed;
}

}  // namespace argus::server
