// clients/cli/export_text.h: the text files `argus export` writes beside a
// kernel's images — the C++ launcher header (CUDA driver API, or HIP) and the
// Python snippet (torch + ctypes).
//
// One kernel is a pipeline of one launch: both are written from the worker's
// own runner spec (gpu_worker/candidate.h PrepareGpuRun, parsed by
// runner_core.h ParseRunSpec): the tensors (with "scratch" buffers between
// launches) and each launch's kernel (symbol, grid, block, shared_bytes) and
// arguments (tensors, scalars, TMA tensor maps), so what is exported launches
// exactly what was measured — tensor maps encoded with the runner's own
// geometry (TensorMapOf), dynamic shared memory above 48 KiB allowed.
// MakeLaunchPlan refuses what the launchers cannot express, naming the
// launch; the text functions then cannot fail.
//
// Thread safety: pure functions.
#ifndef ARGUS_CLIENTS_CLI_EXPORT_TEXT_H_
#define ARGUS_CLIENTS_CLI_EXPORT_TEXT_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "gpu_worker/runner/runner_core.h"
#include "nlohmann/json.hpp"

namespace argus::cli {

struct LaunchPlan {
  runner::RunSpec run;              // the parsed runner spec
  std::vector<std::string> images;  // the image file of launch i (beside the header)
};

// `spec`: a runner spec with "tensors" and "launches" (or one launch's
// "kernel" and "args"); `images[i]` the image file of launch i and
// `params[i]` the number of parameters its kernel declares (its metadata's).
// Errors name the launch: `launch 1 (moe_place): ...`.
absl::StatusOr<LaunchPlan> MakeLaunchPlan(const nlohmann::json& spec,
                                          const std::vector<std::string>& images,
                                          const std::vector<int>& params);

// `argus_kernel.h`: ArgusKernel_<symbol> per kernel and ArgusPipeline
// (Tensors, kScratch, Load, EncodeTensorMaps, Run).
std::string LauncherHeader(const LaunchPlan& p);
// `launch_torch.py`: Kernel<i> per launch and Pipeline (scratch, tensor maps,
// the launches in order).
std::string TorchSnippet(const LaunchPlan& p);

// The scratch tensors: [{"name", "dtype", "shape", "bytes"}].
nlohmann::json ScratchTensors(const LaunchPlan& p);

// A kernel whose launch is unknown (no source to derive it from): only
// ArgusKernel_<kernel> / Kernel, to which the caller passes grid, block and
// every parameter. `meta` is its export metadata ("params", "shared_bytes").
std::string KernelOnlyHeader(const std::string& kernel, const nlohmann::json& meta,
                             const std::string& file);
std::string KernelOnlyTorchSnippet(const std::string& kernel, const std::string& file,
                                   const nlohmann::json& meta);

}  // namespace argus::cli

#endif  // ARGUS_CLIENTS_CLI_EXPORT_TEXT_H_
