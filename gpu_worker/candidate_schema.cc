#include "gpu_worker/candidate_schema.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace argus::worker {

using nlohmann::json;

namespace {

// Constants travel as numbers where they are integers (what the planner's
// knobs are) and as strings otherwise; the front end takes strings.
json ConstantsJson(const std::map<std::string, std::string>& c) {
  json out = json::object();
  for (const auto& [k, v] : c) {
    int64_t i;
    out[k] = absl::SimpleAtoi(v, &i) ? json(i) : json(v);
  }
  return out;
}

json KernelJson(const KernelSpec& k) {
  json j = {{"source", k.source},
            {"kernel", k.kernel},
            {"constants", ConstantsJson(k.constants)},
            {"dims", k.dims}};
  if (!k.scalars.empty()) j["scalars"] = k.scalars;
  if (!k.pipeline.empty()) j["pipeline"] = k.pipeline;
  if (!k.shapes.empty()) j["shapes"] = k.shapes;
  return j;
}

// Throws json::exception on a wrong type (the caller turns it into a status).
KernelSpec ReadKernel(const json& j) {
  KernelSpec k;
  k.source = j.at("source").get<std::string>();
  k.kernel = j.value("kernel", "");
  if (j.contains("constants")) {
    for (auto& [name, v] : j["constants"].items())
      k.constants[name] = v.is_string() ? v.get<std::string>() : v.dump();
  }
  if (j.contains("dims"))
    for (auto& [name, v] : j["dims"].items()) k.dims[name] = v.get<int64_t>();
  if (j.contains("scalars"))
    for (auto& [name, v] : j["scalars"].items()) k.scalars[name] = v.get<double>();
  if (j.contains("pipeline")) k.pipeline = j["pipeline"].get<std::vector<std::string>>();
  if (j.contains("shapes"))
    for (auto& [name, v] : j["shapes"].items()) k.shapes[name] = v.get<std::vector<int64_t>>();
  return k;
}

}  // namespace

bool IsVendorBaseline(const std::string& name) {
  return name == "cublas" || name == "hipblaslt" || name == "torch_sdpa" ||
         name == "torch_moe_loop" || name == "torch";
}

bool IsRunnerCheckOp(const std::string& op) {
  return op == "gemm" || op == "add" || op == "softmax" || op == "rmsnorm" || op == "attention" ||
         op == "moe" || op == "none" || op == "layernorm" || op == "row_sum" || op == "mul" ||
         op == "silu_mul" || op == "add_rmsnorm" || op == "rope";
}

bool CandidatePayload::VerificationPassed() const {
  return verification.is_object() && verification.value("passed", false);
}

json CandidatePayload::ToJson() const {
  json j = KernelJson(candidate);
  j["target"] = target;
  if (!backend.empty()) j["backend"] = backend;
  j["check"] = check;
  if (!problem.is_null()) j["problem"] = problem;
  json b = {{"name", baseline.name}};
  if (baseline.name == "kernel") b.update(KernelJson(baseline.kernel));
  j["baseline"] = b;
  if (flops > 0) j["flops"] = flops;
  if (bytes > 0) j["bytes"] = bytes;
  if (!timing.empty()) j["timing"] = timing;
  if (seed != 0) j["seed"] = seed;
  j["timeout_s"] = timeout_s;
  if (!verification.is_null()) j["verification"] = verification;
  return j;
}

absl::StatusOr<CandidatePayload> ParseCandidatePayload(const std::string& payload) {
  json j = json::parse(payload, nullptr, false);
  if (j.is_discarded() || !j.is_object())
    return absl::InvalidArgumentError("candidate payload is not a JSON object");
  for (const char* old : {"consts", "baseline_name"}) {
    if (j.contains(old))
      return absl::InvalidArgumentError(
          absl::StrCat("candidate payload: '", old,
                       "' is not a key of the candidate schema (constants, "
                       "baseline {name}; gpu_worker/candidate_schema.h)"));
  }
  CandidatePayload p;
  try {
    p.candidate = ReadKernel(j);
    p.target = j.value("target", "interp");
    p.backend = j.value("backend", "");
    p.check = j.value("check", json{{"op", "none"}});
    if (!p.check.is_object()) return absl::InvalidArgumentError("candidate payload: check");
    p.problem = j.value("problem", json());
    if (j.contains("baseline")) {
      const json& b = j["baseline"];
      if (b.is_string()) {
        p.baseline.name = b.get<std::string>();  // shorthand: {"name": ...}
      } else {
        p.baseline.name = b.at("name").get<std::string>();
        if (p.baseline.name == "kernel") p.baseline.kernel = ReadKernel(b);
      }
    }
    p.flops = j.value("flops", 0.0);
    p.bytes = j.value("bytes", 0.0);
    p.timing = j.value("timing", json::object());
    p.seed = j.value("seed", uint64_t{0});
    p.timeout_s = j.value("timeout_s", 20.0);
    p.verification = j.value("verification", json());
  } catch (const json::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("candidate payload: ", e.what()));
  }
  if (p.target != "sm_90a" && p.target != "gfx942" && p.target != "interp")
    return absl::InvalidArgumentError(absl::StrCat("candidate payload: unknown target '", p.target,
                                                   "' (sm_90a, gfx942, interp)"));
  if (p.backend != "" && p.backend != "interp" && p.backend != "gpu")
    return absl::InvalidArgumentError(
        absl::StrCat("candidate payload: unknown backend '", p.backend, "' (interp or gpu)"));
  const std::string& b = p.baseline.name;
  if (b != "none" && b != "kernel" && !IsVendorBaseline(b))
    return absl::InvalidArgumentError(
        absl::StrCat("candidate payload: unknown baseline '", b,
                     "' (cublas, hipblaslt, torch_sdpa, torch_moe_loop, torch, kernel, none)"));
  std::string op = p.check.value("op", "none");
  if (!IsRunnerCheckOp(op) && op != "problem")
    return absl::InvalidArgumentError(absl::StrCat(
        "candidate payload: unknown check op '", op,
        "' (gemm, add, softmax, rmsnorm, layernorm, row_sum, mul, silu_mul, add_rmsnorm, rope, "
        "attention, moe, none, problem)"));
  if (op == "problem" && !p.problem.is_object())
    return absl::InvalidArgumentError("candidate payload: check op 'problem' needs a problem");
  return p;
}

json CandidateOutcome(const std::string& outcome, const std::string& message) {
  return {{"outcome", outcome}, {"message", message}};
}

void SetCandidateTimes(json* r, double time, double baseline_time, const std::string& unit) {
  (*r)["time"] = time;
  (*r)["baseline_time"] = baseline_time;
  (*r)["unit"] = unit;
  if (time > 0 && baseline_time > 0) (*r)["speedup"] = baseline_time / time;
}

double CandidateSpeedup(const json& r) {
  if (!r.is_object() || r.value("outcome", "") != "ok") return 0;
  auto it = r.find("speedup");
  return it != r.end() && it->is_number() ? it->get<double>() : 0.0;
}

}  // namespace argus::worker
