// planner/http_client.h: a minimal HTTP/1.1 client for the LLM policy.
//
// PostJson() sends one POST over a fresh TCP connection to an http:// URL
// (no TLS: point it at a local gateway such as vLLM, llama.cpp or a proxy)
// and reads the whole response, all under one deadline. The URL must pass
// ValidateLlmUrl (planner/llm_endpoints.h): no CR/LF or other byte that could
// forge a request line or header. Errors are statuses: an invalid URL,
// unreachable, timed out, a response over `max_response_bytes`
// (RESOURCE_EXHAUSTED, read no further), malformed response; an HTTP status
// >= 400 is returned as a response for the caller to judge (429: rate
// limited).
//
// Thread safety: reentrant.
#ifndef ARGUS_PLANNER_HTTP_CLIENT_H_
#define ARGUS_PLANNER_HTTP_CLIENT_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"

namespace argus::planner {

struct HttpResponse {
  int status = 0;
  std::string body;
};

absl::StatusOr<HttpResponse> PostJson(const std::string& url, const std::string& body,
                                      const std::string& bearer_token, int64_t timeout_ms,
                                      int64_t max_response_bytes = 4 << 20);

}  // namespace argus::planner

#endif  // ARGUS_PLANNER_HTTP_CLIENT_H_
