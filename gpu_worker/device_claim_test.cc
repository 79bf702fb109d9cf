#include "gpu_worker/device_claim.h"

#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace argus::worker {
namespace {

std::string TempDir() {
  char tmpl[] = "/tmp/argus-claim-XXXXXX";
  REQUIRE(mkdtemp(tmpl) != nullptr);
  return tmpl;
}

TEST_CASE("a GPU claimed exclusively cannot be claimed again", "[worker][device]") {
  const std::string dir = TempDir();
  auto first = ClaimDevice(0, false, dir);
  REQUIRE(first.ok());
  auto second = ClaimDevice(0, false, dir);
  REQUIRE_FALSE(second.ok());
  const std::string msg(second.status().message());
  CHECK(msg.find("GPU 0 is already claimed by another worker (pid " + std::to_string(getpid())) !=
        std::string::npos);
  CHECK(msg.find("--share_device") != std::string::npos);
  CHECK_FALSE(ClaimDevice(0, true, dir).ok());  // nor shared
  CHECK(ClaimDevice(1, false, dir).ok());       // another GPU is free
  { auto gone = std::move(*first); }            // released with its owner
  CHECK(ClaimDevice(0, false, dir).ok());
  std::filesystem::remove_all(dir);
}

TEST_CASE("shared claims coexist and keep exclusive ones out", "[worker][device]") {
  const std::string dir = TempDir();
  auto a = ClaimDevice(0, true, dir);
  auto b = ClaimDevice(0, true, dir);
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  CHECK(a->run_lock_path() == dir + "/argus-gpu-0.run.lock");  // where they take turns
  auto x = ClaimDevice(0, false, dir);
  REQUIRE_FALSE(x.ok());
  CHECK(std::string(x.status().message()).find("already claimed") != std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST_CASE("device 0 of two workers with different visible GPUs are two GPUs", "[worker][device]") {
  const std::string dir = TempDir();
  setenv("CUDA_VISIBLE_DEVICES", "3", 1);
  auto a = ClaimDevice(0, false, dir);
  setenv("CUDA_VISIBLE_DEVICES", "5", 1);
  auto b = ClaimDevice(0, false, dir);
  auto again = ClaimDevice(0, false, dir);
  unsetenv("CUDA_VISIBLE_DEVICES");
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  CHECK(a->path() == dir + "/argus-gpu-3.lock");
  CHECK(b->path() == dir + "/argus-gpu-5.lock");
  CHECK_FALSE(again.ok());
  std::filesystem::remove_all(dir);
}

TEST_CASE("an unusable lock directory is a clear error", "[worker][device]") {
  auto c = ClaimDevice(0, false, "/nonexistent/argus-locks");
  REQUIRE_FALSE(c.ok());
  CHECK(std::string(c.status().message())
            .find("cannot open the lock file /nonexistent/argus-locks/argus-gpu-0.lock") !=
        std::string::npos);
}

// A stand-in for argus-runner --inventory: prints one CUDA H200 while the
// file `gpu` beside it exists, none after ("the GPU fell off the bus").
std::string FakeRunner(const std::string& dir) {
  const std::string path = dir + "/fake-runner";
  std::ofstream f(path);
  f << "#!/bin/sh\n"
    << "if [ -f " << dir << "/gpu ]; then\n"
    << "  echo '{\"runtimes\": [{\"name\": \"cuda\", \"available\": true, \"library\": "
       "\"libcuda.so.1\", \"devices\": [{\"index\": 0, \"name\": \"NVIDIA H200\", \"arch\": "
       "\"sm_90a\", \"total_memory_bytes\": 1}]}]}'\n"
    << "else\n"
    << "  echo '{\"runtimes\": [{\"name\": \"cuda\", \"available\": false, \"error\": "
       "\"cuInit: CUDA_ERROR_NO_DEVICE\"}]}'\n"
    << "fi\n";
  f.close();
  chmod(path.c_str(), 0755);
  return path;
}

TEST_CASE("GpuHealth notices a GPU that left the inventory and its return", "[worker][device]") {
  const std::string dir = TempDir();
  std::ofstream(dir + "/gpu") << "1";
  InventoryOptions o;
  o.runner_path = FakeRunner(dir);
  const v1::Inventory registered = CollectInventory(o);
  REQUIRE(GpuList(registered) == std::vector<std::string>{"cuda:0 sm_90a"});
  GpuHealth health(o, registered);
  CHECK(health.Check().ok());
  std::filesystem::remove(dir + "/gpu");
  absl::Status gone = health.Check();
  REQUIRE(absl::IsUnavailable(gone));
  CHECK(std::string(gone.message()) ==
        "GPU gone from the host's inventory: cuda:0 sm_90a (no GPU left)");
  std::ofstream(dir + "/gpu") << "1";
  CHECK(health.Check().ok());
  std::filesystem::remove_all(dir);
}

TEST_CASE("only faults, timeouts and crashes make the worker re-probe", "[worker][device]") {
  for (const char* o : {"fault", "timeout", "crash"}) CHECK(GpuHealth::Suspicious(o));
  for (const char* o : {"ok", "wrong", "unsupported", ""}) CHECK_FALSE(GpuHealth::Suspicious(o));
}

}  // namespace
}  // namespace argus::worker
