// The CUDA driver API implementation of Gpu (dlopen of libcuda.so.1).
#include <dlfcn.h>
#include <link.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <deque>
#include <thread>

#include "gpu_worker/runner/cuda_types.h"
#include "gpu_worker/runner/gpu_api.h"

namespace argus::runner {

std::string GpuStatus::Message() const {
  if (ok()) return "";
  std::string m = where.empty() ? "" : where + ": ";
  m += name.empty() ? "error " + std::to_string(code) : name;
  if (!text.empty()) m += " (" + text + ")";
  return m;
}

void* OpenFirstLibrary(const std::vector<std::string>& candidates, std::string* path,
                       std::string* error) {
  for (const std::string& c : candidates) {
    void* h = dlopen(c.c_str(), RTLD_NOW | RTLD_GLOBAL);
    if (h != nullptr) {
      if (path != nullptr) {
        *path = LibraryPath(h);
        if (path->empty()) *path = c;
      }
      return h;
    }
    if (error != nullptr) {
      const char* e = dlerror();
      *error += c + ": " + (e != nullptr ? e : "not found") + "; ";
    }
  }
  return nullptr;
}

std::string LibraryPath(void* handle) {
  struct link_map* map = nullptr;
  if (dlinfo(handle, RTLD_DI_LINKMAP, &map) != 0 || map == nullptr || map->l_name == nullptr) {
    return "";
  }
  return map->l_name;
}

namespace {

using namespace cuda;  // NOLINT: the driver API's own names

class CudaGpu : public Gpu {
 public:
  explicit CudaGpu(const CudaApi& api) : api_(api) {}
  ~CudaGpu() override = default;  // the process exits; the driver cleans up

  std::string runtime() const override { return "cuda"; }
  std::string library_path() const override { return api_.path; }
  std::string driver_version() const override {
    int v = 0;
    if (api_.cuDriverGetVersion(&v) != 0) return "";
    return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
  }

  int DeviceCount() override {
    int n = 0;
    if (api_.cuDeviceGetCount(&n) != 0) return 0;
    return n;
  }

  GpuStatus QueryDevice(int index, DeviceInfo* info) override {
    CUdevice dev = 0;
    if (auto s = Check(api_.cuDeviceGet(&dev, index), "cuDeviceGet"); !s.ok()) return s;
    char name[256] = {0};
    api_.cuDeviceGetName(name, sizeof(name) - 1, dev);
    info->index = index;
    info->name = name;
    int major = 0, minor = 0;
    api_.cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
    api_.cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
    info->compute_capability = std::to_string(major) + "." + std::to_string(minor);
    // Architecture-specific ("a") features exist on sm_90 and later.
    info->arch = "sm_" + std::to_string(major * 10 + minor) + (major >= 9 ? "a" : "");
    size_t total = 0;
    api_.cuDeviceTotalMem_v2(&total, dev);
    info->total_memory = total;
    api_.cuDeviceGetAttribute(&info->multiprocessors, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
                              dev);
    api_.cuDeviceGetAttribute(&info->l2_bytes, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, dev);
    api_.cuDeviceGetAttribute(&info->max_shared_per_block,
                              CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK, dev);
    api_.cuDeviceGetAttribute(&info->max_shared_per_block_optin,
                              CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, dev);
    api_.cuDeviceGetAttribute(&info->max_threads_per_block,
                              CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, dev);
    api_.cuDeviceGetAttribute(&info->clock_khz, CU_DEVICE_ATTRIBUTE_CLOCK_RATE, dev);
    if (ctx_ != nullptr && index == index_) {
      size_t free_b = 0, total_b = 0;
      if (api_.cuMemGetInfo_v2(&free_b, &total_b) == 0) info->free_memory = free_b;
    }
    return {};
  }

  GpuStatus Open(int index) override {
    if (auto s = Check(api_.cuDeviceGet(&dev_, index), "cuDeviceGet"); !s.ok()) return s;
    index_ = index;
    if (auto s = Check(api_.cuDevicePrimaryCtxRetain(&ctx_, dev_), "cuDevicePrimaryCtxRetain");
        !s.ok()) {
      return s;
    }
    if (auto s = Check(api_.cuCtxSetCurrent(ctx_), "cuCtxSetCurrent"); !s.ok()) return s;
    // A blocking stream: the synchronous copies (cuMemcpyHtoD/DtoH run on the
    // legacy default stream) are ordered with the launches. A non-blocking
    // stream let a kernel start before its inputs or its NaN poison had
    // landed: MoE's Y rows, zeroed at the kernel's start, were re-poisoned
    // behind it on the H200 (4800 NaN outputs, docs/codegen.md, "The runner").
    return Check(api_.cuStreamCreate(&stream_, CU_STREAM_DEFAULT), "cuStreamCreate");
  }

