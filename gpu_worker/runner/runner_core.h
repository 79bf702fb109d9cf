// gpu_worker/runner/runner_core.h: the GPU-independent half of argus-runner.
//
// The run spec (JSON) and its parsing, host tensors with seeded random fill,
// dtype conversion (bf16/f16 <-> f32), the CPU reference checks (vector add,
// GEMM: full f64 reference for small shapes, an exactly computed random
// sample for large ones; NaN never passes) and timing statistics. Kept apart
// from the CUDA/HIP code so that it is unit-tested on machines with no GPU.
//
// Spec (all keys but kernel/tensors/args, or launches/tensors, optional):
//   {"kernel": {"artifact": "gemm.cubin", "format": "ptx|cubin|hsaco",
//               "symbol": "gemm_bf16_tn", "grid": [x,y,z], "block": [x,y,z],
//               "shared_bytes": 0},
//    "tensors": [{"name": "A", "dtype": "bf16|f16|f32|i32", "shape": [M, K],
//                 "init": "random|poison|zero|topk", "low": -1, "high": 1,
//                 "scratch": false}, ...],
//   ("topk", i32 only: each row of the last dim holds distinct ids drawn from
//    [0, high), e.g. a MoE's routed experts; "scratch": true — a buffer the
//    launches pass between them, never checked; poisoned ones are re-poisoned
//    before the checked run like outputs)
//    "args": [{"tensor": "A"}, {"i32": 4096}, {"i64": 1}, {"f32": 1.0},
//             {"tensormap": {"tensor": "A", "box": [128, 64], "swizzle": "128B"}}, ...],
//   (a tensormap of a rank-3+ tensor sees it as rows = all but the last dim)
//    or, for a pipeline of kernels (e.g. route, grouped GEMMs, reduce):
//    "launches": [{"kernel": {...as above...}, "args": [...]}, ...]
//   (run in order on one stream, all inside each timed repetition, the output
//    checked once after the last; every artifact is loaded once)
//    "check": {"op": "gemm", "a": "A", "b": "B", "c": "C", "m": M, "n": N, "k": K,
//              "a_layout": "mk|km", "b_layout": "nk|kn", "full_max_macs": 134217728, "samples":
//              4096, "rtol": 2e-4, "atol": 1e-5}
//           | {"op": "add", "a": "a", "b": "b", "c": "c"} | {"op": "none", "c": "C"}
//           | {"op": "softmax", "a": "X", "c": "Y", "m": rows, "n": cols}
//           | {"op": "rmsnorm", "a": "X", "b": "W", "c": "Y", "m": rows, "n": cols, "eps": 1e-6}
//           | {"op": "layernorm", "a": "X", "b": "W", "d": "Bias", "c": "Y", "m", "n", "eps"}
//           | {"op": "row_sum", "a": "X", "c": "Y", "m": rows, "n": cols}
//           | {"op": "mul" | "silu_mul", "a": "X", "b": "Y", "c": "Z"}  (silu(a) * b)
//           | {"op": "add_rmsnorm", "a": "X", "u": "Res", "b": "W", "c": "Y", "e": "H",
//              "m", "n", "eps"}  (H = X + Res, Y = rmsnorm(H as stored) * W)
//           | {"op": "rope", "a": "Q", "b": "K", "u": "Cos", "d": "Sin", "c": "QO", "e": "KO",
//              "m": tokens, "n": head_dim}  (rotate-half; Q/K [m, heads, n], Cos/Sin [m, n/2])
//             (row_refs.h; "e" names a second output, checked like "c")
//           | {"op": "attention", "a": "Q", "b": "K", "d": "V", "c": "O", "m": batch*heads,
//              "n": seq, "k": head_dim, "causal": false, "kv_heads": batch*kv_heads,
//              "kv_len": kv_seq, "batch": 1, "scale": 1/sqrt(k)}
//              (Q/O [m, n, k], K/V [kv_heads, kv_len, k]; query head h reads kv head
//               h / (m / kv_heads) (GQA/MQA; kv_heads defaults to K's size / (kv_len k),
//               kv_len to n); causal masks key j of query i when j > i + kv_len - n (the
//               bottom-right aligned mask of chunked prefill); a row with no key is 0;
//               batch only shapes the torch_sdpa baseline's [batch, heads, seq, dim]),
//           | {"op": "moe", "a": "X", "b": "Wg", "u": "Wu", "d": "Wd", "c": "Y",
//              "ids": "Ids", "weights": "Wt", "m": tokens, "n": hidden, "k": ffn}
//              (SwiGLU experts: Y[t] = sum_j Wt[t,j] (silu(X[t] Wg[e]) * X[t] Wu[e]) Wd[e],
//               e = Ids[t,j]; experts and top-k from the shapes of Wg [E,n,k] and
//               Ids [m,topk]; Wu [E,n,k], Wd [E,k,n]),
//   (row problems check every row when m*n*k <= full_max_macs, else `samples`
//    elements' worth of random rows plus the first and last, each in f64; moe
//    rows are tokens, whose work is 2*topk*n*k)
//    "baseline": "cublas" | "torch_sdpa" (attention: PyTorch SDPA through
//                the argus-sdpa-baseline.py helper, its fastest correct backend)
//                | "torch_moe_loop" (moe: PyTorch's loop over experts through the
//                argus-moe-baseline.py helper, on the kernel's own inputs, its
//                output checked against the moe reference; it also times a sort +
//                torch._grouped_mm pipeline and ranks by the faster)
//                | "torch" (the memory-bound checks: PyTorch eager and torch.compile
//                through argus-torch-baseline.py on the kernel's own inputs, and a
//                device-to-device copy of `bytes`)
//                | "none",
//    "timing": {"warmup": 10, "reps": 50, "flush_l2": true, "budget_ms": 0,
//               "rounds": 1},
//   (rounds > 1, cuBLAS baseline only: after the first timing of each, the kernel and
//    cuBLAS are timed rounds - 1 more times alternately in this process, the order
//    swapping every round, so that a drift of the clocks during the run falls on both;
//    the result's ratio is then the median of the rounds' ratios)
//   (budget_ms > 0: a first launch estimates the kernel's time and warm-up and
//    reps shrink, to at least 1 and 3, so that timing takes about budget_ms —
//    a slow first candidate of a big problem must not cost minutes)
//    "seed": 1, "timeout_s": 20, "flops": 0, "bytes": 0}
// Outputs ("init": "poison") are filled with NaN before every launch.
//
// Thread safety: plain values and pure functions.
#ifndef ARGUS_GPU_WORKER_RUNNER_RUNNER_CORE_H_
#define ARGUS_GPU_WORKER_RUNNER_RUNNER_CORE_H_

