#include "planner/candidate.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "base/status.h"
#include "kb/expr.h"

namespace argus::planner {

std::string Config::Key() const {
  std::string s = template_id;
  for (const auto& [k, v] : knobs) absl::StrAppend(&s, " ", k, "=", v);
  return s;
}

nlohmann::json Config::ToJson() const { return {{"template", template_id}, {"knobs", knobs}}; }

absl::StatusOr<Config> Config::FromJson(const nlohmann::json& j) {
  if (!j.is_object() || !j.contains("template") || !j["template"].is_string() ||
      !j.contains("knobs") || !j["knobs"].is_object()) {
    return absl::InvalidArgumentError("config: {template, knobs}");
  }
  Config c;
  c.template_id = j["template"].get<std::string>();
  for (const auto& [k, v] : j["knobs"].items()) {
    if (!v.is_number_integer()) return absl::InvalidArgumentError("config: knob values are ints");
    c.knobs[k] = v.get<int64_t>();
  }
  return c;
}

Config DefaultConfig(const kb::Template& t) {
  Config c;
  c.template_id = t.id;
  for (const auto& k : t.knobs) c.knobs[k.name] = k.default_value;
  return c;
}

Config DefaultConfig(const kb::Template& t, const Problem& p) {
  Config plain = DefaultConfig(t);
  std::map<std::string, int64_t> env = ExprEnv(p);
  for (const kb::Preset& preset : t.presets) {
    // A `when` naming something this problem lacks does not hold for it.
    auto holds = kb::EvalExpr(preset.when, env);
    if (!holds.ok() || !*holds) continue;
    Config c = plain;
    for (const auto& [name, v] : preset.knobs) c.knobs[name] = v;
    if (Instantiate(t, c, p).ok()) return c;
  }
  return plain;
}

absl::StatusOr<Instance> Instantiate(const kb::Template& t, const Config& c, const Problem& p) {
  Instance in;
  in.kernel = t.kernel;
  std::map<std::string, int64_t> env = ExprEnv(p);
  for (const auto& k : t.knobs) {
    auto it = c.knobs.find(k.name);
    int64_t v = it == c.knobs.end() ? k.default_value : it->second;
    in.constants[k.name] = v;
    env[k.name] = v;
  }
  for (const auto& [name, v] : c.knobs) {
    if (!t.FindKnob(name)) {
      return absl::InvalidArgumentError(absl::StrCat(t.id, " has no knob ", name));
    }
  }
  for (const auto& [name, e] : t.shape_constants) {
    ASSIGN_OR_RETURN(in.constants[name], kb::EvalExpr(e, env));
    env[name] = in.constants[name];
  }
  for (const auto& [name, opt] : t.option_constants) {
    auto it = env.find(opt);
    if (it == env.end()) return absl::InvalidArgumentError(absl::StrCat("no option ", opt));
    in.constants[name] = it->second;
  }
  for (const auto& [name, e] : t.dims) {
    ASSIGN_OR_RETURN(in.dims[name], kb::EvalExpr(e, env));
  }
  for (const auto& r : t.requirements) {
    ASSIGN_OR_RETURN(int64_t ok, kb::EvalExpr(r, env));
    if (!ok) {
      return absl::FailedPreconditionError(
          absl::StrCat(c.Key(), ": requirement '", r, "' does not hold for ", Describe(p)));
    }
  }
  in.pipeline = t.pipeline;
  for (const auto& [name, dims] : t.shapes) {
    for (const std::string& e : dims) {
      ASSIGN_OR_RETURN(int64_t v, kb::EvalExpr(e, env));
      in.shapes[name].push_back(v);
    }
  }
  ASSIGN_OR_RETURN(in.source, kb::Substitute(t.source, SourceVars(p)));
  return in;
}

worker::KernelSpec KernelOf(const Instance& c) {
  worker::KernelSpec k;
  k.source = c.source;
  k.kernel = c.kernel;
  for (const auto& [name, v] : c.constants) k.constants[name] = std::to_string(v);
  k.dims = c.dims;
  k.pipeline = c.pipeline;
  k.shapes = c.shapes;
  return k;
}

worker::CandidatePayload MakePayload(const Instance& candidate, const Instance& baseline,
                                     const Problem& p, const std::string& target,
                                     const nlohmann::json& verification) {
  worker::CandidatePayload w;
  w.candidate = KernelOf(candidate);
  w.target = target;
  w.check = RunnerCheck(p);
  w.problem = ToJson(p);
  std::string vendor = BaselineName(p, target);
  if (worker::IsVendorBaseline(vendor)) {
    w.baseline.name = vendor;
  } else {
    w.baseline.name = "kernel";
    w.baseline.kernel = KernelOf(baseline);
  }
  w.flops = Flops(p);
  w.bytes = Bytes(p);
  // budget_ms: a slow early candidate of a big problem (a naive MoE or
  // attention takes ~1 s a launch) is timed with fewer reps, not for minutes.
  if (target != "interp")
    w.timing = {{"warmup", 10}, {"reps", 50}, {"flush_l2", true}, {"budget_ms", 1500}};
  // A naive first candidate of a full-size problem (>= 1e11 FLOPs, e.g. the
  // issue's MoE or attention) may take seconds a launch, and the worker's
  // watchdog covers input fill, check and timing together.
  if (target != "interp" && w.flops >= 1e11) w.timeout_s = 60;
  w.verification = verification;
  return w;
}

nlohmann::json Payload(const Instance& candidate, const Instance& baseline, const Problem& p,
                       const std::string& target, const nlohmann::json& verification) {
  return MakePayload(candidate, baseline, p, target, verification).ToJson();
}

nlohmann::json BestKernelJson(const Instance& instance, const Problem& p) {
  nlohmann::json j = {
      {"source", instance.source}, {"constants", instance.constants}, {"dims", instance.dims}};
  if (!instance.pipeline.empty()) {
    j["pipeline"] = instance.pipeline;
    if (!instance.shapes.empty()) j["shapes"] = instance.shapes;
    j["check"] = RunnerCheck(p);
  }
  return j;
}

std::string Diff(const Instance* parent, const Instance& child) {
  std::string out;
  std::map<std::string, int64_t> before =
      parent ? parent->constants : std::map<std::string, int64_t>{};
  for (const auto& [k, v] : child.constants) {
    auto it = before.find(k);
    if (it == before.end())
      absl::StrAppend(&out, "const ", k, " = ", v, "\n");
    else if (it->second != v)
      absl::StrAppend(&out, "const ", k, ": ", it->second, " -> ", v, "\n");
  }
  if (!parent) return absl::StrCat(out, "(new kernel ", child.kernel, ")\n");
  std::vector<std::string> a = absl::StrSplit(parent->source, '\n');
  std::vector<std::string> b = absl::StrSplit(child.source, '\n');
  // LCS table; templates are small (tens of lines).
  size_t n = a.size(), m = b.size();
  if (n * m > 4'000'000) return absl::StrCat(out, "(sources too large to diff)\n");
  std::vector<std::vector<int>> l(n + 1, std::vector<int>(m + 1, 0));
  for (size_t i = n; i-- > 0;)
    for (size_t j = m; j-- > 0;)
      l[i][j] = a[i] == b[j] ? l[i + 1][j + 1] + 1 : std::max(l[i + 1][j], l[i][j + 1]);
  size_t i = 0, j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && a[i] == b[j]) {
      ++i, ++j;
    } else if (j < m && (i == n || l[i][j + 1] >= l[i + 1][j])) {
      absl::StrAppend(&out, "+", j + 1, ": ", b[j], "\n");
      ++j;
    } else {
      absl::StrAppend(&out, "-", i + 1, ": ", a[i], "\n");
      ++i;
    }
  }
  return out;
}

}  // namespace argus::planner
