#include "gpu_worker/candidate.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "base/file_lock.h"
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
  return CandidateOutcome(outcome, message);
}

absl::StatusOr<dsl::ir::Module> Front(const KernelSpec& k, const std::string& target,
                                      const std::string& file = "candidate.py") {
  dsl::CheckOptions co;
  co.consts = k.constants;
  if (target != "interp") co.arch = target;
  return dsl::Compile(std::make_shared<dsl::SourceFile>(file, k.source), co);
}

const dsl::ir::Function* Kernel(const dsl::ir::Module& m, const std::string& name) {
  const dsl::ir::Function* k = nullptr;
  for (const dsl::ir::Function& f : m.functions)
    if (f.is_kernel && (name.empty() || f.name == name)) k = &f;
  return k;
}

// The shape of the row-major buffer behind a tensor of logical `shape` and
// `stride`: the shape itself when dense row-major; {cols, rows} for a
// transposed matrix (stride (1, rows): a [N, K] buffer seen as K x N, what the
// runner's gemm check calls b_layout "nk"); empty for anything else.
std::vector<int64_t> MemoryShape(const std::vector<int64_t>& shape,
                                 const std::vector<int64_t>& stride) {
  int64_t want = 1;
  bool dense = true;
  for (int d = static_cast<int>(shape.size()) - 1; d >= 0; --d) {
    if (shape[d] > 1 && stride[d] != want) dense = false;
    want *= shape[d];
  }
  if (dense) return shape;
  if (shape.size() == 2 && stride[0] == 1 && stride[1] == shape[0]) return {shape[1], shape[0]};
  return {};
}

// The runner's tensor specs for the kernel's tensors (dense row-major), the
// output (check.c) poisoned.
absl::StatusOr<std::vector<runner::TensorSpec>> Tensors(const dsl::ir::Function& k,
                                                        const KernelSpec& r,
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
    s.shape = MemoryShape(s.shape, stride);
    if (s.shape.empty())
      return absl::InvalidArgumentError(absl::StrCat(
          "tensor ", t.name,
          " is neither dense row-major nor a transposed matrix; the runner allocates only those"));
    s.init = t.name == out ? "poison" : "random";
    ts.push_back(s);
  }
  return ts;
}

// The inputs a check op needs beyond uniform [-1, 1] values: moe's routed
// expert ids (distinct, in [0, E): runner init "topk") and non-negative
// routing weights summing to at most 1. A second checked output ("e": the
// fusions') is poisoned like the first.
void AdaptInputs(const json& check, std::vector<runner::TensorSpec>* ts) {
  for (runner::TensorSpec& t : *ts) {
    if (check.contains("e") && t.name == check.value("e", "")) t.init = "poison";
  }
  if (check.value("op", "none") != "moe") return;
  runner::TensorSpec *ids = nullptr, *wt = nullptr, *w1 = nullptr;
  for (runner::TensorSpec& t : *ts) {
    if (t.name == check.value("ids", "")) ids = &t;
    if (t.name == check.value("weights", "")) wt = &t;
    if (t.name == check.value("b", "")) w1 = &t;
  }
  if (ids && w1 && !w1->shape.empty() && !ids->shape.empty()) {
    ids->init = "topk";
    ids->low = 0;
    ids->high = static_cast<double>(w1->shape[0]);
  }
  if (wt && ids && !ids->shape.empty()) {
    wt->low = 0;
    wt->high = 1.0 / static_cast<double>(ids->shape.back());
  }
}

// The check spec with m/n/k filled from the output's shape where absent.
json FullCheck(const CandidatePayload& r, const std::vector<runner::TensorSpec>& ts) {
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
    // A's buffer is [M, K], or [K, M] for a_layout "km".
    if (!c.contains("k") && as.size() == 2) c["k"] = as[c.value("a_layout", "mk") == "km" ? 0 : 1];
  } else if ((op == "softmax" || op == "rmsnorm" || op == "layernorm" || op == "add_rmsnorm") &&
             cs.size() == 2) {
    if (!c.contains("m")) c["m"] = cs[0];
    if (!c.contains("n")) c["n"] = cs[1];
  } else if (op == "row_sum" && cs.size() == 1) {
    std::vector<int64_t> as = shape(c.value("a", ""));
    if (!c.contains("m")) c["m"] = cs[0];
    if (!c.contains("n") && as.size() == 2) c["n"] = as[1];
  } else if (op == "rope" && cs.size() == 3) {
    if (!c.contains("m")) c["m"] = cs[0];
    if (!c.contains("n")) c["n"] = cs[2];
  } else if (op == "moe" && cs.size() == 2) {
    std::vector<int64_t> w1 = shape(c.value("b", ""));
    if (!c.contains("m")) c["m"] = cs[0];
    if (!c.contains("n")) c["n"] = cs[1];
    if (!c.contains("k") && w1.size() == 3) c["k"] = w1[2];
  } else if (op == "attention" && cs.size() == 3) {
    if (!c.contains("m")) c["m"] = cs[0];
    if (!c.contains("n")) c["n"] = cs[1];
    if (!c.contains("k")) c["k"] = cs[2];
  }
  return c;
}