  GpuStatus LoadModule(const std::string& image, std::string* log, void** module) override {
    static char info_log[1 << 14];
    static char error_log[1 << 14];
    info_log[0] = error_log[0] = 0;
    CUjit_option opts[] = {CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES,
                           CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
    void* vals[] = {info_log, reinterpret_cast<void*>(sizeof(info_log) - 1), error_log,
                    reinterpret_cast<void*>(sizeof(error_log) - 1)};
    // PTX must be NUL-terminated; a cubin is an ELF image. Keep a copy alive.
    images_.push_back(image);
    images_.back().push_back('\0');
    CUmodule m = nullptr;
    CUresult r = api_.cuModuleLoadDataEx(&m, images_.back().data(), 4, opts, vals);
    *module = m;
    if (log != nullptr) {
      *log = error_log;
      if (info_log[0] != 0) *log += (log->empty() ? "" : "\n") + std::string(info_log);
    }
    return Check(r, "cuModuleLoadDataEx");
  }

  GpuStatus GetFunction(void* module, const std::string& symbol, FunctionInfo* info,
                        void** function) override {
    CUfunction fn = nullptr;
    if (auto s = Check(api_.cuModuleGetFunction(&fn, static_cast<CUmodule>(module), symbol.c_str()),
                       "cuModuleGetFunction(" + symbol + ")");
        !s.ok()) {
      return s;
    }
    *function = fn;
    if (info != nullptr) {
      api_.cuFuncGetAttribute(&info->registers, CU_FUNC_ATTRIBUTE_NUM_REGS, fn);
      api_.cuFuncGetAttribute(&info->static_shared_bytes, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, fn);
      api_.cuFuncGetAttribute(&info->local_bytes, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, fn);
      api_.cuFuncGetAttribute(&info->max_threads_per_block, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
                              fn);
      api_.cuFuncGetAttribute(&info->binary_version, CU_FUNC_ATTRIBUTE_BINARY_VERSION, fn);
    }
    return {};
  }

  GpuStatus SetMaxDynamicShared(void* function, int bytes) override {
    return Check(api_.cuFuncSetAttribute(static_cast<CUfunction>(function),
                                         CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, bytes),
                 "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)");
  }

  GpuStatus EncodeTensorMap(const TensorMapRequest& r, uint8_t* out) override {
    if (api_.cuTensorMapEncodeTiled == nullptr) {
      GpuStatus s;
      s.code = -1;
      s.name = "CUDA_ERROR_NOT_SUPPORTED";
      s.text = "this driver has no cuTensorMapEncodeTiled";
      s.where = "cuTensorMapEncodeTiled";
      return s;
    }
    const TensorMapGeometry& m = r.map;
    const uint64_t dims[2] = {m.cols, m.rows};
    const uint64_t strides[1] = {m.row_bytes};
    const unsigned box[2] = {m.box_cols, m.box_rows};
    const unsigned estr[2] = {1, 1};
    return Check(api_.cuTensorMapEncodeTiled(
                     out, m.data_type, 2, reinterpret_cast<void*>(r.base), dims, strides, box, estr,
                     0, m.swizzle_128b ? CU_TENSOR_MAP_SWIZZLE_128B : CU_TENSOR_MAP_SWIZZLE_NONE,
                     CU_TENSOR_MAP_L2_PROMOTION_L2_256B, 0),
                 "cuTensorMapEncodeTiled");
  }

  GpuStatus Launch(void* function, const std::array<int, 3>& g, const std::array<int, 3>& b,
                   int shared, void** args) override {
    return Check(api_.cuLaunchKernel(static_cast<CUfunction>(function), g[0], g[1], g[2], b[0],
                                     b[1], b[2], shared, stream_, args, nullptr),
                 "cuLaunchKernel");
  }

  GpuStatus Alloc(size_t bytes, uint64_t* ptr) override {
    CUdeviceptr p = 0;
    GpuStatus s = Check(api_.cuMemAlloc_v2(&p, bytes), "cuMemAlloc");
    *ptr = p;
    return s;
  }
  GpuStatus Free(uint64_t ptr) override { return Check(api_.cuMemFree_v2(ptr), "cuMemFree"); }
  GpuStatus CopyToDevice(uint64_t dst, const void* src, size_t bytes) override {
    return Check(api_.cuMemcpyHtoD_v2(dst, src, bytes), "cuMemcpyHtoD");
  }
  GpuStatus CopyToHost(void* dst, uint64_t src, size_t bytes) override {
    return Check(api_.cuMemcpyDtoH_v2(dst, src, bytes), "cuMemcpyDtoH");
  }
  GpuStatus Fill(uint64_t ptr, size_t bytes, int elem_size, uint32_t pattern) override {
    // On the runner's stream, so that the next launch starts after the fill
    // (cuMemsetD32_v2 is asynchronous too, on the legacy stream).
    CUresult r = 0;
    if (elem_size == 4) {
      r = api_.cuMemsetD32Async(ptr, pattern, bytes / 4, stream_);
    } else if (elem_size == 2) {
      r = api_.cuMemsetD16Async(ptr, static_cast<uint16_t>(pattern), bytes / 2, stream_);
    } else {
      r = api_.cuMemsetD8Async(ptr, static_cast<uint8_t>(pattern), bytes, stream_);
    }
    return Check(r, "cuMemsetAsync");
  }
  GpuStatus FillAsync(uint64_t ptr, size_t bytes, uint8_t value) override {
    return Check(api_.cuMemsetD8Async(ptr, value, bytes, stream_), "cuMemsetD8Async");
  }

  GpuStatus Sync(double timeout_s, bool* timed_out) override {
    *timed_out = false;
    const auto deadline = std::chrono::steady_clock::now() +
                          std::chrono::microseconds(static_cast<int64_t>(timeout_s * 1e6));
    while (true) {
      CUresult r = api_.cuStreamQuery(stream_);
      if (r != CUDA_ERROR_NOT_READY) return Check(r, "cuStreamQuery");
      if (std::chrono::steady_clock::now() > deadline) {
        *timed_out = true;
        return {};
      }
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
  }

  GpuStatus EventCreate(void** event) override {
    CUevent e = nullptr;
    GpuStatus s = Check(api_.cuEventCreate(&e, CU_EVENT_DEFAULT), "cuEventCreate");
    *event = e;
    return s;
  }
  GpuStatus EventRecord(void* event) override {
    return Check(api_.cuEventRecord(static_cast<CUevent>(event), stream_), "cuEventRecord");
  }
  GpuStatus EventElapsedMs(void* start, void* stop, float* ms) override {
    return Check(
        api_.cuEventElapsedTime(ms, static_cast<CUevent>(start), static_cast<CUevent>(stop)),
        "cuEventElapsedTime");
  }
  void* stream() const override { return stream_; }

  ErrorClass Classify(const GpuStatus& s) const override {
    switch (s.code) {
      case 0:
        return ErrorClass::kNone;
      case CUDA_ERROR_ILLEGAL_ADDRESS:
      case CUDA_ERROR_HARDWARE_STACK_ERROR:
      case CUDA_ERROR_ILLEGAL_INSTRUCTION:
      case CUDA_ERROR_MISALIGNED_ADDRESS:
      case CUDA_ERROR_INVALID_ADDRESS_SPACE:
      case CUDA_ERROR_INVALID_PC:
      case CUDA_ERROR_LAUNCH_FAILED:
      case CUDA_ERROR_ASSERT:
        return ErrorClass::kFault;
      case CUDA_ERROR_LAUNCH_TIMEOUT:
        return ErrorClass::kTimeout;
      case CUDA_ERROR_NO_BINARY_FOR_GPU:
      case CUDA_ERROR_INVALID_PTX:
      case CUDA_ERROR_UNSUPPORTED_PTX_VERSION:
      case CUDA_ERROR_INVALID_IMAGE:
      case CUDA_ERROR_JIT_COMPILER_NOT_FOUND:
      case CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES:
      case CUDA_ERROR_INVALID_VALUE:
      case CUDA_ERROR_NOT_FOUND:
      case CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE:
      case CUDA_ERROR_OUT_OF_MEMORY:
        return ErrorClass::kUnsupported;
      default:
        return ErrorClass::kOther;
    }
  }

 private:
  GpuStatus Check(CUresult r, const std::string& where) const {
    GpuStatus s;
    s.code = r;
    if (r == 0) return s;
    s.where = where;
    const char* name = nullptr;
    const char* text = nullptr;
    if (api_.cuGetErrorName != nullptr && api_.cuGetErrorName(r, &name) == 0 && name) s.name = name;
    if (api_.cuGetErrorString != nullptr && api_.cuGetErrorString(r, &text) == 0 && text) {
      s.text = text;
    }
    return s;
  }

  CudaApi api_;
  CUdevice dev_ = 0;
  int index_ = -1;
  CUcontext ctx_ = nullptr;
  CUstream stream_ = nullptr;
  std::deque<std::string> images_;  // every loaded image, kept alive
};

}  // namespace

std::unique_ptr<Gpu> OpenCuda(std::string* error) {
  CudaApi api;
  if (!LoadCudaApi(&api, error)) return nullptr;
  if (CUresult r = api.cuInit(0); r != 0) {
    const char* name = nullptr;
    if (api.cuGetErrorName != nullptr) api.cuGetErrorName(r, &name);
    *error = "cuInit failed: " + std::string(name != nullptr ? name : std::to_string(r));
    return nullptr;
  }
  return std::make_unique<CudaGpu>(api);
}

}  // namespace argus::runner
