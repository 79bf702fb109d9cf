// gpu_worker/runner/fake_cuda.cc: a stand-in libcuda.so.1 for runner tests
// on machines without a GPU (ARGUS_LIBCUDA=.../libargus_fake_cuda.so).
//
// It models the one thing a CPU cannot otherwise show: CUDA's stream
// ordering. Every memset, host-to-device copy and launch is queued on its
// stream and runs only when something orders it, at the latest moment the
// driver's rules allow:
//   - the legacy default stream (handle 0: cuMemcpy*, cuMemsetD*_v2) waits
//     for every blocking stream, and every blocking stream waits for it;
//   - a stream created with CU_STREAM_NON_BLOCKING waits for neither;
//   - cuStreamQuery runs the stream's queue; cuMemcpyDtoH runs the legacy
//     queue (and so the blocking streams') and then copies;
//   - a pageable cuMemcpyHtoD stages the bytes and returns before they land.
// So a runner that launches on a non-blocking stream after a legacy memset
// sees the memset land after its kernel, as the H200 did (MoE's NaN rows).
//
// The "kernels": symbol "copy", f32 c[i] = a[i] for the arguments (a, c, n);
// any other symbol, f32 c[i] = a[i] + b[i], i < n, for the arguments
// (a, b, c, n) — enough for specs with check op "add", in one launch or as a
// pipeline of launches through scratch tensors.
// Memory is host memory; device pointers are host addresses.
//
// Thread safety: none; the runner is single-threaded.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <memory>
#include <vector>

namespace {

using CUresult = int;
using CUdeviceptr = unsigned long long;  // NOLINT

struct Stream {
  bool blocking = true;
  std::deque<std::function<void()>> queue;
};

Stream g_legacy;
std::vector<Stream*> g_streams;
int g_module = 0, g_function = 0, g_copy_function = 0, g_context = 0, g_event = 0;

Stream* Of(void* s) { return s == nullptr ? &g_legacy : static_cast<Stream*>(s); }

void Drain(Stream* s) {
  while (!s->queue.empty()) {
    std::function<void()> op = std::move(s->queue.front());
    s->queue.pop_front();
    op();
  }
}

// Queues `op` on `s` behind what the stream rules make it wait for.
void Enqueue(Stream* s, std::function<void()> op) {
  if (s == &g_legacy) {
    for (Stream* b : g_streams)
      if (b->blocking) Drain(b);
  } else if (s->blocking) {
    Drain(&g_legacy);
  }
  s->queue.push_back(std::move(op));
}

template <typename T>
CUresult Memset(CUdeviceptr p, T v, size_t n, void* stream) {
  Enqueue(Of(stream), [p, v, n] {
    T* d = reinterpret_cast<T*>(p);
    for (size_t i = 0; i < n; ++i) d[i] = v;
  });
  return 0;
}

}  // namespace

