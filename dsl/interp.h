// dsl/interp.h: the reference interpreter — runs a kernel on the CPU with
// exact SIMT semantics.
//
// Every block runs all its threads as resumable contexts over a flat bytecode
// compiled from the IR (slots pre-resolved, no name lookups). A thread runs
// until it reaches a synchronising op; warp collectives (shuffles, warp
// reductions, mma) execute once every lane of the warp has reached the same
// one, barriers and block reductions once every thread of the block has.
// Divergent collectives, barriers some threads never reach, out-of-bounds
// accesses, integer division by zero and runaway loops are Status errors
// naming the source location, the block and the thread. Shared memory and
// local arrays start as garbage (NaN / 0x5A5A5A5A); async copies land only at
// the wait_group that covers them. MMA ops use the instructions' real per-lane
// fragment layouts (mma.h); floats round to nearest even (types.h).
//
// Thread safety: Run() is reentrant; it mutates only the tensors it is given.
#ifndef ARGUS_DSL_INTERP_H_
#define ARGUS_DSL_INTERP_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "dsl/ir.h"

namespace argus::dsl {

// A kernel tensor argument in host memory. `data` has Cosize() elements, each
// already representable in `dtype`.
struct HostTensor {
  std::string name;
  DType dtype = DType::kF32;
  std::vector<int64_t> shape;
  std::vector<int64_t> stride;
  std::vector<double> data;
  int64_t Cosize() const;
  // Element at a coordinate.
  double& At(std::initializer_list<int64_t> idx);
  double At(std::initializer_list<int64_t> idx) const;
};

struct LaunchArgs {
  std::map<std::string, int64_t> dims;
  std::map<std::string, double> scalars;
  int64_t max_instructions = int64_t{1} << 33;  // runaway-loop guard
};

struct RunStats {
  int64_t blocks = 0;
  int64_t instructions = 0;
  double seconds = 0;
};

// Allocates the kernel's tensors (zeroed) for the given dims.
absl::StatusOr<std::vector<HostTensor>> MakeTensors(const ir::Function& kernel,
                                                    const LaunchArgs& args);
// Fills every tensor with uniform values in [-1, 1) (floats, rounded to the
// dtype) or [0, 16) (ints), deterministically from `seed`.
void FillRandom(std::vector<HostTensor>* tensors, uint64_t seed);

absl::Status Run(const ir::Module& module, const ir::Function& kernel, const LaunchArgs& args,
                 std::vector<HostTensor>* tensors, RunStats* stats = nullptr);

}  // namespace argus::dsl

#endif  // ARGUS_DSL_INTERP_H_
