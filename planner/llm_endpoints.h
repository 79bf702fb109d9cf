// planner/llm_endpoints.h: the LLM endpoints an operator allows, with the API
// key of each.
//
// The endpoints, their URLs and their keys are the server's configuration
// (argus-server --llm_endpoints FILE), never a job's: a tune job with policy
// "llm" may only name one of them (JobSpec.llm_endpoint; empty: the first),
// so no job can send a key to a listener of its own choosing. The file:
//
//   {"endpoints": [{"name": "local", "url": "http://127.0.0.1:8000/v1",
//                   "model": "qwen2.5-coder", "api_key_file": "/etc/argus/llm.key",
//                   "max_reply_bytes": 4194304}]}
//
// `api_key_file` (a secret file, base/secret_file.h) or `api_key_env` (a
// variable of the server's environment) give the key; neither: no key.
// URLs are checked when loaded (ValidateLlmUrl): http:// only (the built-in
// client speaks no TLS: put an https service behind a local gateway), a host
// of letters, digits, '.', '-' or an [IPv6] literal, a numeric port, no user
// info, and no control character, space or CR/LF anywhere.
//
// Thread safety: pure functions; the endpoints are plain values.
#ifndef ARGUS_PLANNER_LLM_ENDPOINTS_H_
#define ARGUS_PLANNER_LLM_ENDPOINTS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace argus::planner {

struct LlmEndpoint {
  std::string name;
  std::string url;      // e.g. http://127.0.0.1:8000/v1 (…/chat/completions is appended)
  std::string model;    // the default model; a job's llm_model replaces it
  std::string api_key;  // sent as a bearer token ("" = none)
  int64_t max_reply_bytes = 4 << 20;
};

// OK when `url` is an endpoint URL this server may call; else why not,
// prefixed with `field`.
absl::Status ValidateLlmUrl(const std::string& url, const std::string& field = "url");

// The endpoints of an --llm_endpoints file (at least one; unique names).
absl::StatusOr<std::vector<LlmEndpoint>> LoadLlmEndpoints(const std::string& path);

// The endpoint a job names in JobSpec.llm_endpoint ("" = the first); an
// error naming the field when there is none or the name is not allowed.
absl::StatusOr<LlmEndpoint> PickLlmEndpoint(const std::vector<LlmEndpoint>& endpoints,
                                            const std::string& name);

}  // namespace argus::planner

#endif  // ARGUS_PLANNER_LLM_ENDPOINTS_H_
