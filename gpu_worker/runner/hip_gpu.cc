// The HIP implementation of Gpu (dlopen of libamdhip64.so). Compile-verified
// only: no AMD GPU is at hand. It mirrors the CUDA one call for call; the HIP
// module API (hipModuleLoadData / hipModuleLaunchKernel) takes the linked
// code object that codegen's EmitAmdgpuCodeObject writes.
#include <dlfcn.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <thread>

#include "gpu_worker/runner/gpu_api.h"

namespace argus::runner {
namespace {

using hipError_t = int;
using hipModule_t = struct ihipModule_t*;
using hipFunction_t = struct ihipModuleSymbol_t*;
using hipStream_t = struct ihipStream_t*;
using hipEvent_t = struct ihipEvent_t*;
using hipDeviceptr_t = void*;

constexpr int hipSuccess = 0;
constexpr int hipErrorNotReady = 600;
constexpr int hipErrorIllegalAddress = 700;
constexpr int hipErrorLaunchFailure = 719;
constexpr int hipErrorInvalidImage = 200;
constexpr int hipErrorNoBinaryForGpu = 209;
constexpr int hipErrorInvalidValue = 1;
constexpr int hipErrorOutOfMemory = 2;
constexpr int hipErrorLaunchOutOfResources = 701;
constexpr int hipErrorNotFound = 500;
constexpr int hipErrorInvalidKernelFile = 218;

struct HipApi {
  std::string path;
  hipError_t (*hipInit)(unsigned) = nullptr;
  hipError_t (*hipDriverGetVersion)(int*) = nullptr;
  const char* (*hipGetErrorName)(hipError_t) = nullptr;
  const char* (*hipGetErrorString)(hipError_t) = nullptr;
  hipError_t (*hipGetDeviceCount)(int*) = nullptr;
  hipError_t (*hipDeviceGetName)(char*, int, int) = nullptr;
  hipError_t (*hipDeviceTotalMem)(size_t*, int) = nullptr;
  hipError_t (*hipGetDeviceProperties)(void*, int) = nullptr;
  hipError_t (*hipSetDevice)(int) = nullptr;
  hipError_t (*hipMemGetInfo)(size_t*, size_t*) = nullptr;
  hipError_t (*hipModuleLoadData)(hipModule_t*, const void*) = nullptr;
  hipError_t (*hipModuleGetFunction)(hipFunction_t*, hipModule_t, const char*) = nullptr;
  hipError_t (*hipModuleLaunchKernel)(hipFunction_t, unsigned, unsigned, unsigned, unsigned,
                                      unsigned, unsigned, unsigned, hipStream_t, void**,
                                      void**) = nullptr;
  hipError_t (*hipMalloc)(void**, size_t) = nullptr;
  hipError_t (*hipFree)(void*) = nullptr;
  hipError_t (*hipMemcpyHtoD)(hipDeviceptr_t, const void*, size_t) = nullptr;
  hipError_t (*hipMemcpyDtoH)(void*, hipDeviceptr_t, size_t) = nullptr;
  hipError_t (*hipMemsetD8)(hipDeviceptr_t, unsigned char, size_t) = nullptr;
  hipError_t (*hipMemsetD16)(hipDeviceptr_t, unsigned short, size_t) = nullptr;  // NOLINT
  hipError_t (*hipMemsetD32)(hipDeviceptr_t, int, size_t) = nullptr;
  hipError_t (*hipMemsetD8Async)(hipDeviceptr_t, unsigned char, size_t, hipStream_t) = nullptr;
  hipError_t (*hipStreamCreate)(hipStream_t*) = nullptr;
  hipError_t (*hipStreamQuery)(hipStream_t) = nullptr;
  hipError_t (*hipEventCreate)(hipEvent_t*) = nullptr;
  hipError_t (*hipEventRecord)(hipEvent_t, hipStream_t) = nullptr;
  hipError_t (*hipEventElapsedTime)(float*, hipEvent_t, hipEvent_t) = nullptr;
};

template <typename Fn>
bool Resolve(void* lib, const char* name, Fn* fn, std::string* error);

class HipGpu : public Gpu {
 public:
  explicit HipGpu(const HipApi& api) : api_(api) {}
  std::string runtime() const override { return "hip"; }
  std::string library_path() const override { return api_.path; }
  std::string driver_version() const override {
    int v = 0;
    if (api_.hipDriverGetVersion(&v) != 0) return "";
    return std::to_string(v);
  }
  int DeviceCount() override {
    int n = 0;
    return api_.hipGetDeviceCount(&n) == 0 ? n : 0;
  }
  GpuStatus QueryDevice(int index, DeviceInfo* info) override {
    char name[256] = {0};
    if (auto s = Check(api_.hipDeviceGetName(name, sizeof(name) - 1, index), "hipDeviceGetName");
        !s.ok()) {
      return s;
    }
    info->index = index;
    info->name = name;
    size_t total = 0;
    api_.hipDeviceTotalMem(&total, index);
    info->total_memory = total;
    // hipDeviceProp_t's layout changes between ROCm releases; find its
    // gcnArchName ("gfx942:sramecc+:xnack-") by content instead of by offset.
    static char props[1 << 14];
    std::memset(props, 0, sizeof(props));
    if (api_.hipGetDeviceProperties != nullptr && api_.hipGetDeviceProperties(props, index) == 0) {
      for (size_t i = 0; i + 4 < sizeof(props); ++i) {
        if (std::memcmp(props + i, "gfx", 3) == 0 && (i == 0 || props[i - 1] == 0)) {
          std::string arch(props + i, strnlen(props + i, 64));
          info->arch = arch.substr(0, arch.find(':'));
          break;
        }
      }
    }
    return {};
  }
  GpuStatus Open(int index) override {
    if (auto s = Check(api_.hipSetDevice(index), "hipSetDevice"); !s.ok()) return s;
    // hipStreamCreate's stream is blocking: the null-stream memsets and copies
    // are ordered with its launches (the CUDA side needed the same fix).
    return Check(api_.hipStreamCreate(&stream_), "hipStreamCreate");
  }
  GpuStatus LoadModule(const std::string& image, std::string* log, void** module) override {
    images_.push_back(image);
    hipModule_t m = nullptr;
    GpuStatus s = Check(api_.hipModuleLoadData(&m, images_.back().data()), "hipModuleLoadData");
    *module = m;
    return s;
  }
  GpuStatus GetFunction(void* module, const std::string& symbol, FunctionInfo* info,
                        void** function) override {
    hipFunction_t fn = nullptr;
    GpuStatus s =
        Check(api_.hipModuleGetFunction(&fn, static_cast<hipModule_t>(module), symbol.c_str()),
              "hipModuleGetFunction(" + symbol + ")");
    *function = fn;
    return s;
  }
  // LDS is not opt-in on AMD.
  GpuStatus SetMaxDynamicShared(void* function, int bytes) override { return {}; }
  GpuStatus EncodeTensorMap(const TensorMapRequest& r, uint8_t* out) override {
    GpuStatus s;
    s.code = -1;
    s.name = "hipErrorNotSupported";
    s.text = "TMA tensor maps are an NVIDIA Hopper feature";
    s.where = "EncodeTensorMap";
    return s;
  }
  GpuStatus Launch(void* function, const std::array<int, 3>& g, const std::array<int, 3>& b,
                   int shared, void** args) override {
    return Check(api_.hipModuleLaunchKernel(static_cast<hipFunction_t>(function), g[0], g[1], g[2],
                                            b[0], b[1], b[2], shared, stream_, args, nullptr),
                 "hipModuleLaunchKernel");
  }
  GpuStatus Alloc(size_t bytes, uint64_t* ptr) override {
    void* p = nullptr;
    GpuStatus s = Check(api_.hipMalloc(&p, bytes), "hipMalloc");
    *ptr = reinterpret_cast<uint64_t>(p);
    return s;
  }
  GpuStatus Free(uint64_t ptr) override { return Check(api_.hipFree(P(ptr)), "hipFree"); }
  GpuStatus CopyToDevice(uint64_t dst, const void* src, size_t bytes) override {
    return Check(api_.hipMemcpyHtoD(P(dst), src, bytes), "hipMemcpyHtoD");
  }
  GpuStatus CopyToHost(void* dst, uint64_t src, size_t bytes) override {
    return Check(api_.hipMemcpyDtoH(dst, P(src), bytes), "hipMemcpyDtoH");
  }
  GpuStatus Fill(uint64_t ptr, size_t bytes, int elem_size, uint32_t pattern) override {
    hipError_t r;
    if (elem_size == 4) {
      r = api_.hipMemsetD32(P(ptr), static_cast<int>(pattern), bytes / 4);
    } else if (elem_size == 2) {
      r = api_.hipMemsetD16(P(ptr), static_cast<uint16_t>(pattern), bytes / 2);
    } else {
      r = api_.hipMemsetD8(P(ptr), static_cast<uint8_t>(pattern), bytes);
    }
    return Check(r, "hipMemset");
  }
  GpuStatus FillAsync(uint64_t ptr, size_t bytes, uint8_t value) override {
    return Check(api_.hipMemsetD8Async(P(ptr), value, bytes, stream_), "hipMemsetD8Async");
  }
  GpuStatus Sync(double timeout_s, bool* timed_out) override {
    *timed_out = false;
    const auto deadline = std::chrono::steady_clock::now() +
                          std::chrono::microseconds(static_cast<int64_t>(timeout_s * 1e6));
    while (true) {
      hipError_t r = api_.hipStreamQuery(stream_);
      if (r != hipErrorNotReady) return Check(r, "hipStreamQuery");
      if (std::chrono::steady_clock::now() > deadline) {
        *timed_out = true;
        return {};
      }
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
  }
  GpuStatus EventCreate(void** event) override {
    hipEvent_t e = nullptr;
    GpuStatus s = Check(api_.hipEventCreate(&e), "hipEventCreate");
    *event = e;
    return s;
  }
  GpuStatus EventRecord(void* event) override {
    return Check(api_.hipEventRecord(static_cast<hipEvent_t>(event), stream_), "hipEventRecord");
  }
  GpuStatus EventElapsedMs(void* start, void* stop, float* ms) override {
    return Check(
        api_.hipEventElapsedTime(ms, static_cast<hipEvent_t>(start), static_cast<hipEvent_t>(stop)),
        "hipEventElapsedTime");
  }
  void* stream() const override { return stream_; }
  ErrorClass Classify(const GpuStatus& s) const override {
    switch (s.code) {
      case hipSuccess:
        return ErrorClass::kNone;
      case hipErrorIllegalAddress:
      case hipErrorLaunchFailure:
        return ErrorClass::kFault;
      case hipErrorInvalidImage:
      case hipErrorNoBinaryForGpu:
      case hipErrorInvalidValue:
      case hipErrorOutOfMemory:
      case hipErrorLaunchOutOfResources:
      case hipErrorNotFound:
      case hipErrorInvalidKernelFile:
        return ErrorClass::kUnsupported;
      default:
        return ErrorClass::kOther;
    }
  }

 private:
  static void* P(uint64_t p) { return reinterpret_cast<void*>(p); }
  GpuStatus Check(hipError_t r, const std::string& where) const {
    GpuStatus s;
    s.code = r;
    if (r == 0) return s;
    s.where = where;
    if (api_.hipGetErrorName != nullptr) s.name = api_.hipGetErrorName(r);
    if (api_.hipGetErrorString != nullptr) s.text = api_.hipGetErrorString(r);
    return s;
  }
  HipApi api_;
  hipStream_t stream_ = nullptr;
  std::deque<std::string> images_;  // every loaded image, kept alive
};

template <typename Fn>
bool Resolve(void* lib, const char* name, Fn* fn, std::string* error) {
  *fn = reinterpret_cast<Fn>(dlsym(lib, name));
  if (*fn == nullptr) {
    *error += std::string("missing symbol ") + name + "; ";
    return false;
  }
  return true;
}

}  // namespace

std::unique_ptr<Gpu> OpenHip(std::string* error) {
  std::vector<std::string> candidates;
  if (const char* env = std::getenv("ARGUS_LIBHIP"); env != nullptr && *env) {
    candidates.push_back(env);
  }
  candidates.insert(candidates.end(), {"libamdhip64.so", "libamdhip64.so.6", "libamdhip64.so.7",
                                       "/opt/rocm/lib/libamdhip64.so"});
  HipApi api;
  void* lib = OpenFirstLibrary(candidates, &api.path, error);
  if (lib == nullptr) return nullptr;
  bool ok = true;
#define ARGUS_RESOLVE(name) ok &= Resolve(lib, #name, &api.name, error)
  ARGUS_RESOLVE(hipInit);
  ARGUS_RESOLVE(hipDriverGetVersion);
  ARGUS_RESOLVE(hipGetErrorName);
  ARGUS_RESOLVE(hipGetErrorString);
  ARGUS_RESOLVE(hipGetDeviceCount);
  ARGUS_RESOLVE(hipDeviceGetName);
  ARGUS_RESOLVE(hipDeviceTotalMem);
  ARGUS_RESOLVE(hipSetDevice);
  ARGUS_RESOLVE(hipMemGetInfo);
  ARGUS_RESOLVE(hipModuleLoadData);
  ARGUS_RESOLVE(hipModuleGetFunction);
  ARGUS_RESOLVE(hipModuleLaunchKernel);
  ARGUS_RESOLVE(hipMalloc);
  ARGUS_RESOLVE(hipFree);
  ARGUS_RESOLVE(hipMemcpyHtoD);
  ARGUS_RESOLVE(hipMemcpyDtoH);
  ARGUS_RESOLVE(hipMemsetD8);
  ARGUS_RESOLVE(hipMemsetD16);
  ARGUS_RESOLVE(hipMemsetD32);
  ARGUS_RESOLVE(hipMemsetD8Async);
  ARGUS_RESOLVE(hipStreamCreate);
  ARGUS_RESOLVE(hipStreamQuery);
  ARGUS_RESOLVE(hipEventCreate);
  ARGUS_RESOLVE(hipEventRecord);
  ARGUS_RESOLVE(hipEventElapsedTime);
#undef ARGUS_RESOLVE
  // ROCm 6 renamed the properties entry point; take either.
  api.hipGetDeviceProperties =
      reinterpret_cast<hipError_t (*)(void*, int)>(dlsym(lib, "hipGetDevicePropertiesR0600"));
  if (api.hipGetDeviceProperties == nullptr) {
    api.hipGetDeviceProperties =
        reinterpret_cast<hipError_t (*)(void*, int)>(dlsym(lib, "hipGetDeviceProperties"));
  }
  if (!ok) return nullptr;
  if (hipError_t r = api.hipInit(0); r != 0) {
    *error = "hipInit failed: " + std::to_string(r);
    return nullptr;
  }
  return std::make_unique<HipGpu>(api);
}

}  // namespace argus::runner
