#include "gpu_worker/candidate.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "base/status.h"
#include "base/subprocess.h"
#include "codegen/dsl_compile.h"
#include "dsl/check.h"
#include "dsl/interp.h"
#include "gpu_worker/runner/runner_core.h"

namespace argus::worker {

using nlohmann::json;
namespace fs = std::filesystem;

namespace {

json Outcome(const std::string& outcome, const std::string& message) {
  return {{"outcome", outcome}, {"message", message}};
}

absl::StatusOr<dsl::ir::Module> Front(const CandidateRequest& r) {
  dsl::CheckOptions co;
  co.consts = r.consts;
  co.arch = r.target;
  return dsl::Compile(std::make_shared<dsl::SourceFile>("candidate.py", r.source), co);
}

const dsl::ir::Function* Kernel(const dsl::ir::Module& m, const std::string& name) {
  const dsl::ir::Function* k = nullptr;
  for (const dsl::ir::Function& f : m.functions)
    if (f.is_kernel && (name.empty() || f.name == name)) k = &f;
  return k;
}

// The runner's tensor specs for the kernel's tensors (dense row-major), the
// output (check.c) poisoned.
absl::StatusOr<std::vector<runner::TensorSpec>> Tensors(const dsl::ir::Function& k,
                                                        const CandidateRequest& r,
                                                        const std::string& out) {
  std::vector<runner::TensorSpec> ts;
  for (const dsl::ir::TensorParam& t : k.tensors) {
    runner::TensorSpec s;
    s.name = t.name;
    if (!runner::ParseDType(dsl::DTypeName(t.dtype), &s.dtype))
      return absl::InvalidArgumentError(
          absl::StrCat("tensor ", t.name, ": dtype ", dsl::DTypeName(t.dtype),
                       " is not one the runner allocates (f32, bf16, f16, i32)"));
    std::vector<int64_t> stride;
    for (size_t d = 0; d < t.shape.size(); ++d) {
      auto ev = [&](const dsl::ir::SymInt& si) -> absl::StatusOr<int64_t> {
        int64_t v = si.coeff;
        for (int sym : si.syms) {
          auto it = r.dims.find(k.dims[sym]);
          if (it == r.dims.end())
            return absl::InvalidArgumentError(absl::StrCat("dims lack ", k.dims[sym]));
          v *= it->second;
        }
        return v;
      };
      ASSIGN_OR_RETURN(int64_t e, ev(t.shape[d]));
      ASSIGN_OR_RETURN(int64_t st, ev(t.stride[d]));
      s.shape.push_back(e);
      stride.push_back(st);
    }
    int64_t want = 1;
    for (int d = static_cast<int>(s.shape.size()) - 1; d >= 0; --d) {
      if (s.shape[d] > 1 && stride[d] != want)
        return absl::InvalidArgumentError(absl::StrCat(
            "tensor ", t.name, " is not dense row-major; the runner allocates only those"));
      want *= s.shape[d];
    }
    s.init = t.name == out ? "poison" : "random";
    ts.push_back(s);
  }
  return ts;
}

// The check spec with m/n/k filled from the output's shape where absent.
json FullCheck(const CandidateRequest& r, const std::vector<runner::TensorSpec>& ts) {
  json c = r.check;
  std::string op = c.value("op", "none");
  auto shape = [&](const std::string& name) {
    for (const runner::TensorSpec& t : ts)
      if (t.name == name) return t.shape;
    return std::vector<int64_t>{};
  };
  std::vector<int64_t> cs = shape(c.value("c", ""));
  if (op == "gemm") {
    std::vector<int64_t> as = shape(c.value("a", ""));
    if (!c.contains("m") && cs.size() == 2) c["m"] = cs[0];
    if (!c.contains("n") && cs.size() == 2) c["n"] = cs[1];
    if (!c.contains("k") && as.size() == 2) c["k"] = as[1];
  } else if ((op == "softmax" || op == "rmsnorm") && cs.size() == 2) {
    if (!c.contains("m")) c["m"] = cs[0];
    if (!c.contains("n")) c["n"] = cs[1];
  } else if (op == "attention" && cs.size() == 3) {
    if (!c.contains("m")) c["m"] = cs[0];
    if (!c.contains("n")) c["n"] = cs[1];
    if (!c.contains("k")) c["k"] = cs[2];
  }
  return c;
}

json SpecJson(const CandidateRequest& r, const dsl::ir::Function& k,
              const std::vector<runner::TensorSpec>& ts, uint64_t seed) {
  json spec;
  json tensors = json::array(), args = json::array();
  for (const runner::TensorSpec& t : ts) {
    tensors.push_back({{"name", t.name},
                       {"dtype", runner::DTypeName(t.dtype)},
                       {"shape", t.shape},
                       {"init", t.init}});
    args.push_back({{"tensor", t.name}});
  }
  for (const std::string& d : k.dims) args.push_back({{"i32", r.dims.at(d)}});
  for (const dsl::ir::ScalarParam& s : k.scalars) {
    double v = r.scalars.count(s.name) ? r.scalars.at(s.name) : 0.0;
    if (dsl::IsFloat(s.dtype))
      args.push_back({{"f32", v}});
    else
      args.push_back({{s.dtype == dsl::DType::kI64 ? "i64" : "i32", static_cast<int64_t>(v)}});
  }
  spec["tensors"] = tensors;
  spec["args"] = args;
  spec["check"] = FullCheck(r, ts);
  spec["baseline"] = r.baseline;
  if (!r.timing.empty()) spec["timing"] = r.timing;
  spec["seed"] = seed;
  spec["timeout_s"] = r.timeout_s;
  return spec;
}

uint64_t FreshSeed(uint64_t s) {
  if (s != 0) return s;
  std::random_device rd;
  return (static_cast<uint64_t>(rd()) << 32 | rd()) | 1;
}

void SetElement(runner::HostTensor* t, int64_t i, double v) {
  uint8_t* p = t->data.data();
  switch (t->spec.dtype) {
    case runner::DType::kF32: {
      float f = static_cast<float>(v);
      std::memcpy(p + 4 * i, &f, 4);
      break;
    }
    case runner::DType::kBF16: {
      uint16_t h = runner::F32ToBf16(static_cast<float>(v));
      std::memcpy(p + 2 * i, &h, 2);
      break;
    }
    case runner::DType::kF16: {
      uint16_t h = runner::F32ToF16(static_cast<float>(v));
      std::memcpy(p + 2 * i, &h, 2);
      break;
    }
    case runner::DType::kI32: {
      int32_t x = static_cast<int32_t>(v);
      std::memcpy(p + 4 * i, &x, 4);
      break;
    }
  }
}

json RunInterp(const CandidateRequest& r, uint64_t seed) {
  auto m = Front(r);
  if (!m.ok()) return Outcome("unsupported", std::string(m.status().message()));
  const dsl::ir::Function* k = Kernel(*m, r.kernel);
  if (!k) return Outcome("unsupported", absl::StrCat("no kernel named '", r.kernel, "'"));
  std::string out = r.check.value("c", "");
  auto ts = Tensors(*k, r, out);
  if (!ts.ok()) return Outcome("unsupported", std::string(ts.status().message()));
  json spec_json = SpecJson(r, *k, *ts, seed);
  spec_json["kernel"] = {{"artifact", "-"}, {"format", "ptx"}, {"symbol", k->name}};
  runner::RunSpec spec;
  std::string err;
  if (!runner::ParseRunSpec(spec_json, &spec, &err)) return Outcome("unsupported", err);
  std::vector<runner::HostTensor> host;
  std::vector<dsl::HostTensor> dts;
  for (size_t i = 0; i < spec.tensors.size(); ++i) {
    host.push_back(runner::MakeHostTensor(spec.tensors[i], seed, static_cast<int>(i)));
    dsl::HostTensor d;
    d.name = k->tensors[i].name;
    d.dtype = k->tensors[i].dtype;
    d.shape = spec.tensors[i].shape;
    d.stride.assign(d.shape.size(), 1);
    for (int e = static_cast<int>(d.shape.size()) - 2; e >= 0; --e)
      d.stride[e] = d.stride[e + 1] * d.shape[e + 1];
    d.data.resize(host.back().spec.elements());
    for (int64_t e = 0; e < host.back().spec.elements(); ++e) d.data[e] = host.back().At(e);
    dts.push_back(std::move(d));
  }
  dsl::LaunchArgs la;
  la.dims = r.dims;
  la.scalars = r.scalars;
  dsl::RunStats stats;
  absl::Status st = dsl::Run(*m, *k, la, &dts, &stats);
  json res;
  if (!st.ok()) {
    std::string msg(st.message());
    res = Outcome(msg.find("instruction budget") != std::string::npos ? "timeout" : "fault", msg);
  } else {
    int oi = -1;
    for (size_t i = 0; i < host.size(); ++i)
      if (host[i].spec.name == out) oi = static_cast<int>(i);
    if (oi < 0) return Outcome("unsupported", "check.c names no tensor of the kernel");
    for (int64_t e = 0; e < host[oi].spec.elements(); ++e)
      SetElement(&host[oi], e, dts[oi].data[e]);
    runner::CheckResult cr = runner::CheckOutput(spec.check, host, host[oi], seed);
    res = Outcome(cr.passed ? "ok" : "wrong",
                  cr.passed ? "output matches the reference" : cr.message);
    res["check"] = cr.ToJson();
  }
  res["interp"] = {
      {"blocks", stats.blocks}, {"instructions", stats.instructions}, {"seconds", stats.seconds}};
  return res;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string Tail(const std::string& s, size_t n = 2000) {
  return s.size() <= n ? s : s.substr(s.size() - n);
}

}  // namespace

absl::StatusOr<CandidateRequest> ParseCandidate(const std::string& payload) {
  json j = json::parse(payload, nullptr, false);
  if (j.is_discarded() || !j.is_object())
    return absl::InvalidArgumentError("candidate payload is not a JSON object");
  CandidateRequest r;
  try {
    r.source = j.at("source").get<std::string>();
    r.kernel = j.value("kernel", "");
    r.target = j.value("target", "sm_90a");
    r.backend = j.value("backend", "");
    if (j.contains("consts"))
      for (auto& [k, v] : j["consts"].items())
        r.consts[k] = v.is_string() ? v.get<std::string>() : v.dump();
    if (j.contains("dims"))
      for (auto& [k, v] : j["dims"].items()) r.dims[k] = v.get<int64_t>();
    if (j.contains("scalars"))
      for (auto& [k, v] : j["scalars"].items()) r.scalars[k] = v.get<double>();
    r.check = j.value("check", json::object());
    r.baseline = j.value("baseline", "none");
    r.timing = j.value("timing", json::object());
    r.seed = j.value("seed", uint64_t{0});
    r.timeout_s = j.value("timeout_s", 20.0);
  } catch (const json::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("candidate payload: ", e.what()));
  }
  if (r.target != "sm_90a" && r.target != "gfx942")
    return absl::InvalidArgumentError(absl::StrCat("unknown target '", r.target, "'"));
  return r;
}

absl::StatusOr<json> PrepareGpuRun(const CandidateRequest& r, const std::string& dir) {
  ASSIGN_OR_RETURN(dsl::ir::Module m, Front(r));
  const dsl::ir::Function* k = Kernel(m, r.kernel);
  if (!k) return absl::InvalidArgumentError(absl::StrCat("no kernel named '", r.kernel, "'"));
  codegen::DslCompileOptions o;
  o.target = r.target;
  o.kernel = k->name;
  o.consts = r.consts;
  o.dims = r.dims;
  ASSIGN_OR_RETURN(codegen::DslArtifacts a, codegen::CompileDslSource("candidate.py", r.source, o));
  RETURN_IF_ERROR(codegen::WriteArtifacts(a, dir));
  ASSIGN_OR_RETURN(std::vector<runner::TensorSpec> ts, Tensors(*k, r, r.check.value("c", "")));
  json spec = SpecJson(r, *k, ts, FreshSeed(r.seed));
  for (const codegen::KernelParam& p : a.metadata.params) {  // after tensors, dims, scalars
    if (p.kind == "tensormap")
      spec["args"].push_back(
          {{"tensormap", {{"tensor", p.tensor}, {"box", p.box}, {"swizzle", p.swizzle}}}});
  }
  spec["kernel"] = {
      {"artifact", a.metadata.artifact}, {"format", a.metadata.format},
      {"symbol", a.metadata.symbol},     {"grid", a.metadata.grid},
      {"block", a.metadata.block},       {"shared_bytes", a.metadata.dynamic_shared_bytes}};
  std::ofstream(fs::path(dir) / "spec.json") << spec.dump(2);
  return spec;
}

json RunCandidate(const CandidateRequest& r, const CandidateOptions& o) {
  std::string backend = r.backend.empty() ? o.default_backend : r.backend;
  uint64_t seed = FreshSeed(r.seed);
  json res;
  if (backend == "interp") {
    res = RunInterp(r, seed);
  } else if (backend != "gpu") {
    res = Outcome("unsupported", absl::StrCat("unknown backend '", backend, "' (interp or gpu)"));
  } else {
    std::string dir = o.work_dir;
    if (dir.empty()) {
      std::string tmpl = (fs::temp_directory_path() / "argus-candidate-XXXXXX").string();
      if (mkdtemp(tmpl.data()) == nullptr)
        return Outcome("crash", "cannot create a work directory");
      dir = tmpl;
    }
    CandidateRequest rs = r;
    rs.seed = seed;
    auto spec = PrepareGpuRun(rs, dir);
    if (!spec.ok()) {
      res = Outcome("unsupported", std::string(spec.status().message()));
    } else {
      std::string result_path = (fs::path(dir) / "result.json").string();
      ProcessOptions po;
      po.argv = {o.runner_path, "--spec", (fs::path(dir) / "spec.json").string(), "--out",
                 result_path};
      if (r.baseline == "none") po.argv.push_back("--no-baseline");
      po.timeout = std::chrono::milliseconds(
          static_cast<int64_t>((r.timeout_s + o.watchdog_grace_s) * 1000));
      auto pr = RunWithTimeout(po);
      json runner = json::parse(ReadFile(result_path), nullptr, false);
      bool have = !runner.is_discarded() && runner.is_object() && runner.contains("outcome");
      if (!pr.ok()) {
        res = Outcome("crash",
                      absl::StrCat("cannot run ", o.runner_path, ": ", pr.status().message()));
      } else if (pr->end == ProcessResult::End::kTimedOut) {
        res = Outcome("timeout", absl::StrCat("runner killed by the watchdog after ",
                                              static_cast<int>(po.timeout.count() / 1000), " s"));
      } else if (have) {
        res = Outcome(runner["outcome"].get<std::string>(), runner.value("message", ""));
        res["runner"] = runner;
        for (const char* key : {"check", "timing", "ratio", "tflops", "gbps", "function"})
          if (runner.contains(key)) res[key] = runner[key];
      } else if (pr->end == ProcessResult::End::kSignaled) {
        res = Outcome("crash", absl::StrCat("runner died of signal ", pr->signal,
                                            " without a result; stderr: ", Tail(pr->stderr_text)));
      } else {
        res = Outcome("crash", absl::StrCat("runner exited ", pr->exit_code,
                                            " without a result; stderr: ", Tail(pr->stderr_text)));
      }
      res["metadata"] = json::parse(
          ReadFile((fs::path(dir) / (spec->at("kernel").at("symbol").get<std::string>() + ".json"))
                       .string()),
          nullptr, false);
    }
    if (!o.keep_files && o.work_dir.empty()) fs::remove_all(dir);
  }
  res["backend"] = backend;
  res["target"] = r.target;
  res["kernel"] = r.kernel;
  res["seed"] = seed;
  return res;
}

absl::StatusOr<std::string> HandleCandidate(const std::string& payload, const CandidateOptions& o) {
  ASSIGN_OR_RETURN(CandidateRequest r, ParseCandidate(payload));
  return RunCandidate(r, o).dump();
}

}  // namespace argus::worker
