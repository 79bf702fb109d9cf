// gpu_worker/runner/gpu_api.h: the runner's view of a GPU runtime, behind dlopen.
//
// Gpu is one device of one runtime (CUDA driver API from libcuda.so.1, or HIP
// from libamdhip64.so), loaded at run time so that the runner links nothing
// but glibc. The CUDA implementation is the one exercised on hardware; the
// HIP one mirrors it call for call and is compile-verified only.
// No absl/spdlog/protobuf here: the runner is self-contained.
//
// Thread safety: a Gpu object is used by one thread (the runner is
// single-threaded); the functions that open libraries are not reentrant.
#ifndef ARGUS_GPU_WORKER_RUNNER_GPU_API_H_
#define ARGUS_GPU_WORKER_RUNNER_GPU_API_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "gpu_worker/runner/runner_core.h"

namespace argus::runner {

// What a failed call means for the candidate.
enum class ErrorClass {
  kNone,
  kFault,        // the kernel faulted; the context is dead
  kUnsupported,  // the artifact or launch is refused (arch, resources, PTX version)
  kTimeout,
  kOther,
};

struct GpuStatus {
  int code = 0;
  std::string name;   // e.g. CUDA_ERROR_ILLEGAL_ADDRESS
  std::string text;   // the runtime's description
  std::string where;  // the call that failed
  bool ok() const { return code == 0; }
  std::string Message() const;
};

struct DeviceInfo {
  int index = 0;
  std::string name;
  std::string arch;                // sm_90a | gfx942
  std::string compute_capability;  // "9.0" (CUDA)
  uint64_t total_memory = 0;
  uint64_t free_memory = 0;
  int multiprocessors = -1;
  int l2_bytes = -1;
  int max_shared_per_block = -1;        // default limit
  int max_shared_per_block_optin = -1;  // after raising the dynamic limit
  int max_threads_per_block = -1;
  int clock_khz = -1;
};

// A 2-D TMA tensor map of the tensor at device address `base`
// (runner_core.h TensorMapOf).
struct TensorMapRequest {
  uint64_t base = 0;
  TensorMapGeometry map;
};

struct FunctionInfo {
  int registers = -1;
  int static_shared_bytes = -1;
  int local_bytes = -1;
  int max_threads_per_block = -1;
  int binary_version = -1;
};

class Gpu {
 public:
  virtual ~Gpu() = default;
  virtual std::string runtime() const = 0;  // "cuda" | "hip"
  virtual std::string library_path() const = 0;
  virtual std::string driver_version() const = 0;
  virtual int DeviceCount() = 0;
  virtual GpuStatus QueryDevice(int index, DeviceInfo* info) = 0;
  virtual GpuStatus Open(int index) = 0;  // makes the device current; creates a stream

  // Modules and functions are opaque handles (CUmodule / CUfunction), valid
  // until the process ends.
  virtual GpuStatus LoadModule(const std::string& image, std::string* log, void** module) = 0;
  virtual GpuStatus GetFunction(void* module, const std::string& symbol, FunctionInfo* info,
                                void** function) = 0;
  virtual GpuStatus SetMaxDynamicShared(void* function, int bytes) = 0;
  // Encodes a TMA tensor map (CUDA only) into `out` (128 bytes).
  virtual GpuStatus EncodeTensorMap(const TensorMapRequest& r, uint8_t* out) = 0;
  virtual GpuStatus Launch(void* function, const std::array<int, 3>& grid,
                           const std::array<int, 3>& block, int shared_bytes, void** args) = 0;

  virtual GpuStatus Alloc(size_t bytes, uint64_t* ptr) = 0;
  virtual GpuStatus Free(uint64_t ptr) = 0;
  virtual GpuStatus CopyToDevice(uint64_t dst, const void* src, size_t bytes) = 0;
  virtual GpuStatus CopyToHost(void* dst, uint64_t src, size_t bytes) = 0;
  // Fills `bytes` with a repeated pattern of elem_size (1, 2 or 4) bytes,
  // ordered on the stream: before every later launch, copy and Sync. Copies
  // are ordered with the stream's work too (CUDA: a blocking stream).
  virtual GpuStatus Fill(uint64_t ptr, size_t bytes, int elem_size, uint32_t pattern) = 0;
  virtual GpuStatus FillAsync(uint64_t ptr, size_t bytes, uint8_t value) = 0;  // on the stream

  // Waits for the stream; `timed_out` is set when `timeout_s` passed first.
  virtual GpuStatus Sync(double timeout_s, bool* timed_out) = 0;
  virtual GpuStatus EventCreate(void** event) = 0;
  virtual GpuStatus EventRecord(void* event) = 0;
  virtual GpuStatus EventElapsedMs(void* start, void* stop, float* ms) = 0;
  virtual void* stream() const = 0;  // CUstream / hipStream_t

  virtual ErrorClass Classify(const GpuStatus& s) const = 0;
};

// The library (from `candidates`, in order) that dlopen accepted, or nullptr.
// `error` collects dlerror() text for each that failed.
void* OpenFirstLibrary(const std::vector<std::string>& candidates, std::string* path,
                       std::string* error);
// The absolute path of a library handle (dlinfo), or "".
std::string LibraryPath(void* handle);

std::unique_ptr<Gpu> OpenCuda(std::string* error);
std::unique_ptr<Gpu> OpenHip(std::string* error);

}  // namespace argus::runner

#endif  // ARGUS_GPU_WORKER_RUNNER_GPU_API_H_
