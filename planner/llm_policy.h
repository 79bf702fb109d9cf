// planner/llm_policy.h: the LLM policy — asks an OpenAI-compatible
// chat-completions endpoint for the next kernel.
//
// The prompt holds the problem (family semantics, tensors, shape, dtype,
// target), the DSL reference (docs/dsl.md, truncated), the KB entries of the
// family (techniques with invariants and pitfalls; the best template's
// source), the best steps so far with their rewards, and the latest
// counterexamples (gate violations, wrong-result elements, runtime errors).
// The reply's first ```python block is the candidate; its kernel is the last
// @kernel def. A malformed reply, an HTTP error, a rate limit (429) or a
// timeout is retried (with backoff) up to `retries` times; after that the
// step falls back to the builtin policy's proposal, saying why — the job
// carries on. The endpoint, model and key come from the operator's
// allow-list (planner/llm_endpoints.h), never from a job; a reply over
// max_reply_bytes is refused like a malformed one.
//
// Thread safety: one per job driver.
#ifndef ARGUS_PLANNER_LLM_POLICY_H_
#define ARGUS_PLANNER_LLM_POLICY_H_

#include <memory>
#include <string>
#include <vector>

#include "planner/policy.h"

namespace argus::planner {

struct LlmOptions {
  std::string endpoint;  // e.g. http://127.0.0.1:8000/v1 (…/chat/completions is appended)
  std::string model;
  std::string api_key;                // sent as a bearer token ("" = none)
  int64_t max_reply_bytes = 4 << 20;  // a longer HTTP response is an error
  int64_t timeout_ms = 60'000;
  int retries = 2;
  int64_t backoff_ms = 200;
  std::string dsl_reference_path;  // empty: docs/dsl.md of DataDir()
};

class LlmPolicy : public Policy {
 public:
  LlmPolicy(LlmOptions options, const kb::Kb* kb, Problem problem, std::string target,
            std::vector<const kb::Template*> templates, std::unique_ptr<Policy> fallback);
  std::optional<Proposal> Next(const std::vector<Step>& trajectory) override;
  // The prompt for a trajectory (exposed for tests and logs).
  std::string Prompt(const std::vector<Step>& trajectory) const;

 private:
  LlmOptions options_;
  const kb::Kb* kb_;
  Problem problem_;
  std::string target_;
  std::vector<const kb::Template*> templates_;
  std::unique_ptr<Policy> fallback_;
  std::string dsl_reference_;
};

// The first fenced code block of a reply, and the name of its last kernel.
absl::StatusOr<std::pair<std::string, std::string>> ExtractKernel(const std::string& reply);

}  // namespace argus::planner

#endif  // ARGUS_PLANNER_LLM_POLICY_H_
