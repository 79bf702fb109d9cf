// The candidate path: interpreter backend checked against the C++ references,
// GPU backend through argus-runner children (a real one on this GPU-less
// machine, and stand-ins that hang, segfault or exit without a result): each
// ends as an outcome and the next candidate still runs.
#include "gpu_worker/candidate.h"

#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <fstream>
#include <sstream>

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
  json r = Run(Payload("gemm_mma.py", "gemm_mma", {{"M", 128}, {"N", 128}, {"K", 64}}, Gemm()), o);
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
  auto req = ParseCandidate(
      Payload("gemm_mma.py", "gemm_mma", {{"M", 256}, {"N", 128}, {"K", 64}}, Gemm()).dump());
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
  CHECK(rs.args[7].kind == runner::ArgSpec::Kind::kTensorMap);
  CHECK((*ws)["kernel"]["block"] == json({384, 1, 1}));
}

}  // namespace
}  // namespace argus::worker