json TensorJson(const runner::TensorSpec& t) {
  json j = {{"name", t.name},   {"dtype", runner::DTypeName(t.dtype)},
            {"shape", t.shape}, {"init", t.init},
            {"low", t.low},     {"high", t.high}};
  if (t.scratch) j["scratch"] = true;
  return j;
}

// A kernel's runner arguments: its tensors, dims and scalars in parameter
// order, then the TMA tensor maps codegen asked for.
json KernelArgs(const KernelSpec& r, const dsl::ir::Function& k,
                const codegen::KernelMetadata& meta) {
  json args = json::array();
  for (const dsl::ir::TensorParam& t : k.tensors) args.push_back({{"tensor", t.name}});
  for (const std::string& d : k.dims) args.push_back({{"i32", r.dims.at(d)}});
  for (const dsl::ir::ScalarParam& s : k.scalars) {
    double v = r.scalars.count(s.name) ? r.scalars.at(s.name) : 0.0;
    if (dsl::IsFloat(s.dtype))
      args.push_back({{"f32", v}});
    else
      args.push_back({{s.dtype == dsl::DType::kI64 ? "i64" : "i32", static_cast<int64_t>(v)}});
  }
  for (const codegen::KernelParam& p : meta.params) {  // after tensors, dims, scalars
    if (p.kind == "tensormap")
      args.push_back(
          {{"tensormap", {{"tensor", p.tensor}, {"box", p.box}, {"swizzle", p.swizzle}}}});
  }
  return args;
}

json LaunchKernelJson(const codegen::KernelMetadata& meta, const std::string& prefix) {
  return {{"artifact", prefix + meta.artifact},
          {"format", meta.format},
          {"symbol", meta.symbol},
          {"grid", meta.grid},
          {"block", meta.block},
          {"shared_bytes", meta.dynamic_shared_bytes}};
}

