#include "planner/planner.h"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "base/status.h"
#include "nlohmann/json.hpp"
#include "planner/policy.h"
#include "planner/verifier_gate.h"
#include "spdlog/spdlog.h"

namespace argus::planner {
namespace {

using nlohmann::json;

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

bool Finished(v1::JobState s) {
  return s == v1::JOB_STATE_SUCCEEDED || s == v1::JOB_STATE_FAILED || s == v1::JOB_STATE_CANCELLED;
}

// A step back from its stored row.
std::optional<Step> StepFromRow(const store::JobStore::StepRow& row) {
  json d = json::parse(row.detail_json, nullptr, false);
  if (d.is_discarded() || !d.contains("config")) return std::nullopt;
  auto c = Config::FromJson(d["config"]);
  if (!c.ok()) return std::nullopt;
  Step s;
  s.step = row.step;
  s.candidate_id = row.candidate_id;
  s.config = *c;
  s.parent_id = d.value("parent", "");
  s.action = row.action;
  s.technique = d.value("technique", "");
  s.why = d.value("why", "");
  s.outcome = d.value("outcome", json::object()).value("outcome", "");
  s.message = d.value("outcome", json::object()).value("message", "");
  // The speed-up over the baseline (baseline_time / time); rows written
  // before the candidate schema called the same number "ratio".
  const json o = d.value("outcome", json::object());
  s.ratio = o.contains("speedup") ? worker::CandidateSpeedup(o) : o.value("ratio", 0.0);
  s.violations = d.value("verifier", json::object()).value("violations", json::array()).size();
  return s;
}

// The instance a proposal names: the template's, or a kernel the policy
// wrote with its own source and knob defaults, the template's dims and the
// shape/option constants it still declares.
absl::StatusOr<Instance> InstanceOf(const kb::Template& tmpl, const Proposal& prop,
                                    const Problem& p) {
  ASSIGN_OR_RETURN(Instance inst, Instantiate(tmpl, prop.config, p));
  if (prop.source.empty()) return inst;
  inst.source = prop.source;
  inst.kernel = prop.kernel;
  for (auto it = inst.constants.begin(); it != inst.constants.end();) {
    bool declared =
        inst.source.find(it->first + ": const") != std::string::npos && !tmpl.FindKnob(it->first);
    it = declared ? std::next(it) : inst.constants.erase(it);
  }
  return inst;
}

bool IsRetryable(const absl::Status& st) {
  // NOT_FOUND: the job is gone; FAILED_PRECONDITION: it finished (cancelled)
  // under the driver. Anything else comes from the store and may pass.
  return !st.ok() && st.code() != absl::StatusCode::kNotFound &&
         st.code() != absl::StatusCode::kFailedPrecondition;
}

std::unique_ptr<CandidateGate> DefaultGate(const PlannerOptions& o) {
  if (o.verifier_address.empty()) return std::make_unique<VerifierGate>();
  worker::VerifierClientOptions vo;
  vo.address = o.verifier_address;
  vo.max_wait_ms = 0;  // wait for the service as long as it takes; Shutdown ends the wait
  vo.dial = o.verifier_dial;
  return std::make_unique<RemoteVerifierGate>(vo);
}

}  // namespace

Planner::Planner(store::JobStore* store, PlannerOptions options)
    : store_(store), options_(std::move(options)), gate_(DefaultGate(options_)) {}

Planner::~Planner() { Shutdown(); }

absl::Status Planner::Init() {
  ASSIGN_OR_RETURN(kb_,
                   kb::Kb::Load(options_.kb_dir.empty() ? kb::DefaultKbDir() : options_.kb_dir));
  ready_ = true;
  return absl::OkStatus();
}

absl::Status Planner::Validate(const v1::JobSpec& spec) const {
  if (!ready_) return absl::FailedPreconditionError("the planner's knowledge base did not load");
  ASSIGN_OR_RETURN(Problem p, FromProto(spec.problem()));
  static const char* const kTargets[] = {"", "auto", "interp", "sm_90a", "gfx942"};
  if (std::find(std::begin(kTargets), std::end(kTargets), spec.target()) == std::end(kTargets)) {
    return absl::InvalidArgumentError(
        absl::StrCat("target '", spec.target(), "' (auto, interp, sm_90a, gfx942)"));
  }
  if (!spec.policy().empty() && spec.policy() != "builtin" && spec.policy() != "llm") {
    return absl::InvalidArgumentError(
        absl::StrCat("policy '", spec.policy(), "' is not available (builtin, llm)"));
  }
  if (spec.policy() == "llm") {
    if (auto ep = PickLlmEndpoint(options_.llm_endpoints, spec.llm_endpoint()); !ep.ok()) {
      return ep.status();
    }
  } else if (!spec.llm_endpoint().empty()) {
    return absl::InvalidArgumentError("spec.llm_endpoint: only for policy llm");
  }
  if (spec.max_candidates() < 0 || spec.max_candidates() > options_.max_candidates_limit) {
    return absl::InvalidArgumentError(
        absl::StrCat("max_candidates must be in [0, ", options_.max_candidates_limit, "]"));
  }
  if (kb_.ForFamily(p.family).empty()) {
    return absl::FailedPreconditionError(absl::StrCat("the KB has no template for ", p.family));
  }
  return absl::OkStatus();
}

void Planner::Start(const std::string& job_id) {
  std::lock_guard lock(mu_);
  if (stopping_.load() || threads_.count(job_id)) return;
  threads_[job_id] = std::thread([this, job_id] { Drive(job_id); });
}

void Planner::Drive(const std::string& job_id) {
  auto backoff = std::chrono::milliseconds(100);
  while (!stopping_.load()) {
    absl::Status st = RunJob(job_id);
    if (st.ok()) return;
    if (!IsRetryable(st)) {
      spdlog::error("tune job {}: {}", job_id, st.ToString());
      return;
    }
    // A store error (full disk, I/O error, busy): nothing half-done was
    // recorded, so the job resumes from its stored trajectory (and its
    // candidate in flight) once the store takes writes again.
    spdlog::warn("tune job {}: {}; retrying in {} ms", job_id, st.ToString(), backoff.count());
    std::unique_lock lock(mu_);
    stop_cv_.wait_for(lock, backoff, [this] { return stopping_.load(); });
    backoff = std::min(backoff * 2, kMaxRetryBackoff);
  }
}

absl::StatusOr<std::optional<Planner::InFlight>> Planner::FindInFlight(
    const std::string& job_id, const std::vector<Step>& trajectory, const Problem& p) const {
  ASSIGN_OR_RETURN(auto tasks, store_->ListTasks(job_id, "candidate"));
  // Steps run one at a time, so only the latest task can be in flight.
  if (tasks.empty()) return std::nullopt;
  json payload = json::parse(tasks.back().payload_json, nullptr, false);
  if (!payload.is_object() || !payload["planner_step"].is_object()) return std::nullopt;
  const json& rec = payload["planner_step"];
  const std::string candidate_id = rec.value("candidate_id", "");
  for (const Step& s : trajectory) {
    if (s.candidate_id == candidate_id) return std::nullopt;  // recorded
  }
  auto config = Config::FromJson(rec.value("config", json::object()));
  const kb::Template* tmpl = config.ok() ? kb_.FindTemplate(config->template_id) : nullptr;
  if (!tmpl) return std::nullopt;
  InFlight f;
  f.proposal.config = *config;
  f.proposal.action = rec.value("action", "");
  f.proposal.technique = rec.value("technique", "");
  f.proposal.parent_id = rec.value("parent", "");
  f.proposal.why = rec.value("why", "");
  f.proposal.source = rec.value("source", "");
  f.proposal.kernel = rec.value("kernel", "");
  auto inst = InstanceOf(*tmpl, f.proposal, p);
  if (!inst.ok()) return std::nullopt;
  f.instance = *std::move(inst);
  f.step.step = rec.value("step", 0);
  f.step.candidate_id = candidate_id;
  f.step.parent_id = f.proposal.parent_id;
  f.step.config = f.proposal.config;
  f.step.action = f.proposal.action;
  f.step.technique = f.proposal.technique;
  f.step.why = f.proposal.why;
  f.verification = payload.value("verification", json::object());
  f.task_id = tasks.back().id;
  return f;
}

json Planner::InFlightJson(const InFlight& f) {
  json j = {{"step", f.step.step},        {"candidate_id", f.step.candidate_id},
            {"parent", f.step.parent_id}, {"config", f.step.config.ToJson()},
            {"action", f.step.action},    {"technique", f.step.technique},
            {"why", f.step.why}};
  if (!f.proposal.source.empty()) {
    j["source"] = f.proposal.source;
    j["kernel"] = f.proposal.kernel;
  }
  return j;
}

absl::StatusOr<std::optional<json>> Planner::AwaitTask(const std::string& task_id) {
  int64_t deadline = NowMs() + options_.task_timeout_ms;
  while (true) {
    int64_t version = store_->version();  // before the read: no change slips between
    ASSIGN_OR_RETURN(auto ts, store_->GetTask(task_id));
    if (ts.state == "done") {
      json outcome = json::parse(ts.result_json, nullptr, false);
      if (outcome.is_discarded() || !outcome.is_object()) {
        outcome = {{"outcome", "bad_result"}, {"message", "the worker's result is not JSON"}};
      }
      return outcome;
    }
    if (ts.state == "failed" || ts.state == "cancelled") {
      return json{{"outcome", ts.state == "failed" ? "worker_error" : "cancelled"},
                  {"message", ts.error}};
    }
    if (stopping_.load()) return std::nullopt;
    if (NowMs() > deadline) {
      return json{{"outcome", "timeout"}, {"message", "no result within the task timeout"}};
    }
    // Sleeps until the store changes (Shutdown wakes it too).
    store_->WaitForChange(version, std::chrono::steady_clock::now() + std::chrono::seconds(1));
  }
}

absl::Status Planner::ResumeUnfinished() {
  for (v1::JobState s : {v1::JOB_STATE_QUEUED, v1::JOB_STATE_RUNNING}) {
    ASSIGN_OR_RETURN(auto jobs, store_->ListJobs(10'000, s));
    for (const auto& j : jobs) {
      if (j.spec().kind() != v1::JOB_KIND_TUNE) continue;
      spdlog::info("resuming tune job {}", j.id());
      Start(j.id());
    }
  }
  return absl::OkStatus();
}

void Planner::Shutdown() {
  {
    std::lock_guard lock(mu_);
    stopping_.store(true);
  }
  stop_cv_.notify_all();
  store_->WakeWaiters();
  if (gate_) gate_->Stop();
  std::map<std::string, std::thread> threads;
  {
    std::lock_guard lock(mu_);
    threads.swap(threads_);
  }
  for (auto& [id, t] : threads) {
    if (t.joinable()) t.join();
  }
}

absl::StatusOr<std::string> Planner::ResolveTarget(const std::string& target) const {
  if (!target.empty() && target != "auto") return target;
  ASSIGN_OR_RETURN(auto workers, store_->ListWorkers(NowMs(), 60'000));
  std::string best = "interp";
  for (const auto& w : workers) {
    if (!w.alive()) continue;
    for (const auto& d : w.inventory().devices()) {
      if (d.arch() == "sm_90a" || d.arch() == "gfx942") return d.arch();
    }
  }
  return best;
}

std::vector<Config> Planner::Retrieve(const Problem& p, const std::string& target,
                                      const std::string& exclude_job, size_t max) const {
  struct Hit {
    double distance, ratio;
    Config config;
  };
  std::vector<Hit> hits;
  auto jobs = store_->ListJobs(500, v1::JOB_STATE_SUCCEEDED);
  if (!jobs.ok()) return {};
  for (const auto& j : *jobs) {
    if (j.id() == exclude_job || j.spec().kind() != v1::JOB_KIND_TUNE) continue;
    auto q = FromProto(j.spec().problem());
    if (!q.ok() || q->family != p.family || q->dtype != p.dtype || q->options != p.options)
      continue;
    json res = json::parse(j.result_json(), nullptr, false);
    if (res.is_discarded() || res.value("target", "") != target) continue;
    double dist = 0;
    for (const auto& [k, v] : p.shape) {
      auto it = q->shape.find(k);
      if (it == q->shape.end())
        dist += 100;
      else
        dist += std::fabs(std::log2(static_cast<double>(v) / it->second));
    }
    if (dist > 3) continue;
    auto rows = store_->ListTrajectory(j.id());
    if (!rows.ok()) continue;
    for (const auto& row : *rows) {
      auto s = StepFromRow(row);
      if (s && s->outcome == "ok" && s->action != "llm")
        hits.push_back({dist, s->ratio, s->config});
    }
  }
  std::stable_sort(hits.begin(), hits.end(), [](const Hit& a, const Hit& b) {
    return a.distance != b.distance ? a.distance < b.distance : a.ratio > b.ratio;
  });
  std::vector<Config> out;
  for (const auto& h : hits) {
    if (out.size() >= max) break;
    if (std::find(out.begin(), out.end(), h.config) == out.end()) out.push_back(h.config);
  }
  return out;
}

absl::Status Planner::RunJob(const std::string& job_id) {
  ASSIGN_OR_RETURN(v1::Job job, store_->GetJob(job_id, false));
  if (Finished(job.state())) return absl::OkStatus();
  auto fail = [&](const std::string& why) {
    return store_->FinishJob(job_id, false, json({{"error", why}}).dump(), why, NowMs());
  };
  if (!ready_) return fail("the planner's knowledge base did not load");
  auto problem = FromProto(job.spec().problem());
  if (!problem.ok()) return fail(std::string(problem.status().message()));
  const Problem& p = *problem;
  auto target_or = ResolveTarget(job.spec().target());
  if (!target_or.ok()) return fail(std::string(target_or.status().message()));
  std::string target = *target_or;
  int max_candidates = job.spec().max_candidates() > 0 ? job.spec().max_candidates()
                                                       : options_.default_max_candidates;

  std::vector<const kb::Template*> templates;
  const kb::Template* base_tmpl = nullptr;
  for (const auto* t : kb_.ForFamily(p.family)) {
    if (t->baseline) base_tmpl = t;
    if (t->Supports(p.dtype, target) && Instantiate(*t, DefaultConfig(*t, p), p).ok()) {
      templates.push_back(t);
    }
  }
  if (templates.empty()) {
    return fail(absl::StrCat("no KB template fits ", Describe(p), " on ", target));
  }
  // On a GPU the family's baseline templates (the naive ones) are tried last:
  // at a full shape they cost the most device time and teach the least, and
  // the first template tried — the job's starting point — should be the
  // simplest real one (e.g. mma.sync before wgmma).
  if (target != "interp") {
    std::stable_partition(templates.begin(), templates.end(),
                          [](const kb::Template* t) { return !t->baseline; });
  }
  if (!base_tmpl) return fail("the KB has no baseline template for " + p.family);
  auto baseline = Instantiate(*base_tmpl, DefaultConfig(*base_tmpl), p);
  if (!baseline.ok()) return fail(absl::StrCat("baseline: ", baseline.status().message()));

  // State: the trajectory so far (non-empty when resuming).
  std::vector<Step> trajectory;
  ASSIGN_OR_RETURN(auto rows, store_->ListTrajectory(job_id));
  for (const auto& r : rows) {
    if (auto s = StepFromRow(r)) trajectory.push_back(*s);
  }
  std::map<std::string, Instance> instances;  // candidate id -> instance, for diffs
  std::vector<Config> warm;
  if (options_.use_memory) warm = Retrieve(p, target, job_id, 4);
  std::unique_ptr<Policy> policy = std::make_unique<BuiltinPolicy>(&kb_, p, templates, warm);
  std::string policy_name = "builtin";
  if (job.spec().policy() == "llm") {
    auto ep = PickLlmEndpoint(options_.llm_endpoints, job.spec().llm_endpoint());
    if (!ep.ok()) return fail(std::string(ep.status().message()));
    LlmOptions llm = options_.llm;
    llm.endpoint = ep->url;
    llm.model = job.spec().llm_model().empty() ? ep->model : job.spec().llm_model();
    llm.api_key = ep->api_key;
    llm.max_reply_bytes = ep->max_reply_bytes;
    policy = std::make_unique<LlmPolicy>(llm, &kb_, p, target, templates, std::move(policy));
    policy_name = "llm";
  }

  auto summary = [&](bool final) {
    int verified = 0, rejected = 0, ok = 0;
    const Step* best = nullptr;
    json rejections = json::array();
    for (const auto& s : trajectory) {
      if (s.outcome == "rejected") {
        ++rejected;
        rejections.push_back({{"candidate", s.candidate_id}, {"why", s.message}});
      } else {
        ++verified;
      }
      if (s.outcome == "ok") {
        ++ok;
        if (!best || s.ratio > best->ratio) best = &s;
      }
    }
    json out = {{"problem", ToJson(p)},
                {"target", target},
                {"policy", policy_name},
                {"baseline_name", BaselineName(p, target)},
                {"flops", Flops(p)},
                {"bytes", Bytes(p)},
                {"tried", trajectory.size()},
                {"verified", verified},
                {"rejected", rejected},
                {"measured_ok", ok},
                {"retrieved", warm.size()},
                {"rejections", rejections},
                {"final", final}};
    json recent = json::array();
    for (size_t i = trajectory.size() > 16 ? trajectory.size() - 16 : 0; i < trajectory.size();
         ++i) {
      const Step& l = trajectory[i];
      recent.push_back({{"step", l.step},
                        {"action", l.action},
                        {"config", l.config.Key()},
                        {"outcome", l.outcome},
                        {"speedup", l.ratio},
                        {"ratio", l.ratio},  // = speedup, for readers of the old key
                        {"message", l.message}});
    }
    out["recent"] = recent;
    if (!trajectory.empty()) {
      const Step& l = trajectory.back();
      out["last"] = {{"step", l.step},       {"action", l.action}, {"config", l.config.Key()},
                     {"outcome", l.outcome}, {"speedup", l.ratio}, {"ratio", l.ratio},
                     {"message", l.message}};
    }
    if (best) {
      const kb::Template* t = kb_.FindTemplate(best->config.template_id);
      auto inst = Instantiate(*t, best->config, p);
      if (auto it = instances.find(best->candidate_id); it != instances.end()) inst = it->second;
      out["best"] = {{"candidate_id", best->candidate_id},
                     {"step", best->step},
                     {"config", best->config.ToJson()},
                     {"speedup", best->ratio},
                     {"ratio", best->ratio},  // = speedup, for readers of the old key
                     {"invariants", t->invariants},
                     {"kernel", t->kernel}};
      if (inst.ok()) out["best"].update(BestKernelJson(*inst, p));
    }
    return out;
  };

  bool first = true;
  while (static_cast<int>(trajectory.size()) < max_candidates && !stopping_.load()) {
    ASSIGN_OR_RETURN(v1::Job now, store_->GetJob(job_id, false));
    if (Finished(now.state())) return absl::OkStatus();  // cancelled or overdue
    // A step that an earlier run of this job (before a restart or a store
    // error) gated and sent to a worker, but did not record, continues from
    // its task: a committed result is used, not run again.
    std::optional<InFlight> cur;
    if (first) {
      ASSIGN_OR_RETURN(cur, FindInFlight(job_id, trajectory, p));
      first = false;
    }
    if (cur) {
      spdlog::info("tune job {}: step {} continues from its task {}", job_id, cur->step.step,
                   cur->task_id);
    } else {
      std::optional<Proposal> prop = policy->Next(trajectory);
      if (!prop) break;
      const kb::Template* tmpl = kb_.FindTemplate(prop->config.template_id);
      if (!tmpl) break;
      auto inst = InstanceOf(*tmpl, *prop, p);
      if (!inst.ok()) break;  // the policy only proposes valid configs
      cur.emplace();
      cur->proposal = *prop;
      cur->instance = *std::move(inst);
      Step& step = cur->step;
      step.step = trajectory.empty() ? 0 : trajectory.back().step + 1;
      step.candidate_id = store::NewId("c");
      step.parent_id = prop->parent_id;
      step.config = prop->config;
      step.action = prop->action;
      step.technique = prop->technique;
      step.why = prop->why;
      GateReport report = gate_->Check(cur->instance, target);
      if (report.unavailable) {
        // The verifier service stopped answering and the wait was ended
        // (shutdown): nothing is recorded; the step is redone on resume.
        if (stopping_.load()) return absl::OkStatus();
        continue;
      }
      cur->verification = report.ToJson();
      if (report.passed) {
        json payload = Payload(cur->instance, *baseline, p, target, cur->verification);
        payload["planner_step"] = InFlightJson(*cur);
        store::NewTask task{"candidate", payload.dump(), target == "interp" ? "interp" : target,
                            false};
        ASSIGN_OR_RETURN(cur->task_id, store_->AddTask(job_id, task, NowMs()));
      }
    }
    Step step = cur->step;
    const Instance* inst = &cur->instance;
    const json violations = cur->verification.value("violations", json::array());
    step.violations = static_cast<int>(violations.size());
    json outcome;
    if (cur->task_id.empty()) {
      step.outcome = "rejected";
      step.message = violations.empty() ? "" : violations[0].value("message", "");
      outcome = {{"outcome", "rejected"}, {"message", step.message}};
    } else {
      ASSIGN_OR_RETURN(std::optional<json> result, AwaitTask(cur->task_id));
      if (!result) return absl::OkStatus();  // shutting down: resumed after restart
      outcome = *std::move(result);
      if (outcome.value("outcome", "") == "cancelled") {
        return absl::OkStatus();  // the job was cancelled under us
      }
      step.outcome = outcome.value("outcome", "bad_result");
      step.message = outcome.value("message", "");
      step.ratio = worker::CandidateSpeedup(outcome);
    }
    int parent_violations = 0;
    const Instance* parent_inst = nullptr;
    for (const auto& s : trajectory) {
      if (s.candidate_id == step.parent_id) parent_violations = s.violations;
    }
    if (auto it = instances.find(step.parent_id); it != instances.end()) parent_inst = &it->second;
    double process_reward = std::max(0, parent_violations - step.violations);
    json detail = {{"parent", step.parent_id},
                   {"config", step.config.ToJson()},
                   {"technique", step.technique},
                   {"why", step.why},
                   {"diff", Diff(parent_inst, *inst)},
                   {"verifier", cur->verification},
                   {"outcome", outcome},
                   {"reward", {{"outcome", step.ratio}, {"process", process_reward}}}};
    if (!cur->proposal.source.empty()) detail["source"] = inst->source;
    // The candidate's row as the dashboard reads it (docs/dashboard.md):
    // verdict, speed-up, the verifier's located diagnostics.
    json cand = {{"config", step.config.ToJson()},
                 {"constants", inst->constants},
                 {"action", step.action},
                 {"verdict", step.outcome == "rejected" ? "rejected"
                             : step.outcome == "ok"     ? "measured"
                                                        : "failed"}};
    if (step.outcome == "ok") cand["speedup"] = step.ratio;
    if (!violations.empty()) {
      json diags = json::array();
      for (const json& v : violations) {
        json d = {{"file", absl::StrCat(inst->kernel, ".py")},
                  {"line", v.value("line", 0)},
                  {"col", v.value("col", 0)},
                  {"message", v.value("message", "")}};
        if (v.contains("counterexample")) d["counterexample"] = v["counterexample"];
        diags.push_back(d);
      }
      cand["diagnostics"] = diags;
    }
    RETURN_IF_ERROR(store_->AddCandidate(step.candidate_id, job_id, step.parent_id, inst->source,
                                         cand.dump(), NowMs()));
    RETURN_IF_ERROR(store_->AddTrajectoryStep(job_id, step.step, step.candidate_id, step.action,
                                              detail.dump(), step.ratio, NowMs()));
    instances[step.candidate_id] = *inst;
    trajectory.push_back(step);
    RETURN_IF_ERROR(store_->SetJobProgress(job_id, summary(false).dump(), NowMs()));
  }
  if (stopping_.load()) return absl::OkStatus();
  json result = summary(true);
  if (!result.contains("best")) {
    std::string why = absl::StrCat("no candidate passed (", trajectory.size(), " tried)");
    if (!trajectory.empty())
      absl::StrAppend(&why, "; last: ", trajectory.back().outcome, " ", trajectory.back().message);
    return store_->FinishJob(job_id, false, result.dump(), why, NowMs());
  }
  return store_->FinishJob(job_id, true, result.dump(), "", NowMs());
}

}  // namespace argus::planner
