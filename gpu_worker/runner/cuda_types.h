// gpu_worker/runner/cuda_types.h: the slice of the CUDA driver API (and of
// cuBLAS) that the runner uses, declared here so that building the runner
// needs no CUDA headers. Values are those of cuda.h / cublas_api.h (stable ABI).
//
// Thread safety: LoadCudaApi/LoadCublasApi are not reentrant; the tables they
// fill are read-only afterwards.
#ifndef ARGUS_GPU_WORKER_RUNNER_CUDA_TYPES_H_
#define ARGUS_GPU_WORKER_RUNNER_CUDA_TYPES_H_

#include <cstddef>
#include <cstdint>
#include <string>

namespace argus::runner::cuda {

using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;  // NOLINT
using CUcontext = struct CUctx_st*;
using CUmodule = struct CUmod_st*;
using CUfunction = struct CUfunc_st*;
using CUstream = struct CUstream_st*;
using CUevent = struct CUevent_st*;
using CUjit_option = int;

inline constexpr int CUDA_ERROR_INVALID_VALUE = 1;
inline constexpr int CUDA_ERROR_OUT_OF_MEMORY = 2;
inline constexpr int CUDA_ERROR_NO_DEVICE = 100;
inline constexpr int CUDA_ERROR_INVALID_IMAGE = 200;
inline constexpr int CUDA_ERROR_NO_BINARY_FOR_GPU = 209;
inline constexpr int CUDA_ERROR_INVALID_PTX = 218;
inline constexpr int CUDA_ERROR_JIT_COMPILER_NOT_FOUND = 221;
inline constexpr int CUDA_ERROR_UNSUPPORTED_PTX_VERSION = 222;
inline constexpr int CUDA_ERROR_NOT_FOUND = 500;
inline constexpr int CUDA_ERROR_NOT_READY = 600;
inline constexpr int CUDA_ERROR_ILLEGAL_ADDRESS = 700;
inline constexpr int CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES = 701;
inline constexpr int CUDA_ERROR_LAUNCH_TIMEOUT = 702;
inline constexpr int CUDA_ERROR_HARDWARE_STACK_ERROR = 714;
inline constexpr int CUDA_ERROR_ILLEGAL_INSTRUCTION = 715;
inline constexpr int CUDA_ERROR_MISALIGNED_ADDRESS = 716;
inline constexpr int CUDA_ERROR_INVALID_ADDRESS_SPACE = 717;
inline constexpr int CUDA_ERROR_INVALID_PC = 718;
inline constexpr int CUDA_ERROR_LAUNCH_FAILED = 719;
inline constexpr int CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE = 720;
inline constexpr int CUDA_ERROR_ASSERT = 710;

inline constexpr int CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 1;
inline constexpr int CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK = 8;
inline constexpr int CU_DEVICE_ATTRIBUTE_CLOCK_RATE = 13;
inline constexpr int CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16;
inline constexpr int CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE = 38;
inline constexpr int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75;
inline constexpr int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76;
inline constexpr int CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97;

inline constexpr int CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 0;
inline constexpr int CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES = 1;
inline constexpr int CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES = 3;
inline constexpr int CU_FUNC_ATTRIBUTE_NUM_REGS = 4;
inline constexpr int CU_FUNC_ATTRIBUTE_BINARY_VERSION = 6;
inline constexpr int CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8;

inline constexpr int CU_JIT_INFO_LOG_BUFFER = 3;
inline constexpr int CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES = 4;
inline constexpr int CU_JIT_ERROR_LOG_BUFFER = 5;
inline constexpr int CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6;

inline constexpr unsigned CU_STREAM_DEFAULT = 0;
inline constexpr unsigned CU_EVENT_DEFAULT = 0;

struct CudaApi {
  std::string path;
  CUresult (*cuInit)(unsigned) = nullptr;
  CUresult (*cuDriverGetVersion)(int*) = nullptr;
  CUresult (*cuGetErrorName)(CUresult, const char**) = nullptr;
  CUresult (*cuGetErrorString)(CUresult, const char**) = nullptr;
  CUresult (*cuDeviceGetCount)(int*) = nullptr;
  CUresult (*cuDeviceGet)(CUdevice*, int) = nullptr;
  CUresult (*cuDeviceGetName)(char*, int, CUdevice) = nullptr;
  CUresult (*cuDeviceGetAttribute)(int*, int, CUdevice) = nullptr;
  CUresult (*cuDeviceTotalMem_v2)(size_t*, CUdevice) = nullptr;
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext*, CUdevice) = nullptr;
  CUresult (*cuCtxSetCurrent)(CUcontext) = nullptr;
  CUresult (*cuMemGetInfo_v2)(size_t*, size_t*) = nullptr;
  CUresult (*cuModuleLoadDataEx)(CUmodule*, const void*, unsigned, CUjit_option*, void**) = nullptr;
  CUresult (*cuModuleGetFunction)(CUfunction*, CUmodule, const char*) = nullptr;
  CUresult (*cuFuncGetAttribute)(int*, int, CUfunction) = nullptr;
  CUresult (*cuFuncSetAttribute)(CUfunction, int, int) = nullptr;
  CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                             unsigned, CUstream, void**, void**) = nullptr;
  CUresult (*cuMemAlloc_v2)(CUdeviceptr*, size_t) = nullptr;
  CUresult (*cuMemFree_v2)(CUdeviceptr) = nullptr;
  CUresult (*cuMemcpyHtoD_v2)(CUdeviceptr, const void*, size_t) = nullptr;
  CUresult (*cuMemcpyDtoH_v2)(void*, CUdeviceptr, size_t) = nullptr;
  CUresult (*cuMemsetD8Async)(CUdeviceptr, unsigned char, size_t, CUstream) = nullptr;
  CUresult (*cuMemsetD16Async)(CUdeviceptr, unsigned short, size_t, CUstream) = nullptr;  // NOLINT
  CUresult (*cuMemsetD32Async)(CUdeviceptr, unsigned, size_t, CUstream) = nullptr;
  CUresult (*cuStreamCreate)(CUstream*, unsigned) = nullptr;
  CUresult (*cuStreamQuery)(CUstream) = nullptr;
  CUresult (*cuEventCreate)(CUevent*, unsigned) = nullptr;
  CUresult (*cuEventRecord)(CUevent, CUstream) = nullptr;
  CUresult (*cuEventElapsedTime)(float*, CUevent, CUevent) = nullptr;
  // Optional (CUDA 12+ drivers): TMA tensor maps. Arguments: map (128 bytes,
  // 64-byte aligned), data type, rank, address, dims, strides (rank - 1, bytes),
  // box, element strides, interleave, swizzle, L2 promotion, OOB fill.
  CUresult (*cuTensorMapEncodeTiled)(void*, int, unsigned, void*, const uint64_t*, const uint64_t*,
                                     const unsigned*, const unsigned*, int, int, int,
                                     int) = nullptr;
};
// CUtensorMap enum values (cuda.h).
inline constexpr int CU_TENSOR_MAP_DATA_TYPE_FLOAT16 = 6;
inline constexpr int CU_TENSOR_MAP_DATA_TYPE_FLOAT32 = 7;
inline constexpr int CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 = 9;
inline constexpr int CU_TENSOR_MAP_SWIZZLE_NONE = 0;
inline constexpr int CU_TENSOR_MAP_SWIZZLE_128B = 3;
inline constexpr int CU_TENSOR_MAP_L2_PROMOTION_L2_256B = 3;