#include <array>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace argus::runner {

enum class DType { kF32, kBF16, kF16, kI32 };
bool ParseDType(const std::string& s, DType* out);
const char* DTypeName(DType d);
int DTypeSize(DType d);

uint16_t F32ToBf16(float f);  // round to nearest even; NaN stays NaN
float Bf16ToF32(uint16_t h);
uint16_t F32ToF16(float f);
float F16ToF32(uint16_t h);

struct TensorSpec {
  std::string name;
  DType dtype = DType::kF32;
  std::vector<int64_t> shape;
  std::string init = "random";  // random | poison | zero | topk
  double low = -1.0, high = 1.0;
  bool scratch = false;  // passed between launches; not checked
  int64_t elements() const;
  int64_t bytes() const { return elements() * DTypeSize(dtype); }
};

struct ArgSpec {
  enum class Kind { kTensor, kI32, kI64, kF32, kTensorMap } kind = Kind::kTensor;
  std::string tensor;
  // kTensorMap: a pointer to a TMA tensor map of `tensor` (rank 2) in device
  // memory, boxes of box[0] rows x box[1] cols, swizzle "128B" | "none".
  std::array<int64_t, 2> box{0, 0};
  std::string swizzle = "none";
  int64_t i = 0;
  double f = 0;
};

struct CheckSpec {
  std::string op = "none";  // gemm | add | softmax | rmsnorm | attention | moe | none, row_refs.h's
  std::string a, b, c, d;
  std::string e;                  // a second checked output (add_rmsnorm: H; rope: K's)
  std::string u;                  // moe: the up projection (b is the gate, d the down one)
  std::string ids, weights;       // moe: routed expert ids [m, topk] (i32), their weights
  int64_t experts = 0, topk = 0;  // moe: from the shapes of b and ids
  int64_t m = 0, n = 0, k = 0;
  std::string b_layout = "nk";  // B stored [N, K] ("nk") or [K, N] ("kn")
  std::string a_layout = "mk";  // A stored [M, K] ("mk") or [K, M] ("km")
  int64_t full_max_macs = int64_t{1} << 27;
  int64_t samples = 4096;
  double rtol = -1, atol = -1;  // < 0: the output dtype's default
  double eps = 1e-6;            // rmsnorm
  bool causal = false;          // attention
  int64_t kv_heads = 0;         // attention: batch * KV heads (m / kv_heads query heads each)
  int64_t kv_len = 0;           // attention: keys per head (Skv)
  int64_t batch = 1;            // attention: the baseline's batch (m / batch heads each)
  double scale = -1;            // attention: softmax scale; < 0: 1 / sqrt(k)
};

