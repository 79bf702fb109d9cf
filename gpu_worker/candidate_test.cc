// The candidate path: interpreter backend checked against the C++ references,
// GPU backend through argus-runner children (a real one on this GPU-less
// machine, and stand-ins that hang, segfault or exit without a result): each
// ends as an outcome and the next candidate still runs.
#include "gpu_worker/candidate.h"

#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#include "gpu_worker/runner/runner_core.h"

namespace argus::worker {
namespace {

using nlohmann::json;

std::string Read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string Src(const std::string& name) {
  return Read(std::string(ARGUS_SOURCE_DIR) + "/examples/" + name);
}

json Payload(const std::string& file, const std::string& kernel, json dims, json check) {
  return {{"source", Src(file)}, {"kernel", kernel}, {"target", "sm_90a"},
          {"dims", dims},        {"check", check},   {"timeout_s", 2}};
}

json Gemm() { return {{"op", "gemm"}, {"a", "A"}, {"b", "B"}, {"c", "C"}, {"b_layout", "kn"}}; }

json Run(const json& payload, const CandidateOptions& o) {
  auto r = HandleCandidate(payload.dump(), o);
  REQUIRE(r.ok());
  return json::parse(*r);
}

std::string Script(const std::string& name, const std::string& body) {
  std::string path = std::string(ARGUS_BINARY_DIR) + "/" + name;
  std::ofstream(path) << "#!/bin/sh\n" << body << "\n";
  chmod(path.c_str(), 0755);
  return path;
}

TEST_CASE("Interpreter backend: correct kernels pass, a wrong one does not", "[candidate]") {
  CandidateOptions o;
  json r = Run(Payload("../kb/templates/gemm_mma.py", "gemm_mma",
                       {{"M", 128}, {"N", 128}, {"K", 64}}, Gemm()),
               o);
  CHECK(r["outcome"] == "ok");
  CHECK(r["check"]["mode"] == "full");
  CHECK(r["backend"] == "interp");
  r = Run(Payload("softmax.py", "softmax", {{"R", 3}, {"N", 200}},
                  {{"op", "softmax"}, {"a", "X"}, {"c", "Y"}}),
          o);
  CHECK(r["outcome"] == "ok");
  r = Run(Payload("flash_attention.py", "flash_attention", {{"BH", 1}, {"S", 64}},
                  {{"op", "attention"}, {"a", "Q"}, {"b", "K"}, {"d", "V"}, {"c", "O"}}),
          o);
  CHECK(r["outcome"] == "ok");
  r = Run(Payload("rmsnorm.py", "rmsnorm", {{"R", 4}, {"N", 64}},
                  {{"op", "rmsnorm"}, {"a", "X"}, {"b", "W"}, {"c", "Y"}}),
          o);
  CHECK(r["outcome"] == "ok");
  // A GEMM that skips the last K tile is wrong against the reference.
  json bad = Payload("gemm_smem.py", "gemm_smem", {{"M", 32}, {"N", 32}, {"K", 64}}, Gemm());
  std::string src = bad["source"];
  src.replace(src.find("range(K // BK)"), 14, "range(K // BK - 1)");
  bad["source"] = src;
  r = Run(bad, o);
  CHECK(r["outcome"] == "wrong");
  CHECK(r["check"]["mismatches"].get<int>() > 0);
  // A rmsnorm checked as softmax fails too: the reference is not the kernel.
  r = Run(Payload("rmsnorm.py", "rmsnorm", {{"R", 4}, {"N", 64}},
                  {{"op", "softmax"}, {"a", "X"}, {"c", "Y"}}),
          o);
  CHECK(r["outcome"] == "wrong");
}

TEST_CASE("Interpreter backend: faults and compile errors are outcomes", "[candidate]") {
  CandidateOptions o;
  json p = {{"source", Read(std::string(ARGUS_SOURCE_DIR) + "/bench/bad_kernels.py")},
            {"kernel", "oob_store"},
            {"dims", {{"N", 64}}},
            {"check", {{"op", "none"}, {"c", "Z"}}}};
  json r = Run(p, o);
  CHECK(r["outcome"] == "fault");
  CHECK(r["message"].get<std::string>().find("out-of-bounds") != std::string::npos);
  p["source"] = "def broken(:\n";
  r = Run(p, o);
  CHECK(r["outcome"] == "unsupported");
  CHECK(r["message"].get<std::string>().find("candidate.py:1:") != std::string::npos);
  CHECK_FALSE(HandleCandidate("{not json", o).ok());
}

TEST_CASE("GPU backend: hang, segfault and missing result become outcomes", "[candidate]") {
  json p = Payload("vector_add.py", "vector_add", {{"N", 1000}},
                   {{"op", "add"}, {"a", "X"}, {"b", "Y"}, {"c", "Z"}});
  p["backend"] = "gpu";
  CandidateOptions o;
  o.watchdog_grace_s = 1;  // timeout_s 2 + 1
  o.runner_path = Script("fake-runner-hang.sh", "exec sleep 60");
  json r = Run(p, o);
  CHECK(r["outcome"] == "timeout");
  CHECK(r["message"].get<std::string>().find("watchdog") != std::string::npos);
  o.runner_path = Script("fake-runner-segv.sh", "kill -SEGV $$");
  r = Run(p, o);
  CHECK(r["outcome"] == "crash");
  CHECK(r["message"].get<std::string>().find("signal 11") != std::string::npos);
  o.runner_path = Script("fake-runner-silent.sh", "echo oops >&2; exit 3");
  r = Run(p, o);
  CHECK(r["outcome"] == "crash");
  CHECK(r["message"].get<std::string>().find("oops") != std::string::npos);
  // The real runner on this machine (no GPU): a clear `unsupported`, with the
  // compiled kernel's metadata.
  o.runner_path = std::string(ARGUS_BINARY_DIR) + "/bin/argus-runner";
  r = Run(p, o);
  CHECK((r["outcome"] == "unsupported" || r["outcome"] == "ok"));
  CHECK(r["metadata"]["symbol"] == "vector_add");
  CHECK(r["metadata"]["grid"][0] == 4);
  // The same options still run the next candidate.
  p["backend"] = "interp";
  CHECK(Run(p, o)["outcome"] == "ok");
}

TEST_CASE("PrepareGpuRun writes the artifact and a spec the runner parses", "[candidate]") {
  auto req = ParseCandidate(Payload("../kb/templates/gemm_mma.py", "gemm_mma",
                                    {{"M", 256}, {"N", 128}, {"K", 64}}, Gemm())
                                .dump());
  REQUIRE(req.ok());
  std::string dir = std::string(ARGUS_BINARY_DIR) + "/candidate-test-prepare";
  auto spec = PrepareGpuRun(*req, dir);
  REQUIRE(spec.ok());
  CHECK((*spec)["kernel"]["grid"] == json({2, 1, 1}));
  CHECK((*spec)["check"]["k"] == 64);
  CHECK((*spec)["tensors"][2]["init"] == "poison");
  CHECK((*spec)["args"].size() == 6);
  CHECK(!Read(dir + "/gemm_mma.ptx").empty());
  // A TMA kernel: one tensor-map argument per (tensor, box) after tensors and dims; the runner
  // parses them.
  auto wq = ParseCandidate(
      Payload("gemm_wgmma.py", "gemm_wgmma", {{"M", 256}, {"N", 512}, {"K", 128}}, Gemm()).dump());
  REQUIRE(wq.ok());
  auto ws = PrepareGpuRun(*wq, dir + "-wgmma");
  REQUIRE(ws.ok());
  const json& args = (*ws)["args"];
  REQUIRE(args.size() == 8);
  CHECK(args[6]["tensormap"]["tensor"] == "A");
  CHECK(args[6]["tensormap"]["box"] == json({128, 64}));
  CHECK(args[7]["tensormap"]["tensor"] == "B");
  CHECK(args[7]["tensormap"]["swizzle"] == "128B");
  runner::RunSpec rs;
  std::string err;
  CHECK(runner::ParseRunSpec(*ws, &rs, &err));
  CHECK(rs.launches[0].args[7].kind == runner::ArgSpec::Kind::kTensorMap);
  CHECK((*ws)["kernel"]["block"] == json({384, 1, 1}));
}

// The MoE of kb/templates/moe_wgmma.py as the planner sends it: a pipeline of six kernels over
// one set of tensors, the weights reshaped for the kernels' TMA tiles.
json MoePipeline(const std::string& source) {
  const int64_t T = 64, D = 256, F = 128, E = 8, K = 2, MT = 1 + E;
  return {{"source", source},
          {"kernel", "moe_reduce"},
          {"pipeline",
           {"moe_count", "moe_place", "moe_gather", "moe_gateup", "moe_down", "moe_reduce"}},
          {"shapes", {{"Wg", {E, D, F}}, {"Wu", {E, D, F}}, {"Wd", {E, F, D}}}},
          {"target", "sm_90a"},
          {"constants", {{"GW", 256}}},
          {"dims",
           {{"T", T},
            {"D", D},
            {"F", F},
            {"E", E},
            {"TOPK", K},
            {"MT", MT},
            {"R", MT * 128},
            {"ED", E * D},
            {"EF", E * F}}},
          {"check", json::parse(R"({"op": "moe", "a": "X", "b": "Wg", "u": "Wu", "d": "Wd",
                                    "c": "Y", "ids": "Ids", "weights": "Wt"})")},
          {"seed", 5},
          {"timeout_s", 30}};
}

std::string MoeSource() {
  std::string s = Read(std::string(ARGUS_SOURCE_DIR) + "/kb/templates/moe_wgmma.py");
  for (size_t p; (p = s.find("${dtype}")) != std::string::npos;) s.replace(p, 8, "bf16");
  return s;
}

TEST_CASE("A pipeline payload: one multi-launch spec on the GPU, a chain on the interpreter",
          "[candidate]") {
  auto req = ParseCandidate(MoePipeline(MoeSource()).dump());
  REQUIRE(req.ok());
  std::string dir = std::string(ARGUS_BINARY_DIR) + "/candidate-test-pipeline";
  auto spec = PrepareGpuRun(*req, dir);
  INFO(spec.status().ToString());
  REQUIRE(spec.ok());
  REQUIRE((*spec)["launches"].size() == 6);
  CHECK(!spec->contains("kernel"));
  CHECK((*spec)["launches"][3]["kernel"]["symbol"] == "moe_gateup");
  CHECK((*spec)["launches"][3]["kernel"]["artifact"].get<std::string>().rfind("k3/", 0) == 0);
  CHECK(!Read(dir + "/k3/moe_gateup.ptx").empty());
  for (const json& t : (*spec)["tensors"]) {
    if (t["name"] == "Wg") CHECK(t["shape"] == json({8, 256, 128}));
    if (t["name"] == "Ids") CHECK(t["init"] == "topk");
    if (t["name"] == "H") CHECK(t["scratch"] == true);
    if (t["name"] == "Y") CHECK((t["init"] == "poison" && !t.contains("scratch")));
  }
  runner::RunSpec rs;
  std::string err;
  CHECK(runner::ParseRunSpec(*spec, &rs, &err));
  CHECK(rs.launches.size() == 6);
  // The interpreter runs the chain on the runner's seeded inputs; the runner's moe reference
  // passes it, and a reduce that weights every expert by the first weight fails.
  json ok = Run(MoePipeline(MoeSource()), CandidateOptions{});
  INFO(ok.dump());
  CHECK(ok["outcome"] == "ok");
  CHECK(ok["check"]["mode"] == "full");
  std::string bad = MoeSource();
  bad.replace(bad.find("a += Wt[t, k] *"), 15, "a += Wt[t, 0] *");
  json wrong = Run(MoePipeline(bad), CandidateOptions{});
  CHECK(wrong["outcome"] == "wrong");
  CHECK(wrong["counterexample"]["tensor"] == "Y");
  json missing = MoePipeline(MoeSource());
  missing["pipeline"][1] = "moe_nope";
  CHECK(Run(missing, CandidateOptions{})["outcome"] == "unsupported");
}

}  // namespace
}  // namespace argus::worker

