// Tests of the argus-runner binary itself: its dependencies and its
// behaviour on a machine without a GPU (CI).
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "base/subprocess.h"

namespace argus::runner {
namespace {

const std::string kRunner = std::string(ARGUS_BINARY_DIR) + "/bin/argus-runner";

ProcessResult Run(std::vector<std::string> argv) {
  ProcessOptions opt;
  opt.argv = std::move(argv);
  opt.timeout = std::chrono::milliseconds(60'000);
  auto r = RunWithTimeout(opt);
  REQUIRE(r.ok());
  return *r;
}

TEST_CASE("argus-runner needs only glibc", "[runner]") {
  ProcessResult r = Run({"/usr/bin/ldd", kRunner});
  REQUIRE(r.exit_code == 0);
  INFO(r.stdout_text);
  CHECK(r.stdout_text.find("libstdc++") == std::string::npos);
  CHECK(r.stdout_text.find("libgcc_s") == std::string::npos);
  CHECK(r.stdout_text.find("absl") == std::string::npos);
  CHECK(r.stdout_text.find("libLLVM") == std::string::npos);
  CHECK(r.stdout_text.find("libc.so.6") != std::string::npos);
}

TEST_CASE("argus-runner --inventory prints JSON listing both runtimes", "[runner]") {
  ProcessResult r = Run({kRunner, "--inventory"});
  REQUIRE(r.exit_code == 0);
  auto j = nlohmann::json::parse(r.stdout_text);
  REQUIRE(j["runtimes"].size() == 2);
  CHECK(j["runtimes"][0]["name"] == "cuda");
  CHECK(j["runtimes"][1]["name"] == "hip");
  CHECK(j.contains("baselines"));
}

TEST_CASE("argus-runner reports a bad spec or a missing GPU as an outcome", "[runner]") {
  const std::string spec = std::string(ARGUS_BINARY_DIR) + "/runner_test_spec.json";
  {
    std::ofstream(spec) << R"({"kernel": {"artifact": "none.ptx", "symbol": "k"},
      "tensors": [{"name": "c", "dtype": "f32", "shape": [4], "init": "poison"}],
      "args": [{"tensor": "c"}]})";
  }
  ProcessResult r = Run({kRunner, "--spec", spec});
  REQUIRE(r.exit_code == 0);
  auto j = nlohmann::json::parse(r.stdout_text);
  // Without a GPU: no runtime; with one: the artifact is missing.
  CHECK(j["outcome"] == "unsupported");
  CHECK(!j["message"].get<std::string>().empty());
  { std::ofstream(spec) << "{\"kernel\": 3}"; }
  ProcessResult bad = Run({kRunner, "--spec", spec});
  auto jb = nlohmann::json::parse(bad.stdout_text);
  CHECK(jb["outcome"] == "unsupported");
  CHECK(jb["message"].get<std::string>().find("invalid spec") != std::string::npos);
  CHECK(Run({kRunner, "--bogus"}).exit_code == 2);
}

// The runner's launch sequence under CUDA's stream rules (fake_cuda.cc: every
// memset, copy and launch lands at the latest moment those rules allow). On
// the H200 the NaN poison of an output, queued on the legacy stream, landed
// after a kernel launched on a non-blocking stream: MoE, which zeroes Y at its
// start, came back with 4800 NaN outputs. The same order fails here.
TEST_CASE("argus-runner orders inputs and poison before the kernel (stream rules)", "[runner]") {
  const std::string dir = std::string(ARGUS_BINARY_DIR) + "/runner_fake_cuda";
  std::filesystem::create_directories(dir);
  { std::ofstream(dir + "/k.ptx") << "// the fake driver ignores the image\n"; }
  const std::string spec = dir + "/spec.json";
  {
    std::ofstream(spec) << R"({"kernel": {"artifact": "k.ptx", "symbol": "add"},
      "tensors": [{"name": "a", "dtype": "f32", "shape": [1000]},
                  {"name": "b", "dtype": "f32", "shape": [1000]},
                  {"name": "c", "dtype": "f32", "shape": [1000], "init": "poison"}],
      "args": [{"tensor": "a"}, {"tensor": "b"}, {"tensor": "c"}, {"i32": 1000}],
      "check": {"op": "add", "a": "a", "b": "b", "c": "c"},
      "timing": {"warmup": 1, "reps": 3, "flush_l2": false}})";
  }
  ProcessOptions opt;
  opt.argv = {kRunner, "--spec", spec, "--no-baseline"};
  opt.extra_env = {std::string("ARGUS_LIBCUDA=") + ARGUS_FAKE_CUDA};
  auto r = RunWithTimeout(opt);
  REQUIRE(r.ok());
  INFO(r->stdout_text << r->stderr_text);
  REQUIRE(r->exit_code == 0);
  auto j = nlohmann::json::parse(r->stdout_text);
  CHECK(j["runtime"]["library"].get<std::string>().find("fake_cuda") != std::string::npos);
  CHECK(j["outcome"] == "ok");
  CHECK(j["check"]["passed"] == true);
  CHECK(j["check"]["nan_count"] == 0);
  CHECK(j["check_after_timing"]["passed"] == true);
}

