// argus-runner: loads one GPU artifact, checks it against a CPU reference,
// times it and the vendor baseline, and writes one JSON result.
//
//   argus-runner --inventory
//   argus-runner --spec SPEC.json [--out RESULT.json] [--device N]
//                [--cublas /path/libcublas.so.13] [--no-baseline]
//                [--sdpa_helper PATH] [--moe_helper PATH] [--torch_helper PATH]
//
// The spec format is in runner_core.h; the result format in README.md
// beside this file. Exit status: 0 when a result was written (whatever its
// outcome), 2 for a usage error. Links only glibc (libstdc++/libgcc are
// static); CUDA and HIP are dlopen'ed.
#include <fcntl.h>
#include <signal.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "gpu_worker/runner/cuda_types.h"
#include "gpu_worker/runner/gpu_api.h"
#include "gpu_worker/runner/helper_process.h"
#include "gpu_worker/runner/runner_core.h"

namespace argus::runner {
namespace {

using nlohmann::json;

constexpr int kRunnerVersion = 1;

int g_out_fd = 1;
char g_crash_json[4096];
size_t g_crash_len = 0;
std::chrono::steady_clock::time_point g_start;

void WriteAll(int fd, const char* p, size_t n) {
  while (n > 0) {
    ssize_t w = write(fd, p, n);
    if (w <= 0) return;
    p += w;
    n -= static_cast<size_t>(w);
  }
}

void CrashHandler(int sig) {
  // Async-signal-safe: the message was formatted in advance; only the signal
  // number is patched in (a single digit pair).
  char buf[sizeof(g_crash_json)];
  std::memcpy(buf, g_crash_json, g_crash_len);
  for (size_t i = 0; i + 1 < g_crash_len; ++i) {
    if (buf[i] == '#' && buf[i + 1] == '#') {
      buf[i] = static_cast<char>('0' + (sig / 10) % 10);
      buf[i + 1] = static_cast<char>('0' + sig % 10);
      break;
    }
  }
  WriteAll(g_out_fd, buf, g_crash_len);
  _exit(4);
}

void InstallCrashHandler(const std::string& symbol) {
  json j = {{"runner_version", kRunnerVersion},
            {"outcome", "crash"},
            {"kernel", symbol},
            {"message", "argus-runner died on signal ##"}};
  const std::string s = j.dump(2) + "\n";
  g_crash_len = std::min(s.size(), sizeof(g_crash_json));
  std::memcpy(g_crash_json, s.data(), g_crash_len);
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) signal(sig, CrashHandler);
}

double WallSeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - g_start).count();
}

[[noreturn]] void Finish(json result, int exit_code = 0) {
  result["runner_version"] = kRunnerVersion;
  result["wall_s"] = WallSeconds();
  const std::string s = result.dump(2) + "\n";
  WriteAll(g_out_fd, s.data(), s.size());
  if (g_out_fd != 1) close(g_out_fd);
  // No teardown: after a fault or a hang the driver's cleanup can block.
  _exit(exit_code);
}

json DeviceJson(const DeviceInfo& d) {
  return {{"index", d.index},
          {"name", d.name},
          {"arch", d.arch},
          {"compute_capability", d.compute_capability},
          {"total_memory_bytes", d.total_memory},
          {"free_memory_bytes", d.free_memory},
          {"multiprocessors", d.multiprocessors},
          {"l2_bytes", d.l2_bytes},
          {"max_shared_per_block", d.max_shared_per_block},
          {"max_shared_per_block_optin", d.max_shared_per_block_optin},
          {"max_threads_per_block", d.max_threads_per_block},
          {"clock_khz", d.clock_khz}};
}

int Inventory(const std::string& cublas_path) {
  json runtimes = json::array();
  for (const char* name : {"cuda", "hip"}) {
    std::string error;
    std::unique_ptr<Gpu> gpu = std::string(name) == "cuda" ? OpenCuda(&error) : OpenHip(&error);
    json r = {{"name", name}, {"available", gpu != nullptr}};
    if (gpu == nullptr) {
      r["error"] = error;
    } else {
      r["library"] = gpu->library_path();
      r["driver_version"] = gpu->driver_version();
      json devices = json::array();
      const int n = gpu->DeviceCount();
      for (int i = 0; i < n; ++i) {
        DeviceInfo info;
        GpuStatus s = gpu->QueryDevice(i, &info);
        if (s.ok()) {
          devices.push_back(DeviceJson(info));
        } else {
          devices.push_back({{"index", i}, {"error", s.Message()}});
        }
      }
      r["devices"] = devices;
    }
    runtimes.push_back(r);
  }
  json out = {{"runtimes", runtimes}};
  cuda::CublasApi cublas;
  std::string tried;
  if (cuda::LoadCublasApi(cublas_path, &cublas, &tried)) {
    out["baselines"] = {{"cublas", {{"available", true}, {"library", cublas.path}}}};
  } else {
    out["baselines"] = {{"cublas", {{"available", false}, {"tried", tried}}}};
  }
  Finish(out);
}

