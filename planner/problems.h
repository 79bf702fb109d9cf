// planner/problems.h: the problem catalog — what a tune job can ask for.
//
// Families: gemm (trans_a / trans_b, f32/f16/bf16/fp8), batched_gemm,
// attention (forward, causal or not, GQA via HKV < H, head dims 64/128), moe
// (fused top-k expert MLP over given routing), elementwise (add, mul,
// silu_mul), reduction (row sum), softmax, rmsnorm, layernorm. For each: the
// shape dims and their order on --shape, the allowed dtypes and options, the
// FLOP and byte counts, the baseline a worker times next to the candidate, the
// substitutions its KB templates take, and its reference semantics — the
// exact result, computed in double on the host from the inputs, that a
// candidate's output is checked against.
//
// Tensor names are fixed per family (gemm: A[M,K] B[K,N] -> C[M,N]; see
// docs/planner.md); templates must use them.
//
// Thread safety: pure functions over immutable tables.
#ifndef ARGUS_PLANNER_PROBLEMS_H_
#define ARGUS_PLANNER_PROBLEMS_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "argus/v1/common.pb.h"
#include "dsl/interp.h"
#include "nlohmann/json.hpp"

namespace argus::planner {

struct Family {
  std::string name, summary;
  std::vector<std::string> dims;      // positional order of --shape AxBxC
  std::vector<std::string> optional;  // dims that default from others (HKV = H)
  std::vector<std::string> dtypes;
  std::map<std::string, std::vector<std::string>> options;  // name -> allowed values
  std::vector<std::string> outputs;                         // output tensor names
  std::map<std::string, int64_t> interp_shape;              // a small shape for the interpreter
};

const std::vector<Family>& Families();
const Family* FindFamily(const std::string& name);

struct Problem {
  std::string family;
  std::map<std::string, int64_t> shape;
  std::string dtype;
  std::map<std::string, std::string> options;
};

// Validates and completes a problem (defaults for optional dims and options).
absl::StatusOr<Problem> MakeProblem(const std::string& family,
                                    const std::map<std::string, int64_t>& shape,
                                    const std::string& dtype,
                                    const std::map<std::string, std::string>& options);
// Parses "4096x4096x4096" (the family's dim order) or "M=64,N=64,K=64".
absl::StatusOr<std::map<std::string, int64_t>> ParseShape(const std::string& family,
                                                          const std::string& text);
absl::StatusOr<Problem> FromProto(const v1::Problem& p);
v1::Problem ToProto(const Problem& p);
nlohmann::json ToJson(const Problem& p);
absl::StatusOr<Problem> FromJson(const nlohmann::json& j);
std::string Describe(const Problem& p);  // "gemm M=64 N=64 K=64 bf16 trans_b=1"

double Flops(const Problem& p);
double Bytes(const Problem& p);
// The output check of a candidate payload (gpu_worker/candidate_schema.h): a
// runner_core reference op where one computes this problem's semantics
// (gemm without trans_a, softmax, rmsnorm, elementwise add, attention
// without GQA; f32/f16/bf16), else {"op": "problem"} — the reference below,
// which only the planner's interpreter worker has.
nlohmann::json RunnerCheck(const Problem& p);
// The vendor (or KB) baseline a worker of `target` times next to a candidate:
// cublas / hipblaslt for GEMMs, torch_sdpa for attention (no GQA) and
// torch_moe_loop for moe (f32/f16/bf16) on sm_90a,
// else the family's KB baseline template.
std::string BaselineName(const Problem& p, const std::string& target);

// Names a KB expression may use: the shape dims and the numeric options.
std::map<std::string, int64_t> ExprEnv(const Problem& p);
// Values for a template's ${NAME} placeholders.
std::map<std::string, std::string> SourceVars(const Problem& p);

// Gives inputs the problem needs valid values (e.g. expert ids in [0, E));
// call after dsl::FillRandom.
absl::Status PrepareInputs(const Problem& p, std::vector<dsl::HostTensor>* tensors, uint64_t seed);
// Computes the expected output tensors from the inputs in `tensors`.
absl::StatusOr<std::vector<dsl::HostTensor>> Reference(const Problem& p,
                                                       const std::vector<dsl::HostTensor>& tensors);
// max |got - want| allowed is atol + rtol * |want|.
struct Tolerance {
  double atol, rtol;
};
Tolerance ToleranceFor(const Problem& p);

}  // namespace argus::planner

#endif  // ARGUS_PLANNER_PROBLEMS_H_
