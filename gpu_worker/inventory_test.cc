#include "gpu_worker/inventory.h"

#include <catch2/catch.hpp>

namespace argus::gpu_worker {
namespace {

TEST_CASE("Runner inventory JSON is parsed", "[gpu_worker]") {
  const char* text = R"({
    "runtimes": [
      {"name": "cuda", "available": true, "library": "/usr/lib/libcuda.so.1",
       "driver_version": "13.0",
       "devices": [{"index": 0, "name": "NVIDIA H200", "arch": "sm_90a",
                    "compute_capability": "9.0", "total_memory_bytes": 150754820096,
                    "multiprocessors": 132, "l2_bytes": 62914560,
                    "max_shared_per_block_optin": 232448}]},
      {"name": "hip", "available": false, "error": "libamdhip64.so: not found"}],
    "baselines": {"cublas": {"available": true, "library": "/x/libcublas.so.13"}}})";
  auto inv = ParseInventoryJson(text);
  REQUIRE(inv.ok());
  REQUIRE(inv->devices.size() == 1);
  CHECK(inv->devices[0].arch == "sm_90a");
  CHECK(inv->devices[0].multiprocessors == 132);
  CHECK(inv->runtime_library.at("cuda") == "/usr/lib/libcuda.so.1");
  CHECK(inv->runtime_error.count("hip") == 1);
  CHECK(inv->cublas_available);
  CHECK_FALSE(ParseInventoryJson("[]").ok());
}

TEST_CASE("The real runner's inventory parses on this machine", "[gpu_worker]") {
  auto inv = ProbeInventory(std::string(ARGUS_BINARY_DIR) + "/bin/argus-runner");
  REQUIRE(inv.ok());
  // CI machines have no GPU: both runtimes may be missing, but each is listed.
  CHECK(inv->runtime_library.size() + inv->runtime_error.size() == 2);
}

}  // namespace
}  // namespace argus::gpu_worker