namespace argus::worker {
namespace {

json InterpGemm() {
  json p = Payload("gemm_smem.py", "gemm_smem", {{"M", 32}, {"N", 32}, {"K", 64}}, Gemm());
  p["target"] = "interp";
  p["constants"] = {{"BM", 32}, {"BN", 32}, {"BK", 32}};
  return p;
}

TEST_CASE("Candidate schema: a baseline kernel gives time, baseline_time and speedup",
          "[candidate]") {
  json p = InterpGemm();
  json naive = Payload("gemm_naive.py", "gemm_naive", p["dims"], Gemm());
  p["baseline"] = {{"name", "kernel"},
                   {"source", naive["source"]},
                   {"kernel", "gemm_naive"},
                   {"dims", p["dims"]}};
  json r = Run(p, CandidateOptions{});
  INFO(r.dump());
  REQUIRE(r["outcome"] == "ok");
  CHECK(r["unit"] == "interp_instructions");
  CHECK(r["baseline_name"] == "interp:gemm_naive");
  double t = r["time"], b = r["baseline_time"];
  CHECK(t > 0);
  CHECK(b > 0);
  CHECK(r["speedup"].get<double>() == Approx(b / t));  // > 1: faster than the baseline
  CHECK(CandidateSpeedup(r) == Approx(b / t));
  // Target interp runs on the interpreter even on a worker whose default is gpu.
  CandidateOptions gpu_default;
  gpu_default.default_backend = "gpu";
  CHECK(Run(p, gpu_default)["backend"] == "interp");
  // A baseline that does not run is a baseline_error, not a pass.
  p["baseline"]["source"] = "def broken(:\n";
  CHECK(Run(p, CandidateOptions{})["outcome"] == "baseline_error");
}

TEST_CASE("Candidate schema: bad payloads are refused with the key", "[candidate]") {
  json p = InterpGemm();
  p["consts"] = {{"BM", 32}};
  auto r = HandleCandidate(p.dump(), CandidateOptions{});
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().message().find("consts") != std::string::npos);
  p = InterpGemm();
  p["target"] = "sm_80";
  CHECK(HandleCandidate(p.dump(), CandidateOptions{}).status().message().find("sm_80") !=
        std::string::npos);
  p = InterpGemm();
  p["check"] = {{"op", "conv"}};
  CHECK_FALSE(HandleCandidate(p.dump(), CandidateOptions{}).ok());
  // The round trip keeps every field.
  auto parsed = ParseCandidatePayload(InterpGemm().dump());
  REQUIRE(parsed.ok());
  auto again = ParseCandidatePayload(parsed->ToJson().dump());
  REQUIRE(again.ok());
  CHECK(again->ToJson() == parsed->ToJson());
  CHECK(again->candidate.constants.at("BM") == "32");
}

TEST_CASE("Check op 'problem' needs a worker that has the problem's reference", "[candidate]") {
  json p = InterpGemm();
  p["check"] = {{"op", "problem"}, {"c", "C"}};
  p["problem"] = {{"family", "gemm"}};
  json r = Run(p, CandidateOptions{});
  CHECK(r["outcome"] == "unsupported");
  CHECK(r["message"].get<std::string>().find("no reference") != std::string::npos);
  // Given one, the worker prepares inputs and checks through it.
  CandidateOptions o;
  int prepared = 0;
  o.reference.prepare = [&](const json&, std::vector<dsl::HostTensor>*, uint64_t) {
    ++prepared;
    return absl::OkStatus();
  };
  o.reference.check = [](const json&, const std::vector<dsl::HostTensor>&,
                         const std::vector<dsl::HostTensor>&) -> absl::StatusOr<json> {
    return json{{"passed", false}, {"message", "C mismatch"}, {"counterexample", {{"index", 3}}}};
  };
  r = Run(p, o);
  CHECK(prepared == 1);
  CHECK(r["outcome"] == "wrong");
  CHECK(r["counterexample"]["index"] == 3);
}

TEST_CASE("A worker that requires verification refuses unverified candidates", "[candidate]") {
  CandidateOptions o;
  o.require_verification = true;
  json p = InterpGemm();
  json r = Run(p, o);
  CHECK(r["outcome"] == "rejected");
  CHECK(r["message"].get<std::string>().find("not verified") != std::string::npos);
  p["verification"] = {{"passed", false}, {"gate", "verifier"}};
  r = Run(p, o);
  CHECK(r["outcome"] == "rejected");
  CHECK(r["verifier"]["gate"] == "verifier");
  p["verification"] = {{"passed", true}, {"gate", "verifier"}};
  CHECK(Run(p, o)["outcome"] == "ok");
  // Its own verifier has the last word.
  int asked = 0;
  o.verify = [&](const KernelSpec& k, const std::string&) -> absl::StatusOr<json> {
    ++asked;
    CHECK(k.kernel == "gemm_smem");
    CHECK(k.dims.at("K") == 64);
    return json{{"verified", false}, {"findings", json::array({{{"check", "oob"}}})}};
  };
  r = Run(p, o);
  CHECK(asked == 1);
  CHECK(r["outcome"] == "rejected");
  CHECK(r["verifier"]["findings"][0]["check"] == "oob");
  // A verifier that cannot answer fails the task (it is handed out again),
  // never records a result.
  o.verify = [](const KernelSpec&, const std::string&) -> absl::StatusOr<json> {
    return absl::UnavailableError("verifier down");
  };
  auto h = HandleCandidate(p.dump(), o);
  REQUIRE_FALSE(h.ok());
  CHECK(h.status().code() == absl::StatusCode::kUnavailable);
}

}  // namespace
}  // namespace argus::worker

