// gpu_worker/runner/row_refs.h: the runner's f64 references of the
// memory-bound checks beyond add/softmax/rmsnorm: layernorm, row_sum, the
// elementwise mul and silu_mul, and the fusions add_rmsnorm (two outputs: the
// residual sum H and the normalized Y) and rope (rotary embedding of Q and K,
// two outputs). Each compares every element of a row it checks through the
// caller's `compare` (index, reference, the magnitude its tolerance scales
// with); large problems are checked on sampled rows.
//
// Thread safety: pure functions.
#ifndef ARGUS_GPU_WORKER_RUNNER_ROW_REFS_H_
#define ARGUS_GPU_WORKER_RUNNER_ROW_REFS_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "gpu_worker/runner/runner_core.h"

namespace argus::runner {

// True for the check ops this file handles.
bool IsRowRefOp(const std::string& op);

// The element count `check` expects of each tensor it names (empty when the
// sizes match m, n and the tensors' shapes), else an error message.
std::string RowRefSizeError(const CheckSpec& check, const RunSpec& spec);

// Compares output `out` (check.c, or check.e for the second output of the
// fusions) with its reference; sets *mode to "full" or "sampled".
void CheckRowRef(const CheckSpec& check, const std::vector<HostTensor>& tensors,
                 const HostTensor& out, uint64_t seed,
                 const std::function<void(int64_t, double, double)>& compare, std::string* mode);

}  // namespace argus::runner

#endif  // ARGUS_GPU_WORKER_RUNNER_ROW_REFS_H_
