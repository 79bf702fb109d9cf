#include "planner/llm_policy.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/data_dir.h"
#include "nlohmann/json.hpp"
#include "planner/http_client.h"
#include "spdlog/spdlog.h"

namespace argus::planner {
namespace {

using nlohmann::json;

constexpr size_t kDslReferenceChars = 12'000;

uint64_t Fnv(const std::string& s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

}  // namespace

absl::StatusOr<std::pair<std::string, std::string>> ExtractKernel(const std::string& reply) {
  size_t open = reply.find("```");
  if (open == std::string::npos)
    return absl::InvalidArgumentError("the reply has no ``` code block");
  size_t start = reply.find('\n', open);
  if (start == std::string::npos) return absl::InvalidArgumentError("the code block is empty");
  size_t close = reply.find("```", start);
  if (close == std::string::npos) return absl::InvalidArgumentError("the code block is not closed");
  std::string code = reply.substr(start + 1, close - start - 1);
  std::string kernel;
  for (size_t p = code.find("@kernel"); p != std::string::npos; p = code.find("@kernel", p + 1)) {
    size_t def = code.find("def ", p);
    if (def == std::string::npos) break;
    size_t paren = code.find('(', def);
    if (paren == std::string::npos) break;
    kernel = code.substr(def + 4, paren - def - 4);
  }
  if (kernel.empty()) return absl::InvalidArgumentError("the code block has no @kernel function");
  return std::make_pair(code, kernel);
}

LlmPolicy::LlmPolicy(LlmOptions options, const kb::Kb* kb, Problem problem, std::string target,
                     std::vector<const kb::Template*> templates, std::unique_ptr<Policy> fallback)
    : options_(std::move(options)),
      kb_(kb),
      problem_(std::move(problem)),
      target_(std::move(target)),
      templates_(std::move(templates)),
      fallback_(std::move(fallback)) {
  std::string path = options_.dsl_reference_path.empty() ? DataDir() + "/docs/dsl.md"
                                                         : options_.dsl_reference_path;
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  dsl_reference_ = ss.str().substr(0, kDslReferenceChars);
}

std::string LlmPolicy::Prompt(const std::vector<Step>& t) const {
  const Family* fam = FindFamily(problem_.family);
  std::string p = absl::StrCat("# Problem\n", Describe(problem_), " on ", target_, "\n",
                               fam ? fam->summary : "", "\n");
  // The best measured step and its template: the kernel to improve.
  const Step* best = nullptr;
  for (const auto& s : t) {
    if (s.outcome == "ok" && (!best || s.ratio > best->ratio)) best = &s;
  }
  const kb::Template* base = templates_.empty() ? nullptr : templates_.front();
  if (best) {
    for (const auto* tm : templates_) {
      if (tm->id == best->config.template_id) base = tm;
    }
  }
  if (base) {
    auto inst =
        Instantiate(*base,
                    best && best->config.template_id == base->id ? best->config
                                                                 : DefaultConfig(*base, problem_),
                    problem_);
    absl::StrAppend(&p, "\n# Kernel to improve (template ", base->id, ")\nTensor names, dims and ",
                    "constants must stay as they are.\n```python\n",
                    inst.ok() ? inst->source : base->source,
                    "```\nconstants: ", inst.ok() ? json(inst->constants).dump() : "{}", "\n");
  }
  absl::StrAppend(&p, "\n# Techniques (knowledge base)\n");
  for (const auto* tech : kb_->TechniquesFor(problem_.family)) {
    absl::StrAppend(&p, "- ", tech->title, ": ", tech->what,
                    " Invariants: ", absl::StrJoin(tech->invariants, "; "),
                    ". Pitfalls: ", absl::StrJoin(tech->pitfalls, "; "), ".\n");
  }
  // Past rewards, best first.
  std::vector<const Step*> ok;
  for (const auto& s : t) {
    if (s.outcome == "ok") ok.push_back(&s);
  }
  std::stable_sort(ok.begin(), ok.end(),
                   [](const Step* a, const Step* b) { return a->ratio > b->ratio; });
  absl::StrAppend(&p, "\n# Best candidates so far (reward = speed-up over the baseline)\n");
  if (ok.empty()) absl::StrAppend(&p, "(none yet)\n");
  for (size_t i = 0; i < ok.size() && i < 5; ++i) {
    absl::StrAppend(&p, absl::StrFormat("- step %d %s: reward %.4f\n", ok[i]->step,
                                        ok[i]->config.Key(), ok[i]->ratio));
  }
  absl::StrAppend(&p, "\n# Latest counterexamples and failures\n");
  int shown = 0;
  for (auto it = t.rbegin(); it != t.rend() && shown < 3; ++it) {
    if (it->outcome == "ok") continue;
    ++shown;
    absl::StrAppend(&p, "- step ", it->step, " (", it->config.Key(), "): ", it->outcome, ": ",
                    it->message, "\n");
  }
  if (shown == 0) absl::StrAppend(&p, "(none)\n");
  absl::StrAppend(&p,
                  "\nReply with one complete DSL file in a single ```python block: a faster "
                  "kernel with the same name, tensors and semantics.\n");
  return p;
}

std::optional<Proposal> LlmPolicy::Next(const std::vector<Step>& t) {
  json req = {{"model", options_.model},
              {"temperature", 0.2},
              {"messages",
               {{{"role", "system"},
                 {"content", absl::StrCat("You optimize GPU kernels written in the Argus DSL. "
                                          "DSL reference:\n",
                                          dsl_reference_)}},
                {{"role", "user"}, {"content", Prompt(t)}}}}};
  std::string url = options_.endpoint;
  while (!url.empty() && url.back() == '/') url.pop_back();
  if (!absl::EndsWith(url, "/chat/completions")) url += "/chat/completions";
  std::string failure;
  for (int attempt = 0; attempt <= options_.retries; ++attempt) {
    if (attempt > 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(options_.backoff_ms << (attempt - 1)));
    }
    auto resp =
        PostJson(url, req.dump(), options_.api_key, options_.timeout_ms, options_.max_reply_bytes);
    if (!resp.ok()) {
      failure = std::string(resp.status().message());
      continue;
    }
    if (resp->status == 429) {
      failure = "rate limited (HTTP 429)";
      continue;
    }
    if (resp->status >= 400) {
      failure = absl::StrCat("HTTP ", resp->status);
      continue;
    }
    json body = json::parse(resp->body, nullptr, false);
    if (body.is_discarded() || !body.contains("choices") || !body["choices"].is_array() ||
        body["choices"].empty() || !body["choices"][0].contains("message") ||
        !body["choices"][0]["message"].contains("content") ||
        !body["choices"][0]["message"]["content"].is_string()) {
      failure = "malformed reply (not a chat completion)";
      continue;
    }
    auto kernel = ExtractKernel(body["choices"][0]["message"]["content"].get<std::string>());
    if (!kernel.ok()) {
      failure = absl::StrCat("malformed reply: ", kernel.status().message());
      continue;
    }
    const Step* best = nullptr;
    for (const auto& s : t) {
      if (s.outcome == "ok" && (!best || s.ratio > best->ratio)) best = &s;
    }
    Proposal prop;
    prop.config = best ? best->config : DefaultConfig(*templates_.front(), problem_);
    prop.config.template_id = prop.config.template_id;
    prop.action = "llm";
    prop.parent_id = best ? best->candidate_id : "";
    prop.source = kernel->first;
    prop.kernel = kernel->second;
    prop.why = absl::StrFormat("llm %s (attempt %d), source #%016x", options_.model, attempt + 1,
                               Fnv(prop.source));
    return prop;
  }
  spdlog::warn("llm policy: {}; using the builtin policy for this step", failure);
  std::optional<Proposal> p = fallback_->Next(t);
  if (p) p->why = absl::StrCat("llm failed (", failure, "); builtin: ", p->why);
  return p;
}

}  // namespace argus::planner