namespace argus::worker {
namespace {

// The GPU path's result in the one schema, from stand-in runners that time
// the candidate at 1 ms, a baseline kernel at 4 ms and cuBLAS at 0.5 ms.
TEST_CASE("GPU backend: runner times become time, baseline_time and speedup", "[candidate]") {
  std::string runner = Script("fake-runner-timed.sh", R"(spec=$2; out=$4
if grep -q '"symbol": "gemm_naive"' "$spec"; then t=4.0; else t=1.0; fi
echo "{\"outcome\":\"ok\",\"message\":\"\",\"timing\":{\"median_ms\":$t},\"ratio\":2.0,\
\"baseline\":{\"name\":\"cublasGemmEx\",\"outcome\":\"ok\",\"timing\":{\"median_ms\":0.5}}}" > "$out")");
  json p = Payload("gemm_smem.py", "gemm_smem", {{"M", 64}, {"N", 64}, {"K", 64}}, Gemm());
  p["backend"] = "gpu";
  json naive = Payload("gemm_naive.py", "gemm_naive", p["dims"], Gemm());
  p["baseline"] = {{"name", "kernel"},
                   {"source", naive["source"]},
                   {"kernel", "gemm_naive"},
                   {"dims", p["dims"]}};
  CandidateOptions o;
  o.runner_path = runner;
  json r = Run(p, o);
  INFO(r.dump());
  REQUIRE(r["outcome"] == "ok");
  CHECK(r["unit"] == "ms");
  CHECK(r["time"] == 1.0);
  CHECK(r["baseline_time"] == 4.0);
  CHECK(r["speedup"] == 4.0);  // baseline / ours, never the runner's ours / baseline
  CHECK(r["baseline_name"] == "kernel:gemm_naive");
  CHECK(r["runner"]["ratio"] == 2.0);  // the runner's own JSON is kept as it was
  p["baseline"] = "cublas";
  r = Run(p, o);
  REQUIRE(r["outcome"] == "ok");
  CHECK(r["baseline_name"] == "cublasGemmEx");
  CHECK(r["baseline_time"] == 0.5);
  CHECK(r["speedup"] == 0.5);
}

// Two workers sharing one GPU (argus-worker --share_device) take turns: with
// the same gpu_run_lock, no runner starts before the other has ended.
TEST_CASE("GPU backend: workers sharing a GPU run one runner at a time", "[candidate]") {
  const std::string log = std::string(ARGUS_BINARY_DIR) + "/fake-runner-turns.log";
  std::remove(log.c_str());
  std::string runner = Script("fake-runner-turns.sh", "out=$4; echo start >> " + log +
                                                          "; sleep 0.2; echo end >> " + log +
                                                          R"(
echo '{"outcome":"ok","message":"","timing":{"median_ms":1.0}}' > "$out")");
  json p = Payload("vector_add.py", "vector_add", {{"N", 1000}},
                   {{"op", "add"}, {"a", "X"}, {"b", "Y"}, {"c", "Z"}});
  p["backend"] = "gpu";
  CandidateOptions o;
  o.runner_path = runner;
  o.gpu_run_lock = std::string(ARGUS_BINARY_DIR) + "/fake-gpu.run.lock";
  std::vector<std::string> outcomes(4);
  std::vector<std::thread> workers;
  for (int w = 0; w < 2; ++w) {
    workers.emplace_back([&, w] {
      for (int i = 0; i < 2; ++i) {
        auto r = HandleCandidate(p.dump(), o);
        outcomes[2 * w + i] = r.ok() ? json::parse(*r).value("outcome", "") : "error";
      }
    });
  }
  for (auto& t : workers) t.join();
  for (const auto& out : outcomes) CHECK(out == "ok");
  std::istringstream lines(Read(log));
  std::vector<std::string> seen;
  for (std::string l; std::getline(lines, l);) seen.push_back(l);
  REQUIRE(seen.size() == 8);
  for (size_t i = 0; i < seen.size(); ++i) {
    INFO(Read(log));
    CHECK(seen[i] == (i % 2 == 0 ? "start" : "end"));
  }
}

}  // namespace
}  // namespace argus::worker
