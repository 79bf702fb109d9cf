// The interpreter's public entry points (dsl/interp.h); the machine itself
// is dsl/interp/.
#include "dsl/interp.h"

#include <random>

#include "absl/strings/str_cat.h"
#include "base/status.h"
#include "dsl/interp/machine.h"

namespace argus::dsl {

int64_t HostTensor::Cosize() const {
  int64_t m = 0;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == 0) return 0;
    m += (shape[i] - 1) * stride[i];
  }
  return m + 1;
}

double& HostTensor::At(std::initializer_list<int64_t> idx) {
  int64_t o = 0;
  size_t d = 0;
  for (int64_t i : idx) o += i * stride[d++];
  return data[o];
}
double HostTensor::At(std::initializer_list<int64_t> idx) const {
  return const_cast<HostTensor*>(this)->At(idx);
}

absl::StatusOr<std::vector<HostTensor>> MakeTensors(const ir::Function& k, const LaunchArgs& args) {
  ASSIGN_OR_RETURN(std::vector<int64_t> dims, interp::ResolveDims(k, args));
  std::vector<HostTensor> out;
  int64_t total = 0;
  for (const ir::TensorParam& tp : k.tensors) {
    HostTensor t;
    t.name = tp.name;
    t.dtype = tp.dtype;
    for (size_t d = 0; d < tp.shape.size(); ++d) {
      t.shape.push_back(interp::EvalSym(tp.shape[d], dims));
      t.stride.push_back(interp::EvalSym(tp.stride[d], dims));
    }
    int64_t n = t.Cosize();
    total += n;
    if (n < 0 || total > (int64_t{1} << 28)) {
      return absl::InvalidArgumentError(
          "tensors too large for the interpreter (2^28 elements in all)");
    }
    t.data.assign(n, 0.0);
    out.push_back(std::move(t));
  }
  return out;
}

void FillRandom(std::vector<HostTensor>* tensors, uint64_t seed) {
  std::mt19937_64 rng(seed);
  for (HostTensor& t : *tensors) {
    for (double& x : t.data) {
      uint64_t r = rng();
      if (IsFloat(t.dtype)) {
        x = RoundTo(t.dtype, static_cast<double>(r >> 11) * 0x1.0p-52 - 1.0);
      } else {
        x = static_cast<double>(r % (t.dtype == DType::kBool ? 2 : 16));
      }
    }
  }
}

absl::Status Run(const ir::Module& module, const ir::Function& kernel, const LaunchArgs& args,
                 std::vector<HostTensor>* tensors, RunStats* stats) {
  if (!kernel.is_kernel)
    return absl::InvalidArgumentError(absl::StrCat(kernel.name, " is not a kernel"));
  interp::Machine m(module, kernel, args);
  return m.Launch(tensors, stats);
}

}  // namespace argus::dsl