extern "C" {

CUresult cuInit(unsigned) { return 0; }
CUresult cuDriverGetVersion(int* v) {
  *v = 13000;
  return 0;
}
CUresult cuGetErrorName(CUresult, const char** s) {
  *s = "CUDA_ERROR_FAKE";
  return 0;
}
CUresult cuGetErrorString(CUresult, const char** s) {
  *s = "fake driver error";
  return 0;
}
CUresult cuDeviceGetCount(int* n) {
  *n = 1;
  return 0;
}
CUresult cuDeviceGet(int* d, int i) {
  *d = i;
  return i == 0 ? 0 : 101;
}
CUresult cuDeviceGetName(char* name, int len, int) {
  std::strncpy(name, "argus fake CUDA device", static_cast<size_t>(len));
  return 0;
}
CUresult cuDeviceGetAttribute(int* v, int attr, int) {
  switch (attr) {
    case 75:  // compute capability major
      *v = 9;
      break;
    case 76:
      *v = 0;
      break;
    case 1:  // max threads per block
      *v = 1024;
      break;
    case 16:  // SMs
      *v = 1;
      break;
    case 8:
    case 97:  // shared memory per block (default, opt-in)
      *v = 48 << 10;
      break;
    default:
      *v = 0;
  }
  return 0;
}
CUresult cuDeviceTotalMem_v2(size_t* b, int) {
  *b = size_t{1} << 30;
  return 0;
}
CUresult cuDevicePrimaryCtxRetain(void** ctx, int) {
  *ctx = &g_context;
  return 0;
}
CUresult cuCtxSetCurrent(void*) { return 0; }
CUresult cuMemGetInfo_v2(size_t* free_b, size_t* total_b) {
  *free_b = *total_b = size_t{1} << 30;
  return 0;
}
CUresult cuModuleLoadDataEx(void** m, const void*, unsigned, int*, void**) {
  *m = &g_module;
  return 0;
}
CUresult cuModuleGetFunction(void** f, void*, const char* name) {
  *f = std::strcmp(name, "copy") == 0 ? &g_copy_function : &g_function;
  return 0;
}
CUresult cuFuncGetAttribute(int* v, int attr, void*) {
  *v = attr == 0 ? 1024 : 0;
  return 0;
}
CUresult cuFuncSetAttribute(void*, int, int) { return 0; }
CUresult cuLaunchKernel(void* f, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                        unsigned, void* stream, void** args, void**) {
  if (f == &g_copy_function) {
    const float* a = *static_cast<float**>(args[0]);
    float* c = *static_cast<float**>(args[1]);
    const int n = *static_cast<int*>(args[2]);
    Enqueue(Of(stream), [a, c, n] {
      for (int i = 0; i < n; ++i) c[i] = a[i];
    });
    return 0;
  }
  const float* a = *static_cast<float**>(args[0]);
  const float* b = *static_cast<float**>(args[1]);
  float* c = *static_cast<float**>(args[2]);
  const int n = *static_cast<int*>(args[3]);
  Enqueue(Of(stream), [a, b, c, n] {
    for (int i = 0; i < n; ++i) c[i] = a[i] + b[i];
  });
  return 0;
}
CUresult cuMemAlloc_v2(CUdeviceptr* p, size_t bytes) {
  void* m = std::calloc(bytes, 1);
  *p = reinterpret_cast<CUdeviceptr>(m);
  return m != nullptr ? 0 : 2;
}
CUresult cuMemFree_v2(CUdeviceptr p) {
  std::free(reinterpret_cast<void*>(p));
  return 0;
}
CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void* src, size_t bytes) {
  // Pageable memory: staged now, landing when the legacy stream gets to it.
  auto staged = std::make_shared<std::vector<uint8_t>>(static_cast<const uint8_t*>(src),
                                                       static_cast<const uint8_t*>(src) + bytes);
  Enqueue(&g_legacy, [dst, staged] {
    std::memcpy(reinterpret_cast<void*>(dst), staged->data(), staged->size());
  });
  return 0;
}
CUresult cuMemcpyDtoH_v2(void* dst, CUdeviceptr src, size_t bytes) {
  Enqueue(&g_legacy, [] {});
  Drain(&g_legacy);
  std::memcpy(dst, reinterpret_cast<const void*>(src), bytes);
  return 0;
}
CUresult cuMemsetD8_v2(CUdeviceptr p, unsigned char v, size_t n) {
  return Memset<uint8_t>(p, v, n, nullptr);
}
CUresult cuMemsetD16_v2(CUdeviceptr p, unsigned short v, size_t n) {  // NOLINT
  return Memset<uint16_t>(p, v, n, nullptr);
}
CUresult cuMemsetD32_v2(CUdeviceptr p, unsigned v, size_t n) {
  return Memset<uint32_t>(p, v, n, nullptr);
}
CUresult cuMemsetD8Async(CUdeviceptr p, unsigned char v, size_t n, void* s) {
  return Memset<uint8_t>(p, v, n, s);
}
CUresult cuMemsetD16Async(CUdeviceptr p, unsigned short v, size_t n, void* s) {  // NOLINT
  return Memset<uint16_t>(p, v, n, s);
}
CUresult cuMemsetD32Async(CUdeviceptr p, unsigned v, size_t n, void* s) {
  return Memset<uint32_t>(p, v, n, s);
}
CUresult cuStreamCreate(void** s, unsigned flags) {
  Stream* st = new Stream;
  st->blocking = (flags & 1u) == 0;
  g_streams.push_back(st);
  *s = st;
  return 0;
}
CUresult cuStreamQuery(void* s) {
  Drain(Of(s));
  return 0;
}
CUresult cuEventCreate(void** e, unsigned) {
  *e = &g_event;
  return 0;
}
CUresult cuEventRecord(void*, void* s) {
  Enqueue(Of(s), [] {});
  return 0;
}
CUresult cuEventElapsedTime(float* ms, void*, void*) {
  *ms = 0.01f;
  return 0;
}

}  // extern "C"