// Opens libcuda.so.1 (or $ARGUS_LIBCUDA) and resolves every entry point.
bool LoadCudaApi(CudaApi* api, std::string* error);

// cuBLAS (v2 API), for the vendor baseline.
using cublasHandle_t = struct cublasContext*;
using cublasStatus_t = int;
inline constexpr int CUBLAS_OP_N = 0;
inline constexpr int CUBLAS_OP_T = 1;
inline constexpr int CUDA_R_32F = 0;
inline constexpr int CUDA_R_16F = 2;
inline constexpr int CUDA_R_16BF = 14;
inline constexpr int CUBLAS_COMPUTE_32F = 68;
inline constexpr int CUBLAS_GEMM_DEFAULT = -1;

struct CublasApi {
  std::string path;
  void* handle_lib = nullptr;
  cublasStatus_t (*cublasCreate_v2)(cublasHandle_t*) = nullptr;
  cublasStatus_t (*cublasSetStream_v2)(cublasHandle_t, CUstream) = nullptr;
  cublasStatus_t (*cublasGetVersion_v2)(cublasHandle_t, int*) = nullptr;
  cublasStatus_t (*cublasGemmEx)(cublasHandle_t, int, int, int, int, int, const void*, const void*,
                                 int, int, const void*, int, int, const void*, void*, int, int, int,
                                 int) = nullptr;
  cublasStatus_t (*cublasSgeam)(cublasHandle_t, int, int, int, int, const float*, const float*, int,
                                const float*, const float*, int, float*, int) = nullptr;
};

// Tries `explicit_path` (if not empty), $ARGUS_CUBLAS, then the usual places:
// the dynamic loader's path, /usr/local/cuda*/lib64, and PyTorch's
// nvidia/cublas/lib (or nvidia/cu13/lib) in the common Python prefixes.
// `tried` lists what was attempted and why each failed.
bool LoadCublasApi(const std::string& explicit_path, CublasApi* api, std::string* tried);

}  // namespace argus::runner::cuda

#endif  // ARGUS_GPU_WORKER_RUNNER_CUDA_TYPES_H_
