// clients/cli/export_text.h: the text files `argus export` writes beside a
// kernel's image — the C++ launcher header (CUDA driver API, or HIP) and the
// Python snippet (torch + ctypes) — for one kernel and for a pipeline of
// launches over one set of tensors (KB templates with "pipeline").
//
// A pipeline is described by the worker's own runner spec
// (gpu_worker/candidate.h PrepareGpuRun): "tensors" (name, dtype, shape,
// "scratch": true for the buffers between launches) and "launches" (each
// {"kernel": {symbol, grid, block, shared_bytes}, "args": [{"tensor": X} |
// {"i32": v} | {"f32": v} | {"i64": v} | {"tensormap": {...}}]}), so what is
// exported launches exactly what was measured.
//
// Thread safety: pure functions.
#ifndef ARGUS_CLIENTS_CLI_EXPORT_TEXT_H_
#define ARGUS_CLIENTS_CLI_EXPORT_TEXT_H_

#include <string>
#include <vector>

#include "nlohmann/json.hpp"

namespace argus::cli {

// One kernel: `meta` is its export metadata ("params", "shared_bytes").
std::string LauncherHeader(const std::string& kernel, const nlohmann::json& meta,
                           const std::string& file);
std::string TorchSnippet(const std::string& kernel, const std::string& file,
                         const nlohmann::json& meta);

// A pipeline: `spec` is the runner spec above, `images[i]` the image file of
// launch i and `params[i]` its metadata's "params".
struct PipelineText {
  nlohmann::json spec;
  std::vector<std::string> images;
  std::vector<nlohmann::json> params;
};
std::string PipelineLauncherHeader(const PipelineText& p);
std::string PipelineTorchSnippet(const PipelineText& p);

// The scratch tensors of a runner spec: [{"name", "dtype", "shape", "bytes"}].
nlohmann::json ScratchTensors(const nlohmann::json& spec);

}  // namespace argus::cli

#endif  // ARGUS_CLIENTS_CLI_EXPORT_TEXT_H_
