// export_text: the launchers are written from the runner spec — tensor maps
// with the runner's own geometry (runner_core.h TensorMapOf), shared memory
// allowed, grid and block of the launch — and what they cannot express is an
// error naming the launch.
#include "clients/cli/export_text.h"

#include <catch2/catch.hpp>
#include <string>

namespace argus::cli {
namespace {

using nlohmann::json;

// One TMA kernel over a rank-3 tensor W [E, K, N] (mapped as [E*K, N] rows,
// as the runner maps it) and an output Y, with 200 KiB of shared memory.
json TmaSpec() {
  return json::parse(R"({
    "tensors": [{"name": "W", "dtype": "bf16", "shape": [4, 64, 32]},
                {"name": "Y", "dtype": "f32", "shape": [256, 32], "init": "poison"}],
    "kernel": {"artifact": "k.cubin", "symbol": "k", "grid": [2, 3, 1], "block": [384, 1, 1],
               "shared_bytes": 204800},
    "args": [{"tensor": "W"}, {"tensor": "Y"}, {"i32": 256}, {"f32": 0.5},
             {"tensormap": {"tensor": "W", "box": [64, 32], "swizzle": "128B"}},
             {"tensormap": {"tensor": "Y", "box": [32, 16], "swizzle": "none"}}]
  })");
}

TEST_CASE("export: one TMA kernel is a pipeline of one launch with its tensor maps", "[export]") {
  auto plan = MakeLaunchPlan(TmaSpec(), {"kernel.ptx"}, {6});
  REQUIRE(plan.ok());
  const std::string h = LauncherHeader(*plan);
  CHECK(h.find("kSharedBytes = 204800;") != std::string::npos);
  CHECK(h.find("ArgusAllowSharedBytes(fn, kSharedBytes);") != std::string::npos);
  CHECK(h.find("ArgusTensorMap(t.W, 256ULL, 32ULL, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, 64, 32, "
               "1, &t.tmap0_4);") != std::string::npos);
  CHECK(h.find("ArgusTensorMap(t.Y, 256ULL, 32ULL, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 4, 32, 16, "
               "0, &t.tmap0_5);") != std::string::npos);
  CHECK(h.find("k0.Launch(2, 3, 1, 384, 1, 1, stream, t.W, t.Y, "
               "reinterpret_cast<void*>(static_cast<long long>(256)), ArgusF32(0.5), t.tmap0_4, "
               "t.tmap0_5);") != std::string::npos);
  const std::string py = TorchSnippet(*plan);
  CHECK(py.find("SHARED_BYTES = 204800") != std::string::npos);
  CHECK(py.find("(Kernel0, [2,3,1], [384,1,1], [(\"tensor\", \"W\"), (\"tensor\", \"Y\"), "
                "(\"i32\", 256), (\"f32\", 0.5), (\"tensormap\", {\"box\":[64,32],\"cols\":32,"
                "\"data_type\":9,\"row_bytes\":64,\"rows\":256,\"swizzle\":\"128B\","
                "\"tensor\":\"W\"})") != std::string::npos);
  CHECK(py.find("(\"W\", \"bf16\", [4,64,32]),") != std::string::npos);  // TENSORS
}

TEST_CASE("export: a launch the launchers cannot express is an error naming it", "[export]") {
  json spec = TmaSpec();
  auto wrong_params = MakeLaunchPlan(spec, {"kernel.ptx"}, {5});
  REQUIRE(!wrong_params.ok());
  CHECK(std::string(wrong_params.status().message()) ==
        "launch 0 (k): the kernel declares 5 parameters but its launch passes 6 arguments");

  json big = spec;
  big["kernel"]["shared_bytes"] = 240 * 1024;
  auto too_big = MakeLaunchPlan(big, {"kernel.ptx"}, {6});
  REQUIRE(!too_big.ok());
  CHECK(std::string(too_big.status().message()).find("launch 0 (k): it needs 245760 bytes") == 0);

  json hip = spec;
  hip["kernel"]["artifact"] = "k.hsaco";
  auto amd = MakeLaunchPlan(hip, {"kernel.hsaco"}, {6});
  REQUIRE(!amd.ok());
  CHECK(std::string(amd.status().message()).find("launch 0 (k): it takes a TMA tensor map of W") ==
        0);

  json rank1 = spec;
  rank1["tensors"][1]["shape"] = {8192};
  auto flat = MakeLaunchPlan(rank1, {"kernel.ptx"}, {6});
  REQUIRE(!flat.ok());
  CHECK(std::string(flat.status().message()) ==
        "launch 0 (k): tensormap names no tensor of rank 2 or more: Y");

  // A pipeline: the second launch is the one named.
  json two = {
      {"tensors", spec["tensors"]},
      {"launches",
       {{{"kernel", spec["kernel"]}, {"args", spec["args"]}},
        {{"kernel", {{"artifact", "r.cubin"}, {"symbol", "r"}}}, {"args", {{{"tensor", "Y"}}}}}}}};
  auto second = MakeLaunchPlan(two, {"k0_k.ptx", "k1_r.ptx"}, {6, 2});
  REQUIRE(!second.ok());
  CHECK(std::string(second.status().message()).find("launch 1 (r): the kernel declares 2") == 0);
  auto ok = MakeLaunchPlan(two, {"k0_k.ptx", "k1_r.ptx"}, {6, 1});
  REQUIRE(ok.ok());
  CHECK(LauncherHeader(*ok).find("k1.Load(images[1]);  // k1_r.ptx") != std::string::npos);
}

}  // namespace
}  // namespace argus::cli