// One kernel launch: its artifact, entry, geometry and arguments.
struct LaunchSpec {
  std::string artifact, format, symbol;
  std::array<int, 3> grid{1, 1, 1}, block{1, 1, 1};
  int shared_bytes = 0;
  std::vector<ArgSpec> args;
};

struct RunSpec {
  std::vector<LaunchSpec> launches;  // at least one; run in order
  std::vector<TensorSpec> tensors;
  CheckSpec check;
  std::string baseline = "none";
  int warmup = 10, reps = 50;
  double budget_ms = 0;  // > 0: shrink warmup/reps to fit (see "timing" above)
  bool flush_l2 = true;
  int rounds = 1;  // > 1: ours and cuBLAS timed alternately (see "timing" above)
  uint64_t seed = 1;
  double timeout_s = 20;
  double flops = 0, bytes = 0;  // 0: derived from the check (gemm: 2MNK; add: 12 n)
  const TensorSpec* Find(const std::string& name) const;
};

// The TMA tensor map of argument `a` (kTensorMap) over tensor `t`, as the
// runner encodes it — and `argus export`'s launchers, which take these numbers
// so that an exported kernel gets the maps it was measured with: 2-D, the
// tensor seen as rows of its last dim (a rank-3+ [E, K, N] as one [E*K, N]
// matrix), boxes of box[0] rows x box[1] cols, interleave none, L2 promotion
// 256B, no OOB fill.
struct TensorMapGeometry {
  uint64_t rows = 0, cols = 0, row_bytes = 0;
  unsigned box_rows = 0, box_cols = 0;
  int elem_bytes = 0;
  // CUtensorMapDataType (cuda.h): FLOAT32 for every 4-byte type (i32 too),
  // FLOAT16, BFLOAT16; data_type_name is its cuda.h name.
  int data_type = 0;
  const char* data_type_name = "";
  bool swizzle_128b = false;
};
TensorMapGeometry TensorMapOf(const TensorSpec& t, const ArgSpec& a);

// Parses a spec; on error returns false with a message.
bool ParseRunSpec(const nlohmann::json& j, RunSpec* spec, std::string* error);

// Host copy of one tensor, in its device representation.
struct HostTensor {
  TensorSpec spec;
  std::vector<uint8_t> data;
  double At(int64_t i) const;  // element i as a double
};

// Fills per the spec ("random": uniform in [low, high] from a SplitMix64
// stream seeded by (seed, tensor index); "poison": NaN; "zero").
HostTensor MakeHostTensor(const TensorSpec& spec, uint64_t seed, int index);
uint32_t PoisonPattern(DType d, int* elem_size);

struct CheckResult {
  bool passed = false;
  std::string mode;  // full | sampled | nan-only
  int64_t checked = 0, mismatches = 0, nan_count = 0;
  double max_abs_err = 0, max_rel_err = 0, rel_l2_err = 0;
  double rtol = 0, atol = 0;
  int64_t first_bad_index = -1;
  double first_bad_got = 0, first_bad_want = 0;
  std::string message;
  nlohmann::json ToJson() const;
};

// Checks output `out` against the reference that `check` names, computed
// from the inputs in `tensors` (which includes `out`'s spec by name).
CheckResult CheckOutput(const CheckSpec& check, const std::vector<HostTensor>& tensors,
                        const HostTensor& out, uint64_t seed);

struct TimingStats {
  int reps = 0;
  double median_ms = 0, min_ms = 0, max_ms = 0, mean_ms = 0, p10_ms = 0, p90_ms = 0, stdev_ms = 0;
  nlohmann::json ToJson() const;
};
TimingStats ComputeStats(std::vector<double> ms);
// The median of `v` (the mean of the two middle values when their count is
// even); 0 for none.
double Median(std::vector<double> v);

// Warm-up and reps for a kernel whose one launch took `estimate_ms`, within
// `budget_ms` (<= 0: the spec's own); at least 1 warm-up and 3 reps.
void FitTiming(double estimate_ms, double budget_ms, int* warmup, int* reps);

}  // namespace argus::runner

#endif  // ARGUS_GPU_WORKER_RUNNER_RUNNER_CORE_H_
