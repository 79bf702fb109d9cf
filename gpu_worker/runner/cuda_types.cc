#include "gpu_worker/runner/cuda_types.h"

#include <dlfcn.h>
#include <glob.h>

#include <cstdlib>
#include <vector>

#include "gpu_worker/runner/gpu_api.h"

namespace argus::runner::cuda {
namespace {

template <typename Fn>
bool Resolve(void* lib, const char* name, Fn* fn, std::string* error) {
  *fn = reinterpret_cast<Fn>(dlsym(lib, name));
  if (*fn == nullptr) {
    *error += std::string("missing symbol ") + name + "; ";
    return false;
  }
  return true;
}

std::vector<std::string> Glob(const std::string& pattern) {
  std::vector<std::string> out;
  glob_t g;
  if (glob(pattern.c_str(), 0, nullptr, &g) == 0) {
    for (size_t i = 0; i < g.gl_pathc; ++i) out.push_back(g.gl_pathv[i]);
  }
  globfree(&g);
  return out;
}

std::string Dir(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? "" : path.substr(0, slash);
}

}  // namespace

bool LoadCudaApi(CudaApi* api, std::string* error) {
  std::vector<std::string> candidates;
  if (const char* env = std::getenv("ARGUS_LIBCUDA"); env != nullptr && *env) {
    candidates.push_back(env);
  }
  candidates.push_back("libcuda.so.1");
  candidates.push_back("/usr/local/nvidia/lib64/libcuda.so.1");
  candidates.push_back("/usr/lib/x86_64-linux-gnu/libcuda.so.1");
  std::string path;
  void* lib = OpenFirstLibrary(candidates, &path, error);
  if (lib == nullptr) return false;
  api->path = path;
  bool ok = true;
#define ARGUS_RESOLVE(name) ok &= Resolve(lib, #name, &api->name, error)
  ARGUS_RESOLVE(cuInit);
  ARGUS_RESOLVE(cuDriverGetVersion);
  ARGUS_RESOLVE(cuGetErrorName);
  ARGUS_RESOLVE(cuGetErrorString);
  ARGUS_RESOLVE(cuDeviceGetCount);
  ARGUS_RESOLVE(cuDeviceGet);
  ARGUS_RESOLVE(cuDeviceGetName);
  ARGUS_RESOLVE(cuDeviceGetAttribute);
  ARGUS_RESOLVE(cuDeviceTotalMem_v2);
  ARGUS_RESOLVE(cuDevicePrimaryCtxRetain);
  ARGUS_RESOLVE(cuCtxSetCurrent);
  ARGUS_RESOLVE(cuMemGetInfo_v2);
  ARGUS_RESOLVE(cuModuleLoadDataEx);
  ARGUS_RESOLVE(cuModuleGetFunction);
  ARGUS_RESOLVE(cuFuncGetAttribute);
  ARGUS_RESOLVE(cuFuncSetAttribute);
  ARGUS_RESOLVE(cuLaunchKernel);
  ARGUS_RESOLVE(cuMemAlloc_v2);
  ARGUS_RESOLVE(cuMemFree_v2);
  ARGUS_RESOLVE(cuMemcpyHtoD_v2);
  ARGUS_RESOLVE(cuMemcpyDtoH_v2);
  ARGUS_RESOLVE(cuMemsetD8Async);
  ARGUS_RESOLVE(cuMemsetD16Async);
  ARGUS_RESOLVE(cuMemsetD32Async);
  ARGUS_RESOLVE(cuStreamCreate);
  ARGUS_RESOLVE(cuStreamQuery);
  ARGUS_RESOLVE(cuEventCreate);
  ARGUS_RESOLVE(cuEventRecord);
  ARGUS_RESOLVE(cuEventElapsedTime);
#undef ARGUS_RESOLVE
  api->cuTensorMapEncodeTiled =
      reinterpret_cast<decltype(api->cuTensorMapEncodeTiled)>(dlsym(lib, "cuTensorMapEncodeTiled"));
  return ok;
}

bool LoadCublasApi(const std::string& explicit_path, CublasApi* api, std::string* tried) {
  std::vector<std::string> candidates;
  if (!explicit_path.empty()) candidates.push_back(explicit_path);
  if (const char* env = std::getenv("ARGUS_CUBLAS"); env != nullptr && *env) {
    candidates.push_back(env);
  }
  for (const char* soname : {"libcublas.so.13", "libcublas.so.12", "libcublas.so"}) {
    candidates.push_back(soname);
  }
  for (const char* pattern :
       {"/usr/local/cuda/lib64/libcublas.so.1[0-9]", "/usr/local/cuda-*/lib64/libcublas.so.1[0-9]",
        "/usr/local/cuda/targets/x86_64-linux/lib/libcublas.so.1[0-9]",
        "/opt/*/.venv/lib/python3*/site-packages/nvidia/cublas/lib/libcublas.so.1[0-9]",
        "/opt/*/.venv/lib/python3*/site-packages/nvidia/cu1[0-9]/lib/libcublas.so.1[0-9]",
        "/usr/local/lib/python3*/dist-packages/nvidia/cublas/lib/libcublas.so.1[0-9]",
        "/usr/local/lib/python3*/site-packages/nvidia/cublas/lib/libcublas.so.1[0-9]",
        "/usr/lib/python3/dist-packages/nvidia/cublas/lib/libcublas.so.1[0-9]",
        "/usr/lib/x86_64-linux-gnu/libcublas.so.1[0-9]"}) {
    for (const std::string& p : Glob(pattern)) candidates.push_back(p);
  }
  for (const std::string& c : candidates) {
    // cuBLAS needs cuBLASLt; load the one beside it first so that a library
    // outside the loader's path resolves.
    if (c.find('/') != std::string::npos) {
      const std::string lt_dir = Dir(c);
      for (const std::string& lt : Glob(lt_dir + "/libcublasLt.so.1[0-9]")) {
        dlopen(lt.c_str(), RTLD_NOW | RTLD_GLOBAL);
      }
    }
    void* lib = dlopen(c.c_str(), RTLD_NOW | RTLD_GLOBAL);
    if (lib == nullptr) {
      const char* e = dlerror();
      *tried += c + ": " + (e != nullptr ? e : "not found") + "; ";
      continue;
    }
    std::string err;
    bool ok = true;
    ok &= Resolve(lib, "cublasCreate_v2", &api->cublasCreate_v2, &err);
    ok &= Resolve(lib, "cublasSetStream_v2", &api->cublasSetStream_v2, &err);
    ok &= Resolve(lib, "cublasGetVersion_v2", &api->cublasGetVersion_v2, &err);
    ok &= Resolve(lib, "cublasGemmEx", &api->cublasGemmEx, &err);
    ok &= Resolve(lib, "cublasSgeam_v2", &api->cublasSgeam, &err) ||
          Resolve(lib, "cublasSgeam", &api->cublasSgeam, &err);
    if (!ok) {
      *tried += c + ": " + err;
      continue;
    }
    api->handle_lib = lib;
    api->path = LibraryPath(lib);
    if (api->path.empty()) api->path = c;
    return true;
  }
  return false;
}

}  // namespace argus::runner::cuda