std::string ReadFile(const std::string& path, bool* ok) {
  std::ifstream in(path, std::ios::binary);
  *ok = static_cast<bool>(in);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string DirOf(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

struct Runner {
  RunSpec spec;
  json result;
  std::unique_ptr<Gpu> gpu;
  DeviceInfo device;
  std::vector<HostTensor> host;
  std::vector<uint64_t> dev;

  [[noreturn]] void Outcome(const std::string& outcome, const std::string& message) {
    result["outcome"] = outcome;
    result["message"] = message;
    Finish(result);
  }

  // A failed call: fault / unsupported / crash per the runtime's error class.
  [[noreturn]] void Fail(const GpuStatus& s, const std::string& context = "") {
    const std::string msg = context.empty() ? s.Message() : context + ": " + s.Message();
    switch (gpu->Classify(s)) {
      case ErrorClass::kFault:
        Outcome("fault", msg);
      case ErrorClass::kTimeout:
        Outcome("timeout", msg);
      case ErrorClass::kUnsupported:
        Outcome("unsupported", msg);
      default:
        Outcome("crash", msg);
    }
  }

  void SyncOrDie(const std::string& what) {
    bool timed_out = false;
    GpuStatus s = gpu->Sync(spec.timeout_s, &timed_out);
    if (timed_out) {
      Outcome("timeout", what + " did not finish within " + std::to_string(spec.timeout_s) + " s");
    }
    if (!s.ok()) Fail(s, what);
  }

  void PoisonOutputs() {
    for (size_t i = 0; i < host.size(); ++i) {
      if (host[i].spec.init != "poison") continue;
      int es = 0;
      const uint32_t p = PoisonPattern(host[i].spec.dtype, &es);
      if (GpuStatus s = gpu->Fill(dev[i], host[i].data.size(), es, p); !s.ok()) Fail(s);
    }
  }

  uint64_t DevOf(const std::string& name) {
    for (size_t i = 0; i < host.size(); ++i) {
      if (host[i].spec.name == name) return dev[i];
    }
    return 0;
  }

  // Copies every poisoned tensor back and checks it; returns the checked
  // output's result (the spec's check.c, or a NaN-only check of the others).
  CheckResult CheckAll(const std::string& which, uint64_t c_override = 0) {
    CheckResult worst;
    worst.passed = true;
    bool any = false;
    for (size_t i = 0; i < host.size(); ++i) {
      if (host[i].spec.init != "poison" || host[i].spec.scratch) continue;
      const bool is_c = host[i].spec.name == spec.check.c ||
                        (!spec.check.e.empty() && host[i].spec.name == spec.check.e);
      if (c_override != 0 && !is_c) continue;
      HostTensor out = host[i];
      const uint64_t src = (c_override != 0) ? c_override : dev[i];
      if (GpuStatus s = gpu->CopyToHost(out.data.data(), src, out.data.size()); !s.ok()) {
        Fail(s, "reading " + which + " output " + out.spec.name);
      }
      CheckSpec cs = spec.check;
      if (!is_c) cs.op = "none";
      CheckResult r = CheckOutput(cs, host, out, spec.seed);
      if (!any || (!r.passed && worst.passed) || is_c) {
        if (!(worst.passed == false && r.passed)) worst = r;
      }
      any = true;
      if (!r.passed) {
        worst = r;
        worst.message = out.spec.name + ": " + r.message;
        break;
      }
    }
    return worst;
  }

  template <typename LaunchFn>
  TimingStats Time(LaunchFn launch, uint64_t flush_ptr, size_t flush_bytes) {
    int warmup = spec.warmup, reps = spec.reps;
    if (spec.budget_ms > 0) {
      // One timed launch (the first warm-up) sizes the rest to the budget.
      void *e0 = nullptr, *e1 = nullptr;
      if (GpuStatus s = gpu->EventCreate(&e0); !s.ok()) Fail(s);
      if (GpuStatus s = gpu->EventCreate(&e1); !s.ok()) Fail(s);
      gpu->EventRecord(e0);
      launch();
      gpu->EventRecord(e1);
      SyncOrDie("warm-up");
      float est = 0;
      if (GpuStatus s = gpu->EventElapsedMs(e0, e1, &est); !s.ok()) Fail(s);
      FitTiming(est, spec.budget_ms, &warmup, &reps);
      --warmup;
    }
    for (int i = 0; i < warmup; ++i) launch();
    SyncOrDie("warm-up");
    std::vector<void*> start(reps), stop(reps);
    for (int i = 0; i < reps; ++i) {
      if (GpuStatus s = gpu->EventCreate(&start[i]); !s.ok()) Fail(s);
      if (GpuStatus s = gpu->EventCreate(&stop[i]); !s.ok()) Fail(s);
    }
    for (int i = 0; i < reps; ++i) {
      if (flush_ptr != 0) {
        if (GpuStatus s = gpu->FillAsync(flush_ptr, flush_bytes, static_cast<uint8_t>(i));
            !s.ok()) {
          Fail(s, "L2 flush");
        }
      }
      gpu->EventRecord(start[i]);
      launch();
      gpu->EventRecord(stop[i]);
    }
    SyncOrDie("timed repetitions");
    std::vector<double> ms;
    for (int i = 0; i < reps; ++i) {
      float t = 0;
      if (GpuStatus s = gpu->EventElapsedMs(start[i], stop[i], &t); !s.ok()) Fail(s);
      ms.push_back(t);
    }
    return ComputeStats(ms);
  }

  // Median time of each launch of the pipeline over `reps` runs of all of them;
  // `launch_one(l)` issues launch l.
  std::vector<double> PerLaunchMs(const std::function<void(size_t)>& launch_one, uint64_t flush_ptr,
                                  size_t flush_bytes, int reps) {
    const size_t n = spec.launches.size();
    std::vector<std::vector<void*>> ev(reps, std::vector<void*>(n + 1));
    for (auto& r : ev) {
      for (void*& e : r) {
        if (GpuStatus s = gpu->EventCreate(&e); !s.ok()) Fail(s);
      }
    }
    for (int i = 0; i < reps; ++i) {
      if (flush_ptr != 0) gpu->FillAsync(flush_ptr, flush_bytes, static_cast<uint8_t>(i));
      for (size_t l = 0; l < n; ++l) {
        gpu->EventRecord(ev[i][l]);
        launch_one(l);
      }
      gpu->EventRecord(ev[i][n]);
    }
    SyncOrDie("per-launch timing");
    std::vector<double> out;
    for (size_t l = 0; l < n; ++l) {
      std::vector<double> ms;
      for (int i = 0; i < reps; ++i) {
        float t = 0;
        if (GpuStatus s = gpu->EventElapsedMs(ev[i][l], ev[i][l + 1], &t); !s.ok()) Fail(s);
        ms.push_back(t);
      }
      out.push_back(ComputeStats(ms).median_ms);
    }
    return out;
  }

  json Throughput(const TimingStats& t) {
    json j = json::object();
    if (t.median_ms <= 0) return j;
    if (spec.flops > 0) j["tflops"] = spec.flops / (t.median_ms * 1e-3) / 1e12;
    if (spec.bytes > 0) j["gbps"] = spec.bytes / (t.median_ms * 1e-3) / 1e9;
    return j;
  }

  // cuBLAS on the spec's check, checked, then timed. With spec.rounds > 1, `time_ours` (the
  // kernel's timing, whose first round `ours` already ran) and cuBLAS are timed rounds - 1 more
  // times alternately, the order swapping each round; "rounds" lists each round's medians.
  json RunCublas(uint64_t flush_ptr, size_t flush_bytes, const TimingStats& ours,
                 const std::function<TimingStats()>& time_ours) {
    json b = {{"name", "cublas"}};
    cuda::CublasApi api;
    std::string tried;
    if (!cuda::LoadCublasApi(cublas_path, &api, &tried)) {
      b["outcome"] = "unavailable";
      b["message"] = "no usable libcublas: " + tried;
      return b;
    }
    b["library"] = api.path;
    cuda::cublasHandle_t h = nullptr;
    if (int st = api.cublasCreate_v2(&h); st != 0) {
      b["outcome"] = "error";
      b["message"] = "cublasCreate failed: " + std::to_string(st);
      return b;
    }
    api.cublasSetStream_v2(h, static_cast<cuda::CUstream>(gpu->stream()));
    int version = 0;
    api.cublasGetVersion_v2(h, &version);
    b["version"] = version;
    const TensorSpec* tc = spec.Find(spec.check.c);
    uint64_t c2 = 0;
    if (GpuStatus s = gpu->Alloc(static_cast<size_t>(tc->bytes()), &c2); !s.ok()) Fail(s);
    int es = 0;
    const uint32_t poison = PoisonPattern(tc->dtype, &es);
    const uint64_t a = DevOf(spec.check.a), bb = DevOf(spec.check.b);
    int status = 0;
    std::function<void()> call;
    if (spec.check.op == "gemm") {
      auto cuda_type = [](DType d) {
        return d == DType::kBF16  ? cuda::CUDA_R_16BF
               : d == DType::kF16 ? cuda::CUDA_R_16F
                                  : cuda::CUDA_R_32F;
      };
      const int at = cuda_type(spec.Find(spec.check.a)->dtype);
      const int bt = cuda_type(spec.Find(spec.check.b)->dtype);
      const int ct = cuda_type(tc->dtype);
      const int M = static_cast<int>(spec.check.m), N = static_cast<int>(spec.check.n),
                K = static_cast<int>(spec.check.k);
      const bool nk = spec.check.b_layout != "kn", km = spec.check.a_layout == "km";
      static const float alpha = 1.0f, beta = 0.0f;
      b["name"] = "cublasGemmEx";
      // Row-major C[M,N] = A B is column-major C^T[N,M] = B^T A^T; a row-major
      // [K, M] A is the column-major M x K matrix A, hence op T.
      call = [&, at, bt, ct, M, N, K, nk, km] {
        status = api.cublasGemmEx(h, nk ? cuda::CUBLAS_OP_T : cuda::CUBLAS_OP_N,
                                  km ? cuda::CUBLAS_OP_T : cuda::CUBLAS_OP_N, N, M, K, &alpha,
                                  reinterpret_cast<void*>(bb), bt, nk ? K : N,
                                  reinterpret_cast<void*>(a), at, km ? M : K, &beta,
                                  reinterpret_cast<void*>(c2), ct, N, cuda::CUBLAS_COMPUTE_32F,
                                  cuda::CUBLAS_GEMM_DEFAULT);
      };
    } else if (spec.check.op == "add" && tc->dtype == DType::kF32) {
      static const float one = 1.0f;
      const int n = static_cast<int>(tc->elements());
      b["name"] = "cublasSgeam";
      call = [&, n] {
        status = api.cublasSgeam(h, cuda::CUBLAS_OP_N, cuda::CUBLAS_OP_N, n, 1, &one,
                                 reinterpret_cast<float*>(a), n, &one, reinterpret_cast<float*>(bb),
                                 n, reinterpret_cast<float*>(c2), n);
      };
    } else {
      b["outcome"] = "unsupported";
      b["message"] = "no cuBLAS baseline for this check";
      return b;
    }
    if (GpuStatus s = gpu->Fill(c2, static_cast<size_t>(tc->bytes()), es, poison); !s.ok()) Fail(s);
    call();
    SyncOrDie("cuBLAS baseline");
    if (status != 0) {
      b["outcome"] = "error";
      b["message"] = "cuBLAS returned status " + std::to_string(status);
      return b;
    }
    CheckResult cr = CheckAll("baseline", c2);
    b["check"] = cr.ToJson();
    b["outcome"] = cr.passed ? "ok" : "wrong";
    TimingStats t = Time(call, flush_ptr, flush_bytes);
    b["timing"] = t.ToJson();
    b.update(Throughput(t));
    if (spec.rounds > 1) {
      json rounds = json::array();
      rounds.push_back({{"ours_ms", ours.median_ms}, {"baseline_ms", t.median_ms}});
      for (int r = 1; r < spec.rounds; ++r) {
        TimingStats o, c;
        if (r % 2 == 1) {  // odd rounds: cuBLAS first
          c = Time(call, flush_ptr, flush_bytes);
          o = time_ours();
        } else {
          o = time_ours();
          c = Time(call, flush_ptr, flush_bytes);
        }
        rounds.push_back({{"ours_ms", o.median_ms}, {"baseline_ms", c.median_ms}});
      }
      b["rounds"] = rounds;
    }
    gpu->Free(c2);
    return b;
  }

  // The attention baseline: PyTorch's SDPA timed by a helper process on the
  // same device (sdpa_baseline.py), on fresh inputs of the spec's shape and
  // input dtype, since neither CUDA's libraries nor the driver have an
  // attention routine to dlopen.
  json RunSdpaHelper(size_t flush_bytes) {
    const CheckSpec& c = spec.check;
    if (c.op != "attention") {
      return {{"name", "torch_sdpa"},
              {"outcome", "unsupported"},
              {"message", "torch_sdpa is a baseline for attention checks only"}};
    }
    const TensorSpec* q = spec.Find(c.a);
    json request = {{"batch", c.batch},
                    {"bh", c.m},
                    {"kv_bh", c.kv_heads},
                    {"seq", c.n},
                    {"kv_seq", c.kv_len},
                    {"dim", c.k},
                    {"scale", c.scale},
                    {"causal", c.causal},
                    {"dtype", q != nullptr ? DTypeName(q->dtype) : "bf16"},
                    {"warmup", spec.warmup},
                    {"reps", spec.reps},
                    {"flush_bytes", std::max<size_t>(flush_bytes, 1)},
                    {"seed", spec.seed}};
    json b = {{"name", "torch_sdpa"}, {"helper", sdpa_helper}};
    if (!CallHelper(sdpa_helper, request, std::max(60.0, spec.timeout_s * 6), &b)) return b;
    if (b.contains("timing")) b.update(Throughput(TimingFromJson(b["timing"])));
    return b;
  }

  // A scratch directory for a helper's raw inputs and outputs: /dev/shm when
  // it has room for them (a container's is often 64 MB), else /tmp; empty when
  // neither can be made.
  std::string MakeScratchDir() {
    double need = 0;
    for (const HostTensor& t : host) need += static_cast<double>(t.data.size());
    struct statvfs fs {};
    const bool shm =
        access("/dev/shm", W_OK) == 0 && statvfs("/dev/shm", &fs) == 0 &&
        static_cast<double>(fs.f_bavail) * static_cast<double>(fs.f_frsize) > need * 1.1;
    std::string dir = std::string(shm ? "/dev/shm" : "/tmp") + "/argus-helper-XXXXXX";
    return mkdtemp(dir.data()) == nullptr ? "" : dir;
  }

  // Writes host tensor `name` raw to `path`.
  bool WriteTensor(const std::string& name, const std::string& path) {
    for (const HostTensor& t : host) {
      if (t.spec.name != name) continue;
      std::ofstream out(path, std::ios::binary);
      out.write(reinterpret_cast<const char*>(t.data.data()),
                static_cast<std::streamsize>(t.data.size()));
      return static_cast<bool>(out);
    }
    return false;
  }

  // Output `name` as a helper wrote it to `path`, if of the expected size.
  bool ReadOutput(const std::string& name, const std::string& path, HostTensor* y) {
    for (const HostTensor& t : host) {
      if (t.spec.name == name) *y = t;
    }
    bool read = false;
    const std::string bytes = ReadFile(path, &read);
    read = read && !y->data.empty() && bytes.size() == y->data.size();
    if (read) std::memcpy(y->data.data(), bytes.data(), bytes.size());
    return read;
  }

  // Runs helper `script` with `request` and merges its one JSON reply into
  // `b`; false, with b's outcome and message set, when it gave none.
  bool CallHelper(const std::string& script, const json& request, double timeout_s, json* b) {
    const char* python = std::getenv("ARGUS_PYTHON");
    HelperResult h =
        RunHelper({python != nullptr ? python : "python3", script, request.dump()}, timeout_s);
    const size_t brace = h.out.rfind("\n{");
    json reply =
        json::parse(brace == std::string::npos ? h.out : h.out.substr(brace + 1), nullptr, false);
    if (!h.started || h.timed_out || !reply.is_object()) {
      (*b)["outcome"] = "unsupported";
      (*b)["message"] = !h.error.empty() ? h.error : script + " printed no JSON result";
      return false;
    }
    b->update(reply);
    return true;
  }

  static void RemoveDir(const std::string& dir) {
    for (const char* f :
         {"x", "ids", "weights", "gate", "up", "down", "y", "a", "b", "d", "u", "c", "e"}) {
      unlink((dir + "/" + f + ".bin").c_str());
    }
    rmdir(dir.c_str());
  }

  // The MoE baseline: PyTorch's loop over experts (moe_baseline.py), run by a
  // helper process on the very inputs the kernel ran on (written raw to a
  // scratch directory), its output checked here against the kernel's reference.
  json RunMoeHelper(size_t flush_bytes) {
    const CheckSpec& c = spec.check;
    json b = {{"name", "torch_moe_loop"}, {"helper", moe_helper}};
    if (c.op != "moe") {
      b["outcome"] = "unsupported";
      b["message"] = "torch_moe_loop is a baseline for moe checks only";
      return b;
    }
    const std::string dir = MakeScratchDir();
    if (dir.empty()) {
      b["outcome"] = "error";
      b["message"] = "cannot create a scratch directory for the MoE helper";
      return b;
    }
    json request = {{"tokens", c.m},
                    {"hidden", c.n},
                    {"ffn", c.k},
                    {"experts", c.experts},
                    {"topk", c.topk},
                    {"dtype", DTypeName(spec.Find(c.a)->dtype)},
                    {"warmup", spec.warmup},
                    {"reps", spec.reps},
                    {"flush_bytes", std::max<size_t>(flush_bytes, 1)},
                    {"out", dir + "/y.bin"}};
    bool written = true;
    for (const auto& [key, name] :
         std::vector<std::pair<std::string, std::string>>{{"x", c.a},
                                                          {"ids", c.ids},
                                                          {"weights", c.weights},
                                                          {"gate", c.b},
                                                          {"up", c.u},
                                                          {"down", c.d}}) {
      request[key] = dir + "/" + key + ".bin";
      written = WriteTensor(name, request[key]) && written;
    }
    if (!written) {
      RemoveDir(dir);
      b["outcome"] = "unsupported";
      b["message"] = "cannot write the inputs for the MoE helper";
      return b;
    }
    const bool replied = CallHelper(moe_helper, request, std::max(120.0, spec.timeout_s * 6), &b);
    HostTensor y;
    const bool read = ReadOutput(c.c, dir + "/y.bin", &y);
    RemoveDir(dir);
    if (!replied) return b;
    if (b["outcome"] == "ok") {
      if (!read) {
        b["outcome"] = "wrong";
        b["message"] = "the MoE helper wrote no output of the expected size";
        return b;
      }
      CheckResult cr = CheckOutput(c, host, y, spec.seed);
      b["check"] = cr.ToJson();
      if (!cr.passed) b["outcome"] = "wrong";
    }
    if (b.contains("timing")) b.update(Throughput(TimingFromJson(b["timing"])));
    return b;
  }

  // The memory-bound baseline: what a PyTorch user runs (torch_baseline.py:
  // eager and torch.compile) on the very inputs the kernel ran on, each
  // output checked here against the kernel's reference; the helper also
  // times a device-to-device copy of the problem's compulsory bytes.
  json RunTorchHelper(size_t flush_bytes) {
    const CheckSpec& c = spec.check;
    json b = {{"name", "torch"}, {"helper", torch_helper}};
    const std::string dir = MakeScratchDir();
    if (dir.empty()) {
      b["outcome"] = "error";
      b["message"] = "cannot create a scratch directory for the PyTorch helper";
      return b;
    }
    json request = {{"op", c.op},
                    {"eps", c.eps},
                    {"warmup", spec.warmup},
                    {"reps", spec.reps},
                    {"copy_bytes", spec.bytes},
                    {"flush_bytes", std::max<size_t>(flush_bytes, 1)},
                    {"inputs", json::object()},
                    {"outputs", json::object()}};
    auto describe = [&](const std::string& role, const std::string& name) {
      const TensorSpec* t = spec.Find(name);
      return json{
          {"path", dir + "/" + role + ".bin"}, {"dtype", DTypeName(t->dtype)}, {"shape", t->shape}};
    };
    bool written = true;
    for (const auto& [role, name] : std::vector<std::pair<std::string, std::string>>{
             {"a", c.a}, {"b", c.b}, {"d", c.d}, {"u", c.u}}) {
      if (name.empty()) continue;
      request["inputs"][role] = describe(role, name);
      written = WriteTensor(name, dir + "/" + role + ".bin") && written;
    }
    request["outputs"]["c"] = describe("c", c.c);
    if (!c.e.empty()) request["outputs"]["e"] = describe("e", c.e);
    bool replied = false;
    if (written) {
      replied = CallHelper(torch_helper, request, std::max(300.0, spec.timeout_s * 10), &b);
    } else {
      b["outcome"] = "unsupported";
      b["message"] = "cannot write the inputs for the PyTorch helper";
    }
    std::vector<std::pair<std::string, HostTensor>> outs;
    for (const auto& [role, name] :
         std::vector<std::pair<std::string, std::string>>{{"c", c.c}, {"e", c.e}}) {
      if (name.empty()) continue;
      HostTensor y;
      if (ReadOutput(name, dir + "/" + role + ".bin", &y)) outs.emplace_back(name, std::move(y));
    }
    RemoveDir(dir);
    if (!replied || b["outcome"] != "ok") return b;
    if (outs.size() != (c.e.empty() ? 1u : 2u)) {
      b["outcome"] = "wrong";
      b["message"] = "the PyTorch helper wrote no output of the expected size";
      return b;
    }
    for (const auto& [name, y] : outs) {
      CheckResult cr = CheckOutput(c, host, y, spec.seed);
      b["check"] = cr.ToJson();
      if (!cr.passed) {
        b["outcome"] = "wrong";
        b["message"] = name + ": " + cr.message;
        break;
      }
    }
    if (b.contains("timing")) b.update(Throughput(TimingFromJson(b["timing"])));
    return b;
  }

  static TimingStats TimingFromJson(const json& t) {
    TimingStats s;
    s.reps = t.value("reps", 0);
    s.median_ms = t.value("median_ms", 0.0);
    return s;
  }

  // The 8-byte argument slot of one kernel argument (a tensor's address, a
  // scalar, or the device address of a TMA tensor map encoded here).
  uint64_t ArgSlot(const ArgSpec& a) {
    uint64_t slot = 0;
    switch (a.kind) {
      case ArgSpec::Kind::kTensor:
        slot = DevOf(a.tensor);
        break;
      case ArgSpec::Kind::kI32: {
        const int32_t v = static_cast<int32_t>(a.i);
        std::memcpy(&slot, &v, 4);
        break;
      }
      case ArgSpec::Kind::kI64:
        slot = static_cast<uint64_t>(a.i);
        break;
      case ArgSpec::Kind::kF32: {
        const float v = static_cast<float>(a.f);
        std::memcpy(&slot, &v, 4);
        break;
      }
      case ArgSpec::Kind::kTensorMap: {
        // The map lives in device memory; the kernel gets its address. A
        // rank-3+ tensor is seen as rows of its last dim (e.g. [E, K, N]
        // experts' weights as one [E*K, N] matrix).
        TensorMapRequest r;
        r.base = DevOf(a.tensor);
        r.map = TensorMapOf(*spec.Find(a.tensor), a);
        alignas(64) uint8_t map[128] = {};
        if (GpuStatus s = gpu->EncodeTensorMap(r, map); !s.ok()) {
          Outcome("unsupported", "tensor map for " + a.tensor + ": " + s.Message());
        }
        if (GpuStatus s = gpu->Alloc(sizeof(map), &slot); !s.ok()) {
          Fail(s, "allocating a tensor map");
        }
        if (GpuStatus s = gpu->CopyToDevice(slot, map, sizeof(map)); !s.ok()) Fail(s);
        break;
      }
    }
    return slot;
  }

  std::string spec_path, cublas_path, sdpa_helper, moe_helper, torch_helper;
  int device_index = 0;
  bool no_baseline = false;

  [[noreturn]] void Run() {
    bool ok = false;
    const std::string text = ReadFile(spec_path, &ok);
    if (!ok) Outcome("unsupported", "cannot read spec " + spec_path);
    json j = json::parse(text, nullptr, false);
    if (j.is_discarded()) Outcome("unsupported", "spec " + spec_path + " is not JSON");
    std::string error;
    if (!ParseRunSpec(j, &spec, &error)) Outcome("unsupported", "invalid spec: " + error);
    const LaunchSpec& first = spec.launches[0];
    InstallCrashHandler(first.symbol);
    result["kernel"] = first.symbol;
    result["artifact"] = first.artifact;
    result["format"] = first.format;
    result["seed"] = spec.seed;
    result["launch"] = {
        {"grid", first.grid}, {"block", first.block}, {"shared_bytes", first.shared_bytes}};

    const bool hip = first.format == "hsaco";
    for (const LaunchSpec& l : spec.launches) {
      if ((l.format == "hsaco") != hip) {
        Outcome("unsupported", "launch " + l.symbol + ": every launch of a spec needs one runtime");
      }
    }
    gpu = hip ? OpenHip(&error) : OpenCuda(&error);
    if (gpu == nullptr) {
      Outcome("unsupported", std::string("no ") + (hip ? "HIP" : "CUDA") + " runtime: " + error);
    }
    result["runtime"] = {{"name", gpu->runtime()},
                         {"library", gpu->library_path()},
                         {"driver_version", gpu->driver_version()}};
    if (gpu->DeviceCount() <= device_index) {
      Outcome("unsupported", "device " + std::to_string(device_index) + " not present (" +
                                 std::to_string(gpu->DeviceCount()) + " found)");
    }
    if (GpuStatus s = gpu->Open(device_index); !s.ok()) Fail(s, "opening the device");
    gpu->QueryDevice(device_index, &device);
    result["device"] = DeviceJson(device);

    std::vector<void*> functions;
    json launches = json::array();
    std::map<std::string, void*> modules;  // artifact path -> module, each loaded once
    for (const LaunchSpec& l : spec.launches) {
      const std::string artifact_path =
          l.artifact[0] == '/' ? l.artifact : DirOf(spec_path) + "/" + l.artifact;
      void* module = nullptr;
      if (auto it = modules.find(artifact_path); it != modules.end()) {
        module = it->second;
      } else {
        const std::string image = ReadFile(artifact_path, &ok);
        if (!ok) Outcome("unsupported", "cannot read artifact " + artifact_path);
        std::string jit_log;
        if (GpuStatus s = gpu->LoadModule(image, &jit_log, &module); !s.ok()) {
          Outcome(gpu->Classify(s) == ErrorClass::kFault ? "fault" : "unsupported",
                  "the device (" + device.arch + ") refused the " + l.format + " artifact " +
                      l.artifact + ": " + s.Message() +
                      (jit_log.empty() ? "" : "; JIT log: " + jit_log));
        }
        modules[artifact_path] = module;
      }
      FunctionInfo fi;
      void* fn = nullptr;
      if (GpuStatus s = gpu->GetFunction(module, l.symbol, &fi, &fn); !s.ok()) {
        Outcome("unsupported", "kernel symbol not in the artifact: " + s.Message());
      }
      functions.push_back(fn);
      const json fj = {{"registers", fi.registers},
                       {"static_shared_bytes", fi.static_shared_bytes},
                       {"local_bytes", fi.local_bytes},
                       {"max_threads_per_block", fi.max_threads_per_block},
                       {"binary_version", fi.binary_version}};
      if (functions.size() == 1) result["function"] = fj;
      launches.push_back({{"kernel", l.symbol},
                          {"grid", l.grid},
                          {"block", l.block},
                          {"shared_bytes", l.shared_bytes},
                          {"function", fj}});
      const int64_t threads = static_cast<int64_t>(l.block[0]) * l.block[1] * l.block[2];
      if (fi.max_threads_per_block > 0 && threads > fi.max_threads_per_block) {
        Outcome("unsupported", l.symbol + ": block of " + std::to_string(threads) +
                                   " threads exceeds the kernel's limit of " +
                                   std::to_string(fi.max_threads_per_block));
      }
      if (l.shared_bytes > 0 && !hip) {
        const int total = l.shared_bytes + std::max(0, fi.static_shared_bytes);
        if (device.max_shared_per_block_optin > 0 && total > device.max_shared_per_block_optin) {
          Outcome("unsupported", l.symbol + " needs " + std::to_string(total) +
                                     " bytes of shared memory; the device allows " +
                                     std::to_string(device.max_shared_per_block_optin) +
                                     " per block");
        }
        if (GpuStatus s = gpu->SetMaxDynamicShared(fn, l.shared_bytes); !s.ok()) {
          Outcome("unsupported", "cannot raise the dynamic shared memory limit to " +
                                     std::to_string(l.shared_bytes) + ": " + s.Message());
        }
      }
    }
    if (spec.launches.size() > 1) result["launches"] = launches;

    for (size_t i = 0; i < spec.tensors.size(); ++i) {
      host.push_back(MakeHostTensor(spec.tensors[i], spec.seed, static_cast<int>(i)));
      uint64_t p = 0;
      if (GpuStatus s = gpu->Alloc(host.back().data.size(), &p); !s.ok()) {
        Fail(s, "allocating " + spec.tensors[i].name);
      }
      dev.push_back(p);
      if (spec.tensors[i].init != "poison") {
        if (GpuStatus s = gpu->CopyToDevice(p, host.back().data.data(), host.back().data.size());
            !s.ok()) {
          Fail(s);
        }
      }
    }
    // Kernel arguments, each in its own 8-byte slot, per launch.
    std::vector<std::vector<uint64_t>> slots(spec.launches.size());
    std::vector<std::vector<void*>> args(spec.launches.size());
    for (size_t l = 0; l < spec.launches.size(); ++l) {
      const std::vector<ArgSpec>& as = spec.launches[l].args;
      slots[l].resize(as.size());
      for (size_t i = 0; i < as.size(); ++i) slots[l][i] = ArgSlot(as[i]);
      for (size_t i = 0; i < as.size(); ++i) args[l].push_back(&slots[l][i]);
    }
    auto launch_one = [&](size_t l) {
      const LaunchSpec& ls = spec.launches[l];
      if (GpuStatus s =
              gpu->Launch(functions[l], ls.grid, ls.block, ls.shared_bytes, args[l].data());
          !s.ok()) {
        Fail(s, "launch of " + ls.symbol + " refused");
      }
    };
    auto launch = [&] {
      for (size_t l = 0; l < spec.launches.size(); ++l) launch_one(l);
    };

    // Correctness: one launch on poisoned outputs.
    PoisonOutputs();
    launch();
    SyncOrDie("the kernel");
    CheckResult check = CheckAll("kernel");
    result["check"] = check.ToJson();
    if (!check.passed) Outcome("wrong", check.message);

    // Timing (outputs are not re-poisoned; the kernel only overwrites them).
    uint64_t flush = 0;
    size_t flush_bytes = 0;
    if (spec.flush_l2) {
      flush_bytes =
          std::max<size_t>(256u << 20, 2 * static_cast<size_t>(std::max(device.l2_bytes, 0)));
      if (!gpu->Alloc(flush_bytes, &flush).ok()) flush = 0;
    }
    TimingStats ours = Time(launch, flush, flush_bytes);
    result["timing"] = ours.ToJson();
    result["timing"]["warmup"] = spec.warmup;
    result["timing"]["flush_l2"] = flush != 0;
    result["timing"]["flush_bytes"] = flush != 0 ? flush_bytes : 0;
    result["flops"] = spec.flops;
    result["bytes"] = spec.bytes;
    result.update(Throughput(ours));
    if (spec.launches.size() > 1) {
      // Where a pipeline's time goes: each launch's median over as many
      // repetitions (L2 flushed before each), events between the launches.
      std::vector<double> per = PerLaunchMs(launch_one, flush, flush_bytes, ours.reps);
      for (size_t l = 0; l < per.size(); ++l) result["launches"][l]["median_ms"] = per[l];
    }
    // The checked result must survive the timed runs too (a racy kernel).
    CheckResult after = CheckAll("kernel (after timing)");
    result["check_after_timing"] = after.ToJson();
    if (!after.passed) Outcome("wrong", "after timing: " + after.message);

    result["baseline"] = nullptr;
    if (!no_baseline &&
        (spec.baseline == "cublas" || spec.baseline == "torch_sdpa" ||
         spec.baseline == "torch_moe_loop" || spec.baseline == "torch") &&
        !hip) {
      json b = spec.baseline == "cublas"
                   ? RunCublas(flush, flush_bytes, ours,
                               [&] { return Time(launch, flush, flush_bytes); })
               : spec.baseline == "torch_sdpa"     ? RunSdpaHelper(flush_bytes)
               : spec.baseline == "torch_moe_loop" ? RunMoeHelper(flush_bytes)
                                                   : RunTorchHelper(flush_bytes);
      if (b.contains("timing") && b["outcome"] == "ok") {
        const double bm = b["timing"]["median_ms"].get<double>();
        if (bm > 0 && ours.median_ms > 0) {
          result["ratio"] = ours.median_ms / bm;  // < 1: faster than the baseline
          result["speedup"] = bm / ours.median_ms;
        }
        if (b.contains("rounds")) {  // the median of the rounds' ratios
          std::vector<double> ratios;
          for (const json& r : b["rounds"]) {
            const double o = r["ours_ms"].get<double>(), c = r["baseline_ms"].get<double>();
            if (o > 0 && c > 0) ratios.push_back(o / c);
          }
          if (!ratios.empty()) {
            const double med = Median(ratios);
            result["ratio_first_round"] = result["ratio"];
            result["ratio"] = med;
            result["speedup"] = 1.0 / med;
          }
        }
      }
      result["baseline"] = b;
    }
    Outcome("ok", "");
  }
};

// PATH of a file in the directory of this executable.
std::string BesideSelf(const std::string& name) {
  char buf[4096];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  if (n <= 0) return name;
  std::string self(buf, static_cast<size_t>(n));
  return self.substr(0, self.rfind('/') + 1) + name;
}

int Usage() {
  std::fprintf(stderr,
               "usage: argus-runner --inventory [--cublas PATH]\n"
               "       argus-runner --spec SPEC.json [--out RESULT.json] [--device N]\n"
               "                    [--cublas PATH] [--no-baseline] [--sdpa_helper PATH]\n"
               "                    [--moe_helper PATH] [--torch_helper PATH]\n");
  return 2;
}

int Main(int argc, char** argv) {
  g_start = std::chrono::steady_clock::now();
  Runner r;
  bool inventory = false;
  std::string out;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "argus-runner: %s needs a value\n", a.c_str());
        std::exit(Usage());
      }
      return argv[++i];
    };
    if (a == "--inventory")
      inventory = true;
    else if (a == "--spec")
      r.spec_path = value();
    else if (a == "--out")
      out = value();
    else if (a == "--device")
      r.device_index = std::atoi(value().c_str());
    else if (a == "--cublas")
      r.cublas_path = value();
    else if (a == "--no-baseline")
      r.no_baseline = true;
    else if (a == "--sdpa_helper")
      r.sdpa_helper = value();
    else if (a == "--moe_helper")
      r.moe_helper = value();
    else if (a == "--torch_helper")
      r.torch_helper = value();
    else if (a == "--help" || a == "-h")
      return Usage(), 0;
    else {
      std::fprintf(stderr, "argus-runner: unknown argument %s\n", a.c_str());
      return Usage();
    }
  }
  if (!out.empty()) {
    g_out_fd = open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (g_out_fd < 0) {
      std::fprintf(stderr, "argus-runner: cannot write %s\n", out.c_str());
      return 2;
    }
  }
  InstallCrashHandler("");
  if (r.sdpa_helper.empty()) r.sdpa_helper = BesideSelf("argus-sdpa-baseline.py");
  if (r.moe_helper.empty()) r.moe_helper = BesideSelf("argus-moe-baseline.py");
  if (r.torch_helper.empty()) r.torch_helper = BesideSelf("argus-torch-baseline.py");
  if (inventory) return Inventory(r.cublas_path);
  if (r.spec_path.empty()) return Usage();
  r.Run();
}

}  // namespace
}  // namespace argus::runner

int main(int argc, char** argv) { return argus::runner::Main(argc, argv); }
