#include "gpu_worker/runner/row_refs.h"

#include <cmath>

namespace argus::runner {

namespace {

const HostTensor* Named(const std::vector<HostTensor>& ts, const std::string& name) {
  for (const HostTensor& t : ts) {
    if (t.spec.name == name) return &t;
  }
  return nullptr;
}

// The rounding of a value stored in `d` (H of add_rmsnorm is normalized as
// stored, like a model that keeps its residual stream in bf16).
double Stored(double x, DType d) {
  switch (d) {
    case DType::kBF16:
      return Bf16ToF32(F32ToBf16(static_cast<float>(x)));
    case DType::kF16:
      return F16ToF32(F32ToF16(static_cast<float>(x)));
    case DType::kF32:
      return static_cast<float>(x);
    case DType::kI32:
      break;
  }
  return x;
}

struct Refs {
  const CheckSpec& c;
  const std::vector<HostTensor>& ts;
  const HostTensor& out;
  const std::function<void(int64_t, double, double)>& compare;
  const HostTensor* a = Named(ts, c.a);
  const HostTensor* b = c.b.empty() ? nullptr : Named(ts, c.b);
  const HostTensor* d = c.d.empty() ? nullptr : Named(ts, c.d);
  const HostTensor* u = c.u.empty() ? nullptr : Named(ts, c.u);
  bool second = !c.e.empty() && out.spec.name == c.e;

  // Rows of the check (elementwise: chunks of 1024 elements; rope: tokens).
  int64_t Rows() const {
    if (c.op == "mul" || c.op == "silu_mul") return (out.spec.elements() + 1023) / 1024;
    return c.m;
  }