// A pipeline of launches: s = a + b into a scratch buffer, then c = s (the
// fake's "copy"). Every launch runs, in order, on the one stream: the check
// of c = a + b passes only then (c copied from the still-poisoned s is NaN,
// as the swapped order shows), and the NaN of the scratch buffer's
// re-poisoning is not mistaken for a wrong output.
TEST_CASE("argus-runner runs a spec's launches in order (stream rules)", "[runner]") {
  const std::string dir = std::string(ARGUS_BINARY_DIR) + "/runner_fake_cuda_launches";
  std::filesystem::create_directories(dir);
  { std::ofstream(dir + "/k.ptx") << "// the fake driver ignores the image\n"; }
  auto run = [&](bool swapped) {
    nlohmann::json add = {
        {"kernel", {{"artifact", "k.ptx"}, {"symbol", "add"}}},
        {"args", {{{"tensor", "a"}}, {{"tensor", "b"}}, {{"tensor", "s"}}, {{"i32", 1000}}}}};
    nlohmann::json copy = {{"kernel", {{"artifact", "k.ptx"}, {"symbol", "copy"}}},
                           {"args", {{{"tensor", "s"}}, {{"tensor", "c"}}, {{"i32", 1000}}}}};
    nlohmann::json spec = {
        {"tensors",
         {{{"name", "a"}, {"dtype", "f32"}, {"shape", {1000}}},
          {{"name", "b"}, {"dtype", "f32"}, {"shape", {1000}}},
          {{"name", "s"},
           {"dtype", "f32"},
           {"shape", {1000}},
           {"init", "poison"},
           {"scratch", true}},
          {{"name", "c"}, {"dtype", "f32"}, {"shape", {1000}}, {"init", "poison"}}}},
        {"launches", swapped ? nlohmann::json{copy, add} : nlohmann::json{add, copy}},
        {"check", {{"op", "add"}, {"a", "a"}, {"b", "b"}, {"c", "c"}}},
        {"timing", {{"warmup", 1}, {"reps", 3}, {"flush_l2", false}}}};
    { std::ofstream(dir + "/spec.json") << spec.dump(); }
    ProcessOptions opt;
    opt.argv = {kRunner, "--spec", dir + "/spec.json", "--no-baseline"};
    opt.extra_env = {std::string("ARGUS_LIBCUDA=") + ARGUS_FAKE_CUDA};
    auto r = RunWithTimeout(opt);
    REQUIRE(r.ok());
    INFO(r->stdout_text << r->stderr_text);
    REQUIRE(r->exit_code == 0);
    return nlohmann::json::parse(r->stdout_text);
  };
  nlohmann::json ok = run(false);
  CHECK(ok["outcome"] == "ok");
  CHECK(ok["check"]["passed"] == true);
  CHECK(ok["launches"].size() == 2);
  CHECK(ok["launches"][1]["kernel"] == "copy");
  CHECK(ok["launches"][1]["median_ms"].get<double>() >= 0);
  CHECK(ok["check_after_timing"]["passed"] == true);
  nlohmann::json bad = run(true);
  CHECK(bad["outcome"] == "wrong");
  CHECK(bad["check"]["nan_count"] == 1000);
}

// The MoE baseline helper (torch_moe_loop) beside the runner answers every
// request with one JSON object: a malformed one is an error, and a machine
// without PyTorch or a GPU (CI) gets `unsupported`, never a traceback.
TEST_CASE("argus-moe-baseline answers with one JSON outcome", "[runner]") {
  const std::string helper = std::string(ARGUS_BINARY_DIR) + "/bin/argus-moe-baseline.py";
  ProcessResult bad = Run({"/usr/bin/env", "python3", helper, "{\"tokens\": 4}"});
  REQUIRE(bad.exit_code == 0);
  auto jb = nlohmann::json::parse(bad.stdout_text);
  CHECK(jb["outcome"] == "error");
  CHECK(jb["message"].get<std::string>().find("bad request") != std::string::npos);
  const std::string req = R"({"tokens": 4, "hidden": 8, "ffn": 16, "experts": 2, "topk": 1,
    "x": "/nonexistent/x", "ids": "/nonexistent/i", "weights": "/nonexistent/w",
    "gate": "/nonexistent/g", "up": "/nonexistent/u", "down": "/nonexistent/d",
    "out": "/nonexistent/y"})";
  ProcessResult r = Run({"/usr/bin/env", "python3", helper, req});
  REQUIRE(r.exit_code == 0);
  auto j = nlohmann::json::parse(r.stdout_text);
  // No PyTorch/GPU: unsupported; with them, the missing input files: error.
  CHECK((j["outcome"] == "unsupported" || j["outcome"] == "error"));
  CHECK(!j["message"].get<std::string>().empty());
}

}  // namespace
}  // namespace argus::runner