json SpecJson(const CandidatePayload& p, const std::vector<runner::TensorSpec>& ts, uint64_t seed) {
  json spec;
  json tensors = json::array();
  for (const runner::TensorSpec& t : ts) tensors.push_back(TensorJson(t));
  spec["tensors"] = tensors;
  spec["check"] = FullCheck(p, ts);
  // The runner times a vendor baseline itself; a baseline kernel is a second run.
  spec["baseline"] = IsVendorBaseline(p.baseline.name) ? p.baseline.name : "none";
  if (!p.timing.empty()) spec["timing"] = p.timing;
  if (p.flops > 0) spec["flops"] = p.flops;
  if (p.bytes > 0) spec["bytes"] = p.bytes;
  spec["seed"] = seed;
  spec["timeout_s"] = p.timeout_s;
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

// Copies `from` into `to` element by element in logical coordinates (their
// strides may differ), or as it lies in memory when both views are of one
// row-major buffer; false otherwise.
bool CopyLogical(const dsl::HostTensor& from, dsl::HostTensor* to) {
  if (from.shape != to->shape) {
    // One buffer seen two ways (nn.Linear's B as [N, K], or as the [K, N]
    // view with unit row stride): the same memory, copied as it lies.
    std::vector<int64_t> mem = MemoryShape(from.shape, from.stride);
    if (mem.empty() || mem != MemoryShape(to->shape, to->stride) ||
        from.data.size() != to->data.size())
      return false;
    to->data = from.data;
    return true;
  }
  int64_t count = 1;
  for (int64_t d : from.shape) count *= d;
  for (int64_t n = 0; n < count; ++n) {
    int64_t rem = n, fo = 0, tof = 0;
    for (int d = static_cast<int>(from.shape.size()) - 1; d >= 0; --d) {
      int64_t i = rem % from.shape[d];
      rem /= from.shape[d];
      fo += i * from.stride[d];
      tof += i * to->stride[d];
    }
    to->data[tof] = from.data[fo];
  }
  return true;
}

// One kernel on the interpreter: its tensors and instruction count.
// Kernel `name` of a pipeline, its tensors merged into `ts`: the first
// declaration of a name wins; `shapes` re-shapes one to the problem's view of
// it; the tensors the check names are the problem's, the others scratch
// between the launches (poisoned, never checked).
absl::StatusOr<const dsl::ir::Function*> PipelineKernel(const CandidatePayload& r,
                                                        const dsl::ir::Module& m,
                                                        const std::string& name,
                                                        std::vector<runner::TensorSpec>* ts) {
  const dsl::ir::Function* k = name.empty() ? nullptr : Kernel(m, name);
  if (!k) return absl::InvalidArgumentError(absl::StrCat("pipeline: no kernel named '", name, "'"));
  std::set<std::string> named;
  for (const char* key : {"a", "b", "c", "d", "e", "u", "ids", "weights"})
    if (r.check.contains(key)) named.insert(r.check[key].get<std::string>());
  ASSIGN_OR_RETURN(std::vector<runner::TensorSpec> own,
                   Tensors(*k, r.candidate, r.check.value("c", "")));
  for (runner::TensorSpec& t : own) {
    bool seen = false;
    for (const runner::TensorSpec& u : *ts) seen = seen || u.name == t.name;
    if (seen) continue;
    if (auto it = r.candidate.shapes.find(t.name); it != r.candidate.shapes.end()) {
      runner::TensorSpec re = t;
      re.shape = it->second;
      if (re.elements() != t.elements())
        return absl::InvalidArgumentError(absl::StrCat("pipeline: shapes gives ", t.name, " ",
                                                       re.elements(), " elements, kernel ", name,
                                                       " declares ", t.elements()));
      t = re;
    }
    if (!named.count(t.name)) {
      t.init = "poison";
      t.scratch = true;
    }
    ts->push_back(t);
  }
  return k;
}

// A pipeline on the interpreter: one pool of tensors (the runner's seeded
// values, as a GPU run of that seed sees them; scratch and the output
// poisoned), each kernel run on it in turn with its own dims and views (a
// tensor the kernel sees reshaped is the same buffer in memory order).
json RunPipelineOnInterpreter(const CandidatePayload& r, uint64_t seed,
                              std::vector<dsl::HostTensor>* pool, dsl::RunStats* total) {
  auto m = Front(r.candidate, r.target);
  if (!m.ok()) return Outcome("unsupported", std::string(m.status().message()));
  std::vector<runner::TensorSpec> ts;
  std::vector<const dsl::ir::Function*> kernels;
  for (const std::string& name : r.candidate.pipeline) {
    auto k = PipelineKernel(r, *m, name, &ts);
    if (!k.ok()) return Outcome("unsupported", std::string(k.status().message()));
    kernels.push_back(*k);
  }
  AdaptInputs(r.check, &ts);
  for (size_t i = 0; i < ts.size(); ++i) {
    runner::HostTensor h = runner::MakeHostTensor(ts[i], seed, static_cast<int>(i));
    dsl::HostTensor t;
    t.name = ts[i].name;
    t.dtype = dsl::DTypeFromName(runner::DTypeName(ts[i].dtype)).value_or(dsl::DType::kF32);
    t.shape = ts[i].shape;
    t.stride.assign(t.shape.size(), 1);
    for (int d = static_cast<int>(t.shape.size()) - 2; d >= 0; --d)
      t.stride[d] = t.stride[d + 1] * t.shape[d + 1];
    for (int64_t e = 0; e < h.spec.elements(); ++e) t.data.push_back(h.At(e));
    pool->push_back(std::move(t));
  }
  for (const dsl::ir::Function* k : kernels) {
    dsl::LaunchArgs la;
    for (const std::string& d : k->dims) la.dims[d] = r.candidate.dims.at(d);
    la.scalars = r.candidate.scalars;
    auto own = dsl::MakeTensors(*k, la);
    if (!own.ok()) return Outcome("unsupported", std::string(own.status().message()));
    auto find = [&](const std::string& name) -> dsl::HostTensor& {
      for (dsl::HostTensor& t : *pool)
        if (t.name == name) return t;
      return pool->front();  // unreachable: every kernel tensor is in the pool
    };
    for (dsl::HostTensor& t : *own) t.data = find(t.name).data;  // dense: memory order
    dsl::RunStats st;
    absl::Status run = dsl::Run(*m, *k, la, &*own, &st);
    if (!run.ok()) {
      std::string msg = absl::StrCat(k->name, ": ", run.message());
      return Outcome(msg.find("instruction budget") != std::string::npos ? "timeout" : "fault",
                     msg);
    }
    total->blocks += st.blocks;
    total->instructions += st.instructions;
    total->seconds += st.seconds;
    for (dsl::HostTensor& t : *own) find(t.name).data = std::move(t.data);
  }
  return json();
}

struct InterpRun {
  json failure;  // null when it ran
  std::vector<dsl::HostTensor> tensors;
  dsl::RunStats stats;
};

// Runs `k` on `inputs` (matched by name; outputs the kernel writes are
// taken as they are, e.g. poisoned).
InterpRun RunOnInterpreter(const KernelSpec& k, const std::string& target,
                           const std::vector<dsl::HostTensor>& inputs, const std::string& file) {
  InterpRun run;
  auto m = Front(k, target, file);
  if (!m.ok()) {
    run.failure = Outcome("unsupported", std::string(m.status().message()));
    return run;
  }
  const dsl::ir::Function* fn = Kernel(*m, k.kernel);
  if (!fn) {
    run.failure = Outcome("unsupported", absl::StrCat(file, ": no kernel named '", k.kernel, "'"));
    return run;
  }
  dsl::LaunchArgs la;
  la.dims = k.dims;
  la.scalars = k.scalars;
  auto ts = dsl::MakeTensors(*fn, la);
  if (!ts.ok()) {
    run.failure = Outcome("unsupported", std::string(ts.status().message()));
    return run;
  }
  for (dsl::HostTensor& t : *ts) {
    for (const dsl::HostTensor& in : inputs) {
      if (in.name != t.name) continue;
      if (!CopyLogical(in, &t)) {
        run.failure = Outcome("unsupported", absl::StrCat(file, ": tensor ", t.name,
                                                          " has another shape than the inputs"));
        return run;
      }
    }
  }
  absl::Status st = dsl::Run(*m, *fn, la, &*ts, &run.stats);
  if (!st.ok()) {
    std::string msg(st.message());
    run.failure =
        Outcome(msg.find("instruction budget") != std::string::npos ? "timeout" : "fault", msg);
    return run;
  }
  run.tensors = std::move(*ts);
  return run;
}

// The inputs of a candidate on the interpreter. Runner check ops: the
// runner's seeded values (the same a GPU run of that seed sees), outputs
// poisoned. Check op "problem": the interpreter's fill, prepared by the
// problem's reference.
absl::StatusOr<std::vector<dsl::HostTensor>> InterpInputs(const CandidatePayload& r,
                                                          const CandidateOptions& o, uint64_t seed,
                                                          json* failure) {
  auto m = Front(r.candidate, r.target);
  if (!m.ok()) {
    *failure = Outcome("unsupported", std::string(m.status().message()));
    return absl::InvalidArgumentError("front end");
  }
  const dsl::ir::Function* k = Kernel(*m, r.candidate.kernel);
  if (!k) {
    *failure = Outcome("unsupported", absl::StrCat("no kernel named '", r.candidate.kernel, "'"));
    return absl::InvalidArgumentError("kernel");
  }
  std::vector<dsl::HostTensor> dts;
  if (r.check.value("op", "none") == "problem") {
    dsl::LaunchArgs la;
    la.dims = r.candidate.dims;
    ASSIGN_OR_RETURN(dts, dsl::MakeTensors(*k, la));
    dsl::FillRandom(&dts, seed);
    RETURN_IF_ERROR(o.reference.prepare(r.problem, &dts, seed));
    return dts;
  }
  std::string out = r.check.value("c", "");
  ASSIGN_OR_RETURN(std::vector<runner::TensorSpec> ts, Tensors(*k, r.candidate, out));
  AdaptInputs(r.check, &ts);
  dsl::LaunchArgs la;
  la.dims = r.candidate.dims;
  ASSIGN_OR_RETURN(dts, dsl::MakeTensors(*k, la));
  for (size_t i = 0; i < ts.size() && i < dts.size(); ++i) {
    // The runner's buffer, element for element in memory order (the
    // interpreter's tensor has the kernel's logical shape and strides).
    runner::HostTensor h = runner::MakeHostTensor(ts[i], seed, static_cast<int>(i));
    if (static_cast<int64_t>(dts[i].data.size()) != h.spec.elements())
      return absl::InternalError(absl::StrCat("tensor ", ts[i].name, ": buffer sizes differ"));
    for (int64_t e = 0; e < h.spec.elements(); ++e) dts[i].data[e] = h.At(e);
  }
  return dts;
}

// Checks the candidate's outputs: runner_core's reference or the problem's.
json CheckInterp(const CandidatePayload& r, const CandidateOptions& o,
                 const std::vector<dsl::HostTensor>& inputs,
                 const std::vector<dsl::HostTensor>& outputs, uint64_t seed) {
  if (r.check.value("op", "none") == "problem") {
    auto c = o.reference.check(r.problem, inputs, outputs);
    if (!c.ok()) return Outcome("unsupported", std::string(c.status().message()));
    json res = Outcome(c->value("passed", false) ? "ok" : "wrong", c->value("message", ""));
    for (const char* key : {"counterexample", "max_abs_error"})
      if (c->contains(key)) res[key] = (*c)[key];
    return res;
  }
  json spec_json = {{"kernel", {{"artifact", "-"}, {"format", "ptx"}, {"symbol", "k"}}},
                    {"tensors", json::array()},
                    {"args", json::array()}};
  std::string out = r.check.value("c", "");
  std::vector<runner::HostTensor> host;
  int oi = -1;
  for (size_t i = 0; i < outputs.size(); ++i) {
    const dsl::HostTensor& t = outputs[i];
    runner::TensorSpec s;
    s.name = t.name;
    runner::ParseDType(dsl::DTypeName(t.dtype), &s.dtype);
    s.shape = MemoryShape(t.shape, t.stride);  // t.data is that buffer, in memory order
    spec_json["tensors"].push_back(
        {{"name", s.name}, {"dtype", runner::DTypeName(s.dtype)}, {"shape", s.shape}});
    runner::HostTensor h = runner::MakeHostTensor(s, seed, static_cast<int>(i));
    for (int64_t e = 0; e < s.elements(); ++e) SetElement(&h, e, t.data[e]);
    if (t.name == out) oi = static_cast<int>(i);
    host.push_back(std::move(h));
  }
  if (oi < 0) return Outcome("unsupported", "check.c names no tensor of the kernel");
  std::vector<runner::TensorSpec> specs;
  for (const runner::HostTensor& h : host) specs.push_back(h.spec);
  spec_json["check"] = FullCheck(r, specs);
  runner::RunSpec spec;
  std::string err;
  if (!runner::ParseRunSpec(spec_json, &spec, &err)) return Outcome("unsupported", err);
  runner::CheckResult cr = runner::CheckOutput(spec.check, host, host[oi], seed);
  json res =
      Outcome(cr.passed ? "ok" : "wrong", cr.passed ? "output matches the reference" : cr.message);
  res["check"] = cr.ToJson();
  res["max_abs_error"] = cr.max_abs_err;
  if (!cr.passed && cr.first_bad_index >= 0)
    res["counterexample"] = {{"tensor", out},
                             {"index", cr.first_bad_index},
                             {"got", cr.first_bad_got},
                             {"want", cr.first_bad_want}};
  return res;
}

json RunInterp(const CandidatePayload& r, const CandidateOptions& o, uint64_t seed) {
  bool problem_check = r.check.value("op", "none") == "problem";
  if (!r.candidate.pipeline.empty() && problem_check)
    return Outcome("unsupported", "a pipeline of kernels is checked by a runner check op");
  if (problem_check && (!o.reference.prepare || !o.reference.check))
    return Outcome("unsupported",
                   "this worker has no reference for check op 'problem' (it checks gemm, add, "
                   "softmax, rmsnorm, attention); run the job where the planner's interpreter "
                   "worker runs, or give a runner check op");
  json failure;
  InterpRun c;
  absl::StatusOr<std::vector<dsl::HostTensor>> inputs;
  if (!r.candidate.pipeline.empty()) {
    // The pool after the run holds the inputs unchanged (no launch writes them).
    c.failure = RunPipelineOnInterpreter(r, seed, &c.tensors, &c.stats);
    if (!c.failure.is_null()) return c.failure;
    inputs = c.tensors;
  } else {
    inputs = InterpInputs(r, o, seed, &failure);
    if (!inputs.ok())
      return failure.is_null() ? Outcome("unsupported", std::string(inputs.status().message()))
                               : failure;
    if (!problem_check) {  // outputs start poisoned, as on a GPU
      std::string out = r.check.value("c", "");
      for (dsl::HostTensor& t : *inputs)
        if (t.name == out) std::fill(t.data.begin(), t.data.end(), std::nan(""));
    }
    c = RunOnInterpreter(r.candidate, r.target, *inputs, "candidate.py");
    if (!c.failure.is_null()) return c.failure;
  }
  json res = CheckInterp(r, o, *inputs, c.tensors, seed);
  res["interp"] = {{"blocks", c.stats.blocks},
                   {"instructions", c.stats.instructions},
                   {"seconds", c.stats.seconds}};
  if (res["outcome"] != "ok") return res;
  double base = 0;
  if (r.baseline.name == "kernel") {
    InterpRun b = RunOnInterpreter(r.baseline.kernel, r.target, *inputs, "baseline.py");
    if (!b.failure.is_null()) {
      res = Outcome("baseline_error", absl::StrCat("baseline ", r.baseline.kernel.kernel, ": ",
                                                   b.failure.value("outcome", ""), ": ",
                                                   b.failure.value("message", "")));
      return res;
    }
    base = static_cast<double>(b.stats.instructions);
    res["baseline_name"] = "interp:" + r.baseline.kernel.kernel;
  } else {
    res["baseline_name"] = "none";  // a vendor library has no interpreter run
  }
  SetCandidateTimes(&res, static_cast<double>(c.stats.instructions), base, "interp_instructions");
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

// One kernel through codegen and an argus-runner child in `dir`: the
// runner's result (outcomes pass through) plus the kernel's metadata.
json RunOnGpu(const CandidatePayload& r, const KernelSpec& k, const CandidateOptions& o,
              const std::string& dir, uint64_t seed, bool with_vendor_baseline) {
  CandidatePayload rs = r;
  rs.candidate = k;
  rs.seed = seed;
  if (!with_vendor_baseline) rs.baseline.name = "none";
  auto spec = PrepareGpuRun(rs, dir);
  if (!spec.ok()) return Outcome("unsupported", std::string(spec.status().message()));
  json res;
  std::string result_path = (fs::path(dir) / "result.json").string();
  fs::remove(result_path);
  ProcessOptions po;
  po.argv = {o.runner_path, "--spec", (fs::path(dir) / "spec.json").string(), "--out", result_path};
  if (!IsVendorBaseline(rs.baseline.name)) po.argv.push_back("--no-baseline");
  po.timeout =
      std::chrono::milliseconds(static_cast<int64_t>((r.timeout_s + o.watchdog_grace_s) * 1000));
  po.cancel = o.cancel;
  FileLock turn;
  if (!o.gpu_run_lock.empty()) {
    auto lock = FileLock::Acquire(o.gpu_run_lock, FileLock::Mode::kExclusive, FileLock::Wait::kYes);
    if (!lock.ok()) return Outcome("crash", std::string(lock.status().message()));
    turn = std::move(*lock);
  }
  auto pr = RunWithTimeout(po);
  turn = FileLock();  // the GPU is free for the next worker while this one reads its result
  json runner = json::parse(ReadFile(result_path), nullptr, false);
  bool have = !runner.is_discarded() && runner.is_object() && runner.contains("outcome");
  if (!pr.ok()) {
    res = Outcome("crash", absl::StrCat("cannot run ", o.runner_path, ": ", pr.status().message()));
  } else if (pr->end == ProcessResult::End::kCancelled) {
    res = Outcome("cancelled", "the server revoked the task while its runner ran; runner killed");
  } else if (pr->end == ProcessResult::End::kTimedOut) {
    res = Outcome("timeout", absl::StrCat("runner killed by the watchdog after ",
                                          static_cast<int>(po.timeout.count() / 1000), " s"));
  } else if (have) {
    res = Outcome(runner["outcome"].get<std::string>(), runner.value("message", ""));
    res["runner"] = runner;
    for (const char* key : {"check", "timing", "tflops", "gbps", "function"})
      if (runner.contains(key)) res[key] = runner[key];
  } else if (pr->end == ProcessResult::End::kSignaled) {
    res = Outcome("crash", absl::StrCat("runner died of signal ", pr->signal,
                                        " without a result; stderr: ", Tail(pr->stderr_text)));
  } else {
    res = Outcome("crash", absl::StrCat("runner exited ", pr->exit_code,
                                        " without a result; stderr: ", Tail(pr->stderr_text)));
  }
  if (spec->contains("launches")) {  // a pipeline: each launch's metadata
    res["metadata"] = json::array();
    for (size_t i = 0; i < (*spec)["launches"].size(); ++i) {
      const std::string sym = (*spec)["launches"][i]["kernel"]["symbol"];
      res["metadata"].push_back(
          json::parse(ReadFile((fs::path(dir) / absl::StrCat("k", i) / (sym + ".json")).string()),
                      nullptr, false));
    }
    return res;
  }
  res["metadata"] = json::parse(
      ReadFile((fs::path(dir) / (spec->at("kernel").at("symbol").get<std::string>() + ".json"))
                   .string()),
      nullptr, false);
  return res;
}

double MedianMs(const json& runner_or_baseline) {
  if (!runner_or_baseline.is_object() || !runner_or_baseline.contains("timing")) return 0;
  return runner_or_baseline["timing"].value("median_ms", 0.0);
}

json RunGpu(const CandidatePayload& r, const CandidateOptions& o, uint64_t seed) {
  if (r.check.value("op", "none") == "problem")
    return Outcome("unsupported",
                   "check op 'problem' has no GPU reference: the runner checks gemm, add, "
                   "softmax, rmsnorm, attention");
  std::string dir = o.work_dir;
  if (dir.empty()) {
    std::string tmpl = (fs::temp_directory_path() / "argus-candidate-XXXXXX").string();
    if (mkdtemp(tmpl.data()) == nullptr) return Outcome("crash", "cannot create a work directory");
    dir = tmpl;
  }
  json res = RunOnGpu(r, r.candidate, o, dir, seed, true);
  if (res.value("outcome", "") == "ok") {
    double ours = MedianMs(res);
    double base = 0;
    if (IsVendorBaseline(r.baseline.name)) {
      // Timed by the runner in the same process (a runner that does not know
      // the library leaves it null: no speed-up, and the message says so).
      const json& b = res["runner"]["baseline"];
      res["baseline_name"] = b.is_object() ? b.value("name", r.baseline.name) : r.baseline.name;
      base = MedianMs(b);
      if (base <= 0)
        res["message"] = absl::StrCat(
            "baseline ", r.baseline.name, " not timed: ",
            b.is_object() ? absl::StrCat(b.value("outcome", ""), " ", b.value("message", ""))
                          : "this runner has no such baseline");
    } else if (r.baseline.name == "kernel") {
      fs::path bdir = fs::path(dir) / "baseline";
      fs::create_directories(bdir);
      json b = RunOnGpu(r, r.baseline.kernel, o, bdir.string(), seed, false);
      res["baseline_name"] = "kernel:" + r.baseline.kernel.kernel;
      if (b.value("outcome", "") != "ok") {
        json out = Outcome("baseline_error",
                           absl::StrCat("baseline ", r.baseline.kernel.kernel, ": ",
                                        b.value("outcome", ""), ": ", b.value("message", "")));
        out["runner"] = res["runner"];
        res = out;
      }
      base = MedianMs(b);
    } else {
      res["baseline_name"] = "none";
    }
    if (res.value("outcome", "") == "ok") SetCandidateTimes(&res, ours, base, "ms");
  }
  if (!o.keep_files && o.work_dir.empty()) fs::remove_all(dir);
  return res;
}

// The verification gate of a worker that requires it: null when the
// candidate may run, else the `rejected` (or `verifier_unavailable`) result.
json VerificationRefusal(const CandidatePayload& r, const CandidateOptions& o) {
  if (!o.require_verification) return json();
  if (!r.VerificationPassed()) {
    json res = Outcome("rejected", r.verification.is_null()
                                       ? "not verified: this worker runs only candidates the "
                                         "verifier passed"
                                       : "the verifier rejected this candidate");
    if (!r.verification.is_null()) res["verifier"] = r.verification;
    return res;
  }
  if (!o.verify) return json();
  auto report = o.verify(r.candidate, r.target);
  if (!report.ok()) return Outcome("verifier_unavailable", std::string(report.status().message()));
  if (!report->value("verified", false)) {
    json res = Outcome("rejected", "this worker's verifier does not pass the candidate");
    res["verifier"] = *report;
    return res;
  }
  return json();
}

}  // namespace

absl::StatusOr<CandidateRequest> ParseCandidate(const std::string& payload) {
  return ParseCandidatePayload(payload);
}

namespace {

// A pipeline: each kernel compiled into dir/k<i>/, one runner spec whose
// launches share one set of tensors (PipelineTensors).
absl::StatusOr<json> PreparePipeline(const CandidateRequest& r, const dsl::ir::Module& m,
                                     const std::string& dir) {
  std::vector<runner::TensorSpec> ts;
  json launches = json::array();
  for (size_t i = 0; i < r.candidate.pipeline.size(); ++i) {
    const std::string& name = r.candidate.pipeline[i];
    // Errors name the launch: a pipeline of six kernels is hard to debug from
    // a bare compile diagnostic.
    auto at_launch = [&](const absl::Status& st) {
      return absl::Status(st.code(),
                          absl::StrCat("pipeline launch ", i, " (", name, "): ", st.message()));
    };
    auto k = PipelineKernel(r, m, name, &ts);
    if (!k.ok()) return at_launch(k.status());
    codegen::DslCompileOptions o;
    o.target = r.target;
    o.kernel = name;
    o.consts = r.candidate.constants;
    o.dims = r.candidate.dims;
    auto compiled = codegen::CompileDslSource("candidate.py", r.candidate.source, o);
    if (!compiled.ok()) return at_launch(compiled.status());
    const codegen::DslArtifacts& a = *compiled;
    const std::string sub = absl::StrCat("k", i);
    RETURN_IF_ERROR(codegen::WriteArtifacts(a, (fs::path(dir) / sub).string()));
    launches.push_back({{"kernel", LaunchKernelJson(a.metadata, sub + "/")},
                        {"args", KernelArgs(r.candidate, **k, a.metadata)}});
  }
  AdaptInputs(r.check, &ts);
  json spec = SpecJson(r, ts, FreshSeed(r.seed));
  spec["launches"] = launches;
  std::ofstream(fs::path(dir) / "spec.json") << spec.dump(2);
  return spec;
}

}  // namespace

absl::StatusOr<json> PrepareGpuRun(const CandidateRequest& r, const std::string& dir) {
  if (r.target == "interp")
    return absl::InvalidArgumentError("target interp has no GPU artifact (sm_90a or gfx942)");
  ASSIGN_OR_RETURN(dsl::ir::Module m, Front(r.candidate, r.target));
  if (!r.candidate.pipeline.empty()) return PreparePipeline(r, m, dir);
  const dsl::ir::Function* k = Kernel(m, r.candidate.kernel);
  if (!k)
    return absl::InvalidArgumentError(absl::StrCat("no kernel named '", r.candidate.kernel, "'"));
  codegen::DslCompileOptions o;
  o.target = r.target;
  o.kernel = k->name;
  o.consts = r.candidate.constants;
  o.dims = r.candidate.dims;
  ASSIGN_OR_RETURN(codegen::DslArtifacts a,
                   codegen::CompileDslSource("candidate.py", r.candidate.source, o));
  RETURN_IF_ERROR(codegen::WriteArtifacts(a, dir));
  ASSIGN_OR_RETURN(std::vector<runner::TensorSpec> ts,
                   Tensors(*k, r.candidate, r.check.value("c", "")));
  AdaptInputs(r.check, &ts);
  json spec = SpecJson(r, ts, FreshSeed(r.seed));
  spec["args"] = KernelArgs(r.candidate, *k, a.metadata);
  spec["kernel"] = LaunchKernelJson(a.metadata, "");
  std::ofstream(fs::path(dir) / "spec.json") << spec.dump(2);
  return spec;
}

json RunCandidate(const CandidateRequest& r, const CandidateOptions& o) {
  // Target interp runs on the interpreter whatever the worker's default.
  std::string backend =
      r.target == "interp" ? "interp" : (r.backend.empty() ? o.default_backend : r.backend);
  uint64_t seed = FreshSeed(r.seed);
  json res = VerificationRefusal(r, o);
  if (res.is_null()) {
    if (backend == "interp")
      res = RunInterp(r, o, seed);
    else if (backend == "gpu")
      res = RunGpu(r, o, seed);
    else
      res = Outcome("unsupported", absl::StrCat("unknown backend '", backend, "' (interp or gpu)"));
  }
  res["backend"] = backend;
  res["target"] = r.target;
  res["kernel"] = r.candidate.kernel;
  res["seed"] = seed;
  return res;
}

absl::StatusOr<std::string> HandleCandidate(const std::string& payload, const CandidateOptions& o) {
  ASSIGN_OR_RETURN(CandidateRequest r, ParseCandidate(payload));
  json res = RunCandidate(r, o);
  if (res.value("outcome", "") == "verifier_unavailable")
    return absl::UnavailableError(res.value("message", "the verifier is unavailable"));
  return res.dump();
}

}  // namespace argus::worker