  void Row(int64_t r) const {
    const int64_t N = c.n;
    if (c.op == "mul" || c.op == "silu_mul") {
      const int64_t end = std::min(out.spec.elements(), (r + 1) * 1024);
      for (int64_t i = r * 1024; i < end; ++i) {
        const double x = a->At(i), y = b->At(i);
        const double want = c.op == "mul" ? x * y : x / (1.0 + std::exp(-x)) * y;
        compare(i, want, std::fabs(want));
      }
    } else if (c.op == "row_sum") {
      double s = 0, abss = 0;
      for (int64_t j = 0; j < N; ++j) {
        s += a->At(r * N + j);
        abss += std::fabs(a->At(r * N + j));
      }
      compare(r, s, abss);
    } else if (c.op == "layernorm") {
      double mean = 0, var = 0;
      for (int64_t j = 0; j < N; ++j) mean += a->At(r * N + j);
      mean /= static_cast<double>(N);
      for (int64_t j = 0; j < N; ++j) var += std::pow(a->At(r * N + j) - mean, 2);
      const double rstd = 1.0 / std::sqrt(var / static_cast<double>(N) + c.eps);
      for (int64_t j = 0; j < N; ++j) {
        const double want = (a->At(r * N + j) - mean) * rstd * b->At(j) + d->At(j);
        compare(r * N + j, want,
                std::fabs((a->At(r * N + j) - mean) * rstd * b->At(j)) + std::fabs(d->At(j)));
      }
    } else if (c.op == "add_rmsnorm") {
      std::vector<double> h(static_cast<size_t>(N));
      double ss = 0;
      for (int64_t j = 0; j < N; ++j) {
        h[j] = a->At(r * N + j) + u->At(r * N + j);
        if (second)
          compare(r * N + j, h[j], std::fabs(a->At(r * N + j)) + std::fabs(u->At(r * N + j)));
        h[j] = Stored(h[j], out.spec.dtype);
        ss += h[j] * h[j];
      }
      if (second) return;
      const double scale = 1.0 / std::sqrt(ss / static_cast<double>(N) + c.eps);
      for (int64_t j = 0; j < N; ++j) {
        const double want = h[j] * scale * b->At(j);
        compare(r * N + j, want, std::fabs(want));
      }
    } else if (c.op == "rope") {
      // One token of Q (or K): heads of D, rotated with Cos/Sin [m, D/2].
      const int64_t D = N, half = D / 2;
      const HostTensor* x = second ? b : a;
      const int64_t heads = x->spec.elements() / (c.m * D);
      for (int64_t h = 0; h < heads; ++h) {
        const int64_t base = (r * heads + h) * D;
        for (int64_t i = 0; i < half; ++i) {
          const double co = u->At(r * half + i), si = d->At(r * half + i);
          const double x1 = x->At(base + i), x2 = x->At(base + half + i);
          const double mag = (std::fabs(x1) + std::fabs(x2)) * (std::fabs(co) + std::fabs(si));
          compare(base + i, x1 * co - x2 * si, mag);
          compare(base + half + i, x2 * co + x1 * si, mag);
        }
      }
    }
  }
};

}  // namespace

bool IsRowRefOp(const std::string& op) {
  return op == "layernorm" || op == "row_sum" || op == "mul" || op == "silu_mul" ||
         op == "add_rmsnorm" || op == "rope";
}

std::string RowRefSizeError(const CheckSpec& c, const RunSpec& s) {
  auto n = [&](const std::string& name) { return s.Find(name)->elements(); };
  const std::string who = "check." + c.op + ": ";
  if (c.b.empty() && c.op != "row_sum") return who + "needs b";
  if (c.op == "mul" || c.op == "silu_mul") {
    return n(c.a) == n(c.c) && n(c.b) == n(c.c) ? "" : who + "a, b and c differ in size";
  }
  if (c.m <= 0 || c.n <= 0) return who + "needs m and n";
  const int64_t mn = c.m * c.n;
  if (c.op == "row_sum") return n(c.a) == mn && n(c.c) == c.m ? "" : who + "want a [m,n], c [m]";
  if (c.op == "layernorm") {
    return !c.d.empty() && n(c.a) == mn && n(c.c) == mn && n(c.b) == c.n && n(c.d) == c.n
               ? ""
               : who + "want a, c [m,n], b (weight) and d (bias) [n]";
  }
  if (c.op == "add_rmsnorm") {
    return !c.u.empty() && !c.e.empty() && n(c.a) == mn && n(c.u) == mn && n(c.c) == mn &&
                   n(c.e) == mn && n(c.b) == c.n
               ? ""
               : who + "want a, u (residual), c (Y), e (H) [m,n] and b (weight) [n]";
  }
  // rope: m tokens, head dim n; Q/K [m, heads, n], Cos/Sin [m, n/2].
  const bool ok = !c.u.empty() && !c.d.empty() && !c.e.empty() && c.n % 2 == 0 &&
                  n(c.a) % mn == 0 && n(c.b) % mn == 0 && n(c.c) == n(c.a) && n(c.e) == n(c.b) &&
                  n(c.u) == mn / 2 && n(c.d) == mn / 2;
  return ok ? "" : who + "want a, c [m,HQ,n], b, e [m,HK,n], u (cos) and d (sin) [m,n/2], n even";
}

void CheckRowRef(const CheckSpec& check, const std::vector<HostTensor>& tensors,
                 const HostTensor& out, uint64_t seed,
                 const std::function<void(int64_t, double, double)>& compare, std::string* mode) {
  const Refs refs{check, tensors, out, compare};
  const int64_t rows = refs.Rows();
  const int64_t per_row = std::max<int64_t>(1, out.spec.elements() / std::max<int64_t>(rows, 1));
  if (out.spec.elements() <= check.full_max_macs) {
    *mode = "full";
    for (int64_t r = 0; r < rows; ++r) refs.Row(r);
    return;
  }
  *mode = "sampled";
  refs.Row(0);
  refs.Row(rows - 1);
  uint64_t x = seed ^ 0x70e5ull;
  for (int64_t done = 0; done < check.samples; done += per_row) {
    x += 0x9e3779b97f4a7c15ull;  // SplitMix64
    uint64_t z = x;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    refs.Row(static_cast<int64_t>((z ^ (z >> 31)) % static_cast<uint64_t>(rows)));
  }
}

}  // namespace argus::runner
