#include "planner/interp_backend.h"

#include <chrono>
#include <cmath>
#include <memory>

#include "absl/strings/str_cat.h"
#include "base/status.h"
#include "dsl/check.h"
#include "dsl/interp.h"
#include "nlohmann/json.hpp"
#include "planner/problems.h"

namespace argus::planner {
namespace {

using nlohmann::json;

struct Kernel {
  std::string source, kernel;
  std::map<std::string, int64_t> constants, dims;
};

absl::StatusOr<Kernel> ReadKernel(const json& j, const std::string& what) {
  try {
    Kernel k;
    k.source = j.at("source").get<std::string>();
    k.kernel = j.at("kernel").get<std::string>();
    k.constants = j.value("constants", std::map<std::string, int64_t>{});
    k.dims = j.at("dims").get<std::map<std::string, int64_t>>();
    return k;
  } catch (const json::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("candidate payload ", what, ": ", e.what()));
  }
}

struct RunOutcome {
  std::string outcome;  // ok, compile_error, runtime_error
  std::string message;
  int64_t instructions = 0;
  double seconds = 0;
  std::vector<dsl::HostTensor> inputs, outputs;
};

RunOutcome RunKernel(const Kernel& k, const Problem& p) {
  RunOutcome r;
  dsl::CheckOptions opts;
  for (const auto& [name, v] : k.constants) opts.consts[name] = std::to_string(v);
  auto src = std::make_shared<const dsl::SourceFile>(absl::StrCat(k.kernel, ".py"), k.source);
  auto mod = dsl::Compile(src, opts);
  if (!mod.ok()) {
    r.outcome = "compile_error";
    r.message = std::string(mod.status().message());
    return r;
  }
  const dsl::ir::Function* fn = mod->Find(k.kernel);
  if (!fn || !fn->is_kernel) {
    r.outcome = "compile_error";
    r.message = absl::StrCat("no kernel named ", k.kernel);
    return r;
  }
  dsl::LaunchArgs la;
  la.dims = k.dims;
  la.max_instructions = int64_t{1} << 31;
  auto tensors = dsl::MakeTensors(*fn, la);
  if (!tensors.ok()) {
    r.outcome = "runtime_error";
    r.message = std::string(tensors.status().message());
    return r;
  }
  dsl::FillRandom(&*tensors, 1);
  if (auto st = PrepareInputs(p, &*tensors, 1); !st.ok()) {
    r.outcome = "runtime_error";
    r.message = std::string(st.message());
    return r;
  }
  r.inputs = *tensors;
  dsl::RunStats stats;
  auto st = dsl::Run(*mod, *fn, la, &*tensors, &stats);
  if (!st.ok()) {
    r.outcome = "runtime_error";
    r.message = std::string(st.message());
    return r;
  }
  r.outcome = "ok";
  r.instructions = stats.instructions;
  r.seconds = stats.seconds;
  r.outputs = std::move(*tensors);
  return r;
}

}  // namespace

absl::StatusOr<std::string> RunCandidateInInterpreter(const std::string& payload_json) {
  json payload = json::parse(payload_json, nullptr, false);
  if (payload.is_discarded() || !payload.is_object()) {
    return absl::InvalidArgumentError("candidate payload is not a JSON object");
  }
  ASSIGN_OR_RETURN(Kernel cand, ReadKernel(payload, "candidate"));
  if (!payload.contains("baseline"))
    return absl::InvalidArgumentError("candidate payload: no baseline");
  ASSIGN_OR_RETURN(Kernel base, ReadKernel(payload["baseline"], "baseline"));
  if (!payload.contains("problem"))
    return absl::InvalidArgumentError("candidate payload: no problem");
  ASSIGN_OR_RETURN(Problem p, FromJson(payload["problem"]));

  json result = {{"backend", "interp"},
                 {"unit", "interp_instructions"},
                 {"baseline_name", "interp:" + base.kernel}};
  RunOutcome c = RunKernel(cand, p);
  if (c.outcome != "ok") {
    result["outcome"] = c.outcome;
    result["message"] = c.message;
    return result.dump();
  }
  // Correctness against the reference semantics.
  ASSIGN_OR_RETURN(std::vector<dsl::HostTensor> want, Reference(p, c.inputs));
  Tolerance tol = ToleranceFor(p);
  double max_err = 0;
  for (const auto& w : want) {
    const dsl::HostTensor* got = nullptr;
    for (const auto& t : c.outputs) {
      if (t.name == w.name) got = &t;
    }
    if (!got || got->shape != w.shape) {
      result["outcome"] = "wrong";
      result["message"] = absl::StrCat("output ", w.name, " missing or of the wrong shape");
      return result.dump();
    }
    // Walk logical coordinates (the kernel's tensor may be strided).
    std::vector<int64_t> idx(w.shape.size(), 0);
    int64_t count = 1;
    for (int64_t d : w.shape) count *= d;
    for (int64_t n = 0; n < count; ++n) {
      int64_t rem = n, wo = 0, go = 0;
      for (int d = static_cast<int>(w.shape.size()) - 1; d >= 0; --d) {
        idx[d] = rem % w.shape[d];
        rem /= w.shape[d];
        wo += idx[d] * w.stride[d];
        go += idx[d] * got->stride[d];
      }
      double g = got->data[go], e = w.data[wo];
      double err = std::fabs(g - e);
      if (!(err <= tol.atol + tol.rtol * std::fabs(e))) {  // NaN fails too
        result["outcome"] = "wrong";
        result["message"] =
            absl::StrCat(w.name, idx.size() ? "" : "", " mismatch: got ", g, " want ", e);
        result["counterexample"] = {{"tensor", w.name}, {"index", idx}, {"got", g}, {"want", e}};
        return result.dump();
      }
      max_err = std::max(max_err, err);
    }
  }
  RunOutcome b = RunKernel(base, p);
  if (b.outcome != "ok") {
    result["outcome"] = "baseline_error";
    result["message"] = absl::StrCat("baseline: ", b.message);
    return result.dump();
  }
  result["outcome"] = "ok";
  result["time"] = c.instructions;
  result["baseline_time"] = b.instructions;
  result["ratio"] = static_cast<double>(b.instructions) /
                    static_cast<double>(std::max<int64_t>(1, c.instructions));
  result["max_abs_error"] = max_err;
  result["seconds"] = c.seconds;
  return result.dump();
}

worker::TaskHandler InterpCandidateHandler() {
  return [](const v1::LeasedTask& task, const std::atomic<bool>&) {
    return RunCandidateInInterpreter(task.payload_json());
  };
}

}  // namespace argus::planner
