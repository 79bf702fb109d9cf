#include "gpu_worker/runner/runner_core.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "gpu_worker/runner/cuda_types.h"
#include "gpu_worker/runner/row_refs.h"

namespace argus::runner {

using nlohmann::json;

bool ParseDType(const std::string& s, DType* out) {
  if (s == "f32" || s == "float32")
    *out = DType::kF32;
  else if (s == "bf16" || s == "bfloat16")
    *out = DType::kBF16;
  else if (s == "f16" || s == "float16")
    *out = DType::kF16;
  else if (s == "i32" || s == "int32")
    *out = DType::kI32;
  else
    return false;
  return true;
}

const char* DTypeName(DType d) {
  switch (d) {
    case DType::kF32:
      return "f32";
    case DType::kBF16:
      return "bf16";
    case DType::kF16:
      return "f16";
    case DType::kI32:
      return "i32";
  }
  return "?";
}

int DTypeSize(DType d) { return (d == DType::kBF16 || d == DType::kF16) ? 2 : 4; }

uint16_t F32ToBf16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x40);  // NaN
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<uint16_t>(u >> 16);
}

float Bf16ToF32(uint16_t h) {
  uint32_t u = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

uint16_t F32ToF16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  const uint32_t sign = (u >> 16) & 0x8000u;
  int32_t exp = static_cast<int32_t>((u >> 23) & 0xff) - 127 + 15;
  uint32_t mant = u & 0x7fffffu;
  if (((u >> 23) & 0xff) == 0xff)
    return static_cast<uint16_t>(sign | 0x7c00u | (mant ? 0x200u : 0));
  if (exp >= 31) return static_cast<uint16_t>(sign | 0x7c00u);
  if (exp <= 0) {
    if (exp < -10) return static_cast<uint16_t>(sign);
    mant |= 0x800000u;
    const int shift = 14 - exp;
    uint32_t h = mant >> shift;
    const uint32_t rem = mant & ((1u << shift) - 1);
    const uint32_t half = 1u << (shift - 1);
    if (rem > half || (rem == half && (h & 1))) ++h;
    return static_cast<uint16_t>(sign | h);
  }
  uint32_t h = (static_cast<uint32_t>(exp) << 10) | (mant >> 13);
  const uint32_t rem = mant & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1))) ++h;
  return static_cast<uint16_t>(sign | h);
}

float F16ToF32(uint16_t h) {
  const uint32_t sign = (h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1f;
  uint32_t mant = h & 0x3ffu;
  uint32_t u;
  if (exp == 0) {
    if (mant == 0) {
      u = sign;
    } else {
      exp = 127 - 15 + 1;
      while ((mant & 0x400u) == 0) {
        mant <<= 1;
        --exp;
      }
      u = sign | (exp << 23) | ((mant & 0x3ffu) << 13);
    }
  } else if (exp == 31) {
    u = sign | 0x7f800000u | (mant << 13);
  } else {
    u = sign | ((exp - 15 + 127) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

int64_t TensorSpec::elements() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

const TensorSpec* RunSpec::Find(const std::string& name) const {
  for (const TensorSpec& t : tensors) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

namespace {

// "kernel": {...} of a launch.
void ParseKernel(const json& k, LaunchSpec* l) {
  l->artifact = k.at("artifact").get<std::string>();
  l->symbol = k.at("symbol").get<std::string>();
  l->format = k.value("format", "");
  if (l->format.empty()) {
    const std::string& a = l->artifact;
    l->format = a.size() > 4 && a.substr(a.size() - 4) == ".ptx" ? "ptx"
                : a.find(".hsaco") != std::string::npos          ? "hsaco"
                                                                 : "cubin";
  }
  if (k.contains("grid")) l->grid = k["grid"].get<std::array<int, 3>>();
  if (k.contains("block")) l->block = k["block"].get<std::array<int, 3>>();
  l->shared_bytes = k.value("shared_bytes", 0);
}

// "args": [...] of a launch, whose tensors `s` must declare.
bool ParseArgs(const json& args, const RunSpec& s, std::vector<ArgSpec>* out, std::string* error) {
  for (const json& a : args) {
    ArgSpec as;
    if (a.contains("tensor")) {
      as.kind = ArgSpec::Kind::kTensor;
      as.tensor = a["tensor"].get<std::string>();
      if (s.Find(as.tensor) == nullptr) {
        *error = "argument names unknown tensor " + as.tensor;
        return false;
      }
    } else if (a.contains("i32")) {
      as.kind = ArgSpec::Kind::kI32;
      as.i = a["i32"].get<int64_t>();
    } else if (a.contains("i64")) {
      as.kind = ArgSpec::Kind::kI64;
      as.i = a["i64"].get<int64_t>();
    } else if (a.contains("f32")) {
      as.kind = ArgSpec::Kind::kF32;
      as.f = a["f32"].get<double>();
    } else if (a.contains("tensormap")) {
      const json& t = a["tensormap"];
      as.kind = ArgSpec::Kind::kTensorMap;
      as.tensor = t.at("tensor").get<std::string>();
      as.box = t.at("box").get<std::array<int64_t, 2>>();
      as.swizzle = t.value("swizzle", "none");
      const TensorSpec* ts = s.Find(as.tensor);
      if (ts == nullptr || ts->shape.size() < 2) {
        *error = "tensormap names no tensor of rank 2 or more: " + as.tensor;
        return false;
      }
      if (as.box[0] < 1 || as.box[0] > 256 || as.box[1] < 1 || as.box[1] > 256 ||
          (as.swizzle != "128B" && as.swizzle != "none")) {
        *error = "tensormap box must be 1..256 per dim and swizzle 128B|none: " + a.dump();
        return false;
      }
    } else {
      *error = "argument " + a.dump() + " is none of tensor/i32/i64/f32/tensormap";
      return false;
    }
    out->push_back(as);
  }
  return true;
}

// Fills an attention check's K/V geometry (kv_len defaults to n, kv_heads to
// what K's size holds) and refuses one that does not fit its tensors.
bool AttentionShape(const RunSpec& s, CheckSpec* cs, std::string* error) {
  if (cs->kv_len <= 0) cs->kv_len = cs->n;
  const int64_t per_head = cs->kv_len * cs->k;
  if (cs->kv_heads <= 0 && per_head > 0) cs->kv_heads = s.Find(cs->b)->elements() / per_head;
  if (cs->m <= 0 || cs->n <= 0 || cs->k <= 0 || cs->kv_heads <= 0 || cs->batch <= 0 ||
      cs->m % cs->kv_heads != 0 || cs->m % cs->batch != 0 || cs->kv_heads % cs->batch != 0) {
    *error =
        "check.attention: m (batch*heads), n, k, kv_heads and batch must be positive, "
        "kv_heads and batch must divide m, and batch kv_heads";
    return false;
  }
  if (s.Find(cs->b)->elements() != cs->kv_heads * per_head ||
      s.Find(cs->d)->elements() != cs->kv_heads * per_head) {
    *error = "check.attention: K and V must hold kv_heads * kv_len * k elements";
    return false;
  }
  if (cs->scale < 0) cs->scale = 1.0 / std::sqrt(static_cast<double>(cs->k));
  return true;
}

}  // namespace

TensorMapGeometry TensorMapOf(const TensorSpec& t, const ArgSpec& a) {
  TensorMapGeometry g;
  g.elem_bytes = DTypeSize(t.dtype);
  g.cols = t.shape.empty() ? 0 : static_cast<uint64_t>(t.shape.back());
  g.rows = g.cols == 0 ? 0 : static_cast<uint64_t>(t.elements()) / g.cols;
  g.row_bytes = g.cols * static_cast<uint64_t>(g.elem_bytes);
  g.box_rows = static_cast<unsigned>(a.box[0]);
  g.box_cols = static_cast<unsigned>(a.box[1]);
  g.swizzle_128b = a.swizzle == "128B";
  if (g.elem_bytes == 4) {
    g.data_type = cuda::CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
    g.data_type_name = "CU_TENSOR_MAP_DATA_TYPE_FLOAT32";
  } else if (t.dtype == DType::kF16) {
    g.data_type = cuda::CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
    g.data_type_name = "CU_TENSOR_MAP_DATA_TYPE_FLOAT16";
  } else {
    g.data_type = cuda::CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
    g.data_type_name = "CU_TENSOR_MAP_DATA_TYPE_BFLOAT16";
  }
  return g;
}

bool ParseRunSpec(const json& j, RunSpec* s, std::string* error) {
  try {
    for (const json& t : j.at("tensors")) {
      TensorSpec ts;
      ts.name = t.at("name").get<std::string>();
      if (!ParseDType(t.at("dtype").get<std::string>(), &ts.dtype)) {
        *error = "tensor " + ts.name + ": unknown dtype " + t["dtype"].dump();
        return false;
      }
      ts.shape = t.at("shape").get<std::vector<int64_t>>();
      ts.init = t.value("init", "random");
      ts.low = t.value("low", -1.0);
      ts.high = t.value("high", 1.0);
      ts.scratch = t.value("scratch", false);
      if (ts.init != "random" && ts.init != "poison" && ts.init != "zero" && ts.init != "topk") {
        *error = "tensor " + ts.name + ": init must be random, poison, zero or topk";
        return false;
      }
      if (ts.init == "topk" && (ts.dtype != DType::kI32 || ts.shape.empty() ||
                                ts.high < static_cast<double>(ts.shape.back()))) {
        *error = "tensor " + ts.name + ": init topk needs i32 and high >= the last dim";
        return false;
      }
      if (ts.elements() <= 0) {
        *error = "tensor " + ts.name + ": empty shape";
        return false;
      }
      s->tensors.push_back(ts);
    }
    if (j.contains("launches")) {
      if (j.contains("kernel") || j.contains("args")) {
        *error = "a spec has either launches or kernel + args";
        return false;
      }
      for (const json& l : j["launches"]) {
        LaunchSpec ls;
        ParseKernel(l.at("kernel"), &ls);
        if (!ParseArgs(l.at("args"), *s, &ls.args, error)) {
          *error =
              "launch " + std::to_string(s->launches.size()) + " (" + ls.symbol + "): " + *error;
          return false;
        }
        s->launches.push_back(std::move(ls));
      }
      if (s->launches.empty()) {
        *error = "launches is empty";
        return false;
      }
    } else {
      LaunchSpec ls;
      ParseKernel(j.at("kernel"), &ls);
      if (!ParseArgs(j.at("args"), *s, &ls.args, error)) return false;
      s->launches.push_back(std::move(ls));
    }
    if (j.contains("check")) {
      const json& c = j["check"];
      CheckSpec& cs = s->check;
      cs.op = c.value("op", "none");
      cs.a = c.value("a", "");
      cs.b = c.value("b", "");
      cs.c = c.value("c", "");
      cs.d = c.value("d", "");
      cs.u = c.value("u", "");
      cs.ids = c.value("ids", "");
      cs.weights = c.value("weights", "");
      cs.eps = c.value("eps", cs.eps);
      cs.causal = c.value("causal", false);
      cs.kv_heads = c.value("kv_heads", int64_t{0});
      cs.kv_len = c.value("kv_len", int64_t{0});
      cs.batch = c.value("batch", int64_t{1});
      cs.scale = c.value("scale", -1.0);
      cs.m = c.value("m", int64_t{0});
      cs.n = c.value("n", int64_t{0});
      cs.k = c.value("k", int64_t{0});
      cs.b_layout = c.value("b_layout", "nk");
      cs.a_layout = c.value("a_layout", "mk");
      cs.full_max_macs = c.value("full_max_macs", cs.full_max_macs);
      cs.samples = c.value("samples", cs.samples);
      cs.rtol = c.value("rtol", -1.0);
      cs.atol = c.value("atol", -1.0);
      cs.e = c.value("e", "");
      if (cs.op != "gemm" && cs.op != "add" && cs.op != "none" && cs.op != "softmax" &&
          cs.op != "rmsnorm" && cs.op != "attention" && cs.op != "moe" && !IsRowRefOp(cs.op)) {
        *error =
            "check.op must be gemm, add, softmax, rmsnorm, attention, moe, layernorm, row_sum, "
            "mul, silu_mul, add_rmsnorm, rope or none";
        return false;
      }
      for (const std::string* name :
           {&cs.a, &cs.b, &cs.c, &cs.d, &cs.u, &cs.e, &cs.ids, &cs.weights}) {
        if (!name->empty() && s->Find(*name) == nullptr) {
          *error = "check names unknown tensor " + *name;
          return false;
        }
      }
      if (!cs.c.empty() && s->Find(cs.c)->scratch) {
        *error = "check.c names a scratch tensor (" + cs.c + "), which is never checked";
        return false;
      }
      if (IsRowRefOp(cs.op)) {
        if (cs.a.empty() || cs.c.empty()) {
          *error = "check." + cs.op + " needs a and c";
          return false;
        }
        if (std::string e = RowRefSizeError(cs, *s); !e.empty()) {
          *error = e;
          return false;
        }
      } else if (cs.op != "none" &&
                 (cs.a.empty() || (cs.b.empty() && cs.op != "softmax") || cs.c.empty() ||
                  (cs.d.empty() && (cs.op == "attention" || cs.op == "moe")) ||
                  ((cs.ids.empty() || cs.weights.empty() || cs.u.empty()) && cs.op == "moe"))) {
        *error = "check." + cs.op + " needs a, b and c";
        return false;
      }
      if (cs.op == "gemm") {
        const TensorSpec* ta = s->Find(cs.a);
        const TensorSpec* tb = s->Find(cs.b);
        const TensorSpec* tc = s->Find(cs.c);
        if (ta->elements() != cs.m * cs.k || tb->elements() != cs.k * cs.n ||
            tc->elements() != cs.m * cs.n) {
          *error = "check.gemm: tensor sizes do not match m, n, k";
          return false;
        }
      }
      if (cs.op == "moe") {
        const TensorSpec* ids = s->Find(cs.ids);
        const int64_t T = cs.m, D = cs.n, F = cs.k;
        cs.topk = ids->shape.empty() ? 0 : ids->shape.back();
        cs.experts = D * F > 0 ? s->Find(cs.b)->elements() / (D * F) : 0;
        if (T <= 0 || D <= 0 || F <= 0 || cs.topk <= 0 || cs.experts <= 0 ||
            ids->dtype != DType::kI32 || ids->elements() != T * cs.topk ||
            s->Find(cs.weights)->elements() != T * cs.topk || s->Find(cs.a)->elements() != T * D ||
            s->Find(cs.c)->elements() != T * D || s->Find(cs.b)->elements() != cs.experts * D * F ||
            s->Find(cs.u)->elements() != cs.experts * D * F ||
            s->Find(cs.d)->elements() != cs.experts * F * D) {
          *error =
              "check.moe: tensor sizes do not match m (tokens), n (hidden), k (ffn): want X "
              "[m,n], i32 ids and weights [m,topk], Wg and Wu [E,n,k], Wd [E,k,n], Y [m,n]";
          return false;
        }
      }
      if (cs.op == "attention" && !AttentionShape(*s, &cs, error)) return false;
      if (cs.op == "softmax" || cs.op == "rmsnorm" || cs.op == "attention") {
        int64_t want = cs.m * cs.n * (cs.op == "attention" ? cs.k : 1);
        if (s->Find(cs.a)->elements() != want || s->Find(cs.c)->elements() != want) {
          *error = "check." + cs.op + ": tensor sizes do not match m, n" +
                   (cs.op == "attention" ? ", k" : "");
          return false;
        }
      }
    }
    if (j.contains("baseline") && j["baseline"].is_string()) s->baseline = j["baseline"];
    if (j.contains("timing")) {
      s->warmup = j["timing"].value("warmup", s->warmup);
      s->reps = j["timing"].value("reps", s->reps);
      s->flush_l2 = j["timing"].value("flush_l2", s->flush_l2);
      s->budget_ms = j["timing"].value("budget_ms", s->budget_ms);
      s->rounds = j["timing"].value("rounds", s->rounds);
      if (s->rounds < 1 || s->rounds > 100) {
        *error = "timing.rounds: " + std::to_string(s->rounds) + " is not in 1..100";
        return false;
      }
    }
    s->seed = j.value("seed", uint64_t{1});
    s->timeout_s = j.value("timeout_s", 20.0);
    s->flops = j.value("flops", 0.0);
    s->bytes = j.value("bytes", 0.0);
    if (s->flops == 0 && s->check.op == "gemm") {
      s->flops = 2.0 * static_cast<double>(s->check.m) * s->check.n * s->check.k;
    }
    if (s->bytes == 0 && s->check.op != "none") {
      for (const std::string& name : {s->check.a, s->check.b, s->check.c, s->check.d, s->check.u}) {
        if (!name.empty()) s->bytes += static_cast<double>(s->Find(name)->bytes());
      }
    }
  } catch (const json::exception& e) {
    *error = std::string("bad spec: ") + e.what();
    return false;
  }
  return true;
}

namespace {

struct SplitMix64 {
  uint64_t state;
  uint64_t Next() {
    uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  double Uniform() { return static_cast<double>(Next() >> 11) * (1.0 / 9007199254740992.0); }
};

}  // namespace

uint32_t PoisonPattern(DType d, int* elem_size) {
  switch (d) {
    case DType::kF32:
      *elem_size = 4;
      return 0x7fc00000u;
    case DType::kBF16:
      *elem_size = 2;
      return 0x7fc0u;
    case DType::kF16:
      *elem_size = 2;
      return 0x7e00u;
    case DType::kI32:
      *elem_size = 4;
      return 0x7fffffffu;
  }
  *elem_size = 1;
  return 0xff;
}

HostTensor MakeHostTensor(const TensorSpec& spec, uint64_t seed, int index) {
  HostTensor t;
  t.spec = spec;
  const int64_t n = spec.elements();
  t.data.assign(static_cast<size_t>(spec.bytes()), 0);
  if (spec.init == "zero") return t;
  if (spec.init == "poison") {
    int es = 0;
    const uint32_t p = PoisonPattern(spec.dtype, &es);
    for (int64_t i = 0; i < n; ++i) std::memcpy(&t.data[i * es], &p, es);
    return t;
  }
  SplitMix64 rng{seed * 0x100000001b3ull + static_cast<uint64_t>(index) * 0x9e3779b97f4a7c15ull};
  if (spec.init == "topk") {
    // Each row: the first `width` of a seeded partial Fisher-Yates shuffle of
    // [0, high): distinct ids, as a router's top-k picks are.
    const int64_t width = spec.shape.back(), range = static_cast<int64_t>(spec.high);
    std::vector<int32_t> pool(static_cast<size_t>(range));
    for (int64_t r = 0; r < n / width; ++r) {
      for (int64_t e = 0; e < range; ++e) pool[e] = static_cast<int32_t>(e);
      for (int64_t j = 0; j < width; ++j) {
        const int64_t pick =
            j + static_cast<int64_t>(rng.Next() % static_cast<uint64_t>(range - j));
        std::swap(pool[j], pool[pick]);
        std::memcpy(&t.data[(r * width + j) * 4], &pool[j], 4);
      }
    }
    return t;
  }
  const double lo = spec.low, span = spec.high - spec.low;
  for (int64_t i = 0; i < n; ++i) {
    const float v = static_cast<float>(lo + span * rng.Uniform());
    switch (spec.dtype) {
      case DType::kF32:
        std::memcpy(&t.data[i * 4], &v, 4);
        break;
      case DType::kBF16: {
        const uint16_t h = F32ToBf16(v);
        std::memcpy(&t.data[i * 2], &h, 2);
        break;
      }
      case DType::kF16: {
        const uint16_t h = F32ToF16(v);
        std::memcpy(&t.data[i * 2], &h, 2);
        break;
      }
      case DType::kI32: {
        const int32_t x = static_cast<int32_t>(std::floor(v));
        std::memcpy(&t.data[i * 4], &x, 4);
        break;
      }
    }
  }
  return t;
}

double HostTensor::At(int64_t i) const {
  switch (spec.dtype) {
    case DType::kF32: {
      float f;
      std::memcpy(&f, &data[i * 4], 4);
      return f;
    }
    case DType::kBF16: {
      uint16_t h;
      std::memcpy(&h, &data[i * 2], 2);
      return Bf16ToF32(h);
    }
    case DType::kF16: {
      uint16_t h;
      std::memcpy(&h, &data[i * 2], 2);
      return F16ToF32(h);
    }
    case DType::kI32: {
      int32_t x;
      std::memcpy(&x, &data[i * 4], 4);
      return x;
    }
  }
  return 0;
}

json CheckResult::ToJson() const {
  json j = {{"passed", passed},
            {"mode", mode},
            {"checked", checked},
            {"mismatches", mismatches},
            {"nan_count", nan_count},
            {"max_abs_err", max_abs_err},
            {"max_rel_err", max_rel_err},
            {"rel_l2_err", rel_l2_err},
            {"rtol", rtol},
            {"atol", atol}};
  if (first_bad_index >= 0) {
    j["first_bad"] = {{"index", first_bad_index},
                      {"got", std::isnan(first_bad_got) ? json("nan") : json(first_bad_got)},
                      {"want", first_bad_want}};
  }
  if (!message.empty()) j["message"] = message;
  return j;
}

namespace {

const HostTensor* FindTensor(const std::vector<HostTensor>& ts, const std::string& name) {
  for (const HostTensor& t : ts) {
    if (t.spec.name == name) return &t;
  }
  return nullptr;
}

void DefaultTolerance(const std::string& op, DType out, double* rtol, double* atol) {
  switch (out) {
    case DType::kF32:
      // moe: the hidden activation may be rounded to bf16 before the down
      // projection (as every tensor-core MoE and PyTorch's bf16 loop do): one
      // bf16 rounding (2^-9) of each term, with room.
      *rtol = op == "moe" ? 5e-3 : op == "gemm" ? 2e-4 : op == "add" || op == "none" ? 1e-6 : 1e-4;
      *atol = op == "gemm" || op == "moe" ? 1e-5 : op == "add" || op == "none" ? 0 : 1e-6;
      break;
    case DType::kBF16:
      *rtol = 1e-2;
      *atol = 1e-3;
      break;
    case DType::kF16:
      *rtol = 2e-3;
      *atol = 1e-4;
      break;
    case DType::kI32:
      *rtol = 0;
      *atol = 0;
      break;
  }
}

}  // namespace

CheckResult CheckOutput(const CheckSpec& check, const std::vector<HostTensor>& tensors,
                        const HostTensor& out, uint64_t seed) {
  CheckResult r;
  DefaultTolerance(check.op, out.spec.dtype, &r.rtol, &r.atol);
  if (check.rtol >= 0) r.rtol = check.rtol;
  if (check.atol >= 0) r.atol = check.atol;
  const int64_t n = out.spec.elements();
  for (int64_t i = 0; i < n; ++i) {
    if (std::isnan(out.At(i))) {
      if (r.nan_count == 0) {
        r.first_bad_index = i;
        r.first_bad_got = std::numeric_limits<double>::quiet_NaN();
      }
      ++r.nan_count;
    }
  }
  double err2 = 0, ref2 = 0;
  auto compare = [&](int64_t idx, double want, double abssum) {
    const double got = out.At(idx);
    ++r.checked;
    const double err = std::fabs(got - want);
    if (std::isnan(got) || err > r.atol + r.rtol * abssum) {
      if (r.mismatches == 0 && r.nan_count == 0) {
        r.first_bad_index = idx;
        r.first_bad_got = got;
        r.first_bad_want = want;
      }
      ++r.mismatches;
    }
    if (!std::isnan(got)) {
      r.max_abs_err = std::max(r.max_abs_err, err);
      if (abssum > 0) r.max_rel_err = std::max(r.max_rel_err, err / abssum);
      err2 += err * err;
    }
    ref2 += want * want;
  };
  if (check.op == "none") {
    r.mode = "nan-only";
    r.checked = n;
  } else if (check.op == "add") {
    r.mode = "full";
    const HostTensor* a = FindTensor(tensors, check.a);
    const HostTensor* b = FindTensor(tensors, check.b);
    for (int64_t i = 0; i < n; ++i) {
      const double x = a->At(i), y = b->At(i);
      // The reference rounds like the device: one f32 addition.
      const double want = out.spec.dtype == DType::kF32
                              ? static_cast<double>(static_cast<float>(x) + static_cast<float>(y))
                              : x + y;
      compare(i, want, std::fabs(x) + std::fabs(y));
    }
  } else if (check.op == "gemm") {
    const HostTensor* a = FindTensor(tensors, check.a);
    const HostTensor* b = FindTensor(tensors, check.b);
    const int64_t M = check.m, N = check.n, K = check.k;
    const bool nk = check.b_layout != "kn";
    std::vector<double> ad(static_cast<size_t>(M * K)), bd(static_cast<size_t>(N * K));
    const bool km = check.a_layout == "km";
    for (int64_t i = 0; i < M; ++i)
      for (int64_t kk = 0; kk < K; ++kk) ad[i * K + kk] = a->At(km ? kk * M + i : i * K + kk);
    for (int64_t nn = 0; nn < N; ++nn)
      for (int64_t kk = 0; kk < K; ++kk) bd[nn * K + kk] = b->At(nk ? nn * K + kk : kk * N + nn);
    auto element = [&](int64_t i, int64_t j) {
      double s = 0, abss = 0;
      const double* ar = &ad[i * K];
      const double* br = &bd[j * K];
      for (int64_t kk = 0; kk < K; ++kk) {
        const double p = ar[kk] * br[kk];
        s += p;
        abss += std::fabs(p);
      }
      compare(i * N + j, s, abss);
    };
    if (M * N * K <= check.full_max_macs) {
      r.mode = "full";
      for (int64_t i = 0; i < M; ++i)
        for (int64_t j = 0; j < N; ++j) element(i, j);
    } else {
      r.mode = "sampled";
      element(0, 0);
      element(M - 1, N - 1);
      element(0, N - 1);
      element(M - 1, 0);
      SplitMix64 rng{seed ^ 0xc0ffee1234ull};
      for (int64_t s = 0; s < check.samples; ++s) {
        element(static_cast<int64_t>(rng.Next() % static_cast<uint64_t>(M)),
                static_cast<int64_t>(rng.Next() % static_cast<uint64_t>(N)));
      }
    }
  }
  if (check.op == "moe") {
    const HostTensor* x = FindTensor(tensors, check.a);
    const HostTensor* wg = FindTensor(tensors, check.b);
    const HostTensor* wu = FindTensor(tensors, check.u);
    const HostTensor* wd = FindTensor(tensors, check.d);
    const HostTensor* ids = FindTensor(tensors, check.ids);
    const HostTensor* wt = FindTensor(tensors, check.weights);
    const int64_t T = check.m, D = check.n, F = check.k, E = check.experts, K = check.topk;
    // One token's output row in f64; an expert id out of range is the input's
    // fault, reported rather than read out of bounds.
    auto token = [&](int64_t t) {
      std::vector<double> y(static_cast<size_t>(D), 0.0), absy(static_cast<size_t>(D), 0.0),
          h(static_cast<size_t>(F)), up(static_cast<size_t>(F));
      for (int64_t j = 0; j < K; ++j) {
        const int64_t e = static_cast<int64_t>(ids->At(t * K + j));
        if (e < 0 || e >= E) {
          r.message = "expert id " + std::to_string(e) + " of token " + std::to_string(t) +
                      " is outside [0, " + std::to_string(E) + ")";
          ++r.mismatches;
          return;
        }
        const double w = wt->At(t * K + j);
        std::fill(h.begin(), h.end(), 0.0);
        std::fill(up.begin(), up.end(), 0.0);
        for (int64_t d = 0; d < D; ++d) {
          const double xv = x->At(t * D + d);
          const int64_t row = (e * D + d) * F;
          for (int64_t f = 0; f < F; ++f) {
            h[f] += xv * wg->At(row + f);
            up[f] += xv * wu->At(row + f);
          }
        }
        for (int64_t f = 0; f < F; ++f) {
          const double hv = h[f] / (1.0 + std::exp(-h[f])) * up[f];  // SiLU(gate) * up
          const int64_t row = (e * F + f) * D;
          for (int64_t d = 0; d < D; ++d) {
            const double p = w * hv * wd->At(row + d);
            y[d] += p;
            absy[d] += std::fabs(p);
          }
        }
      }
      for (int64_t d = 0; d < D; ++d) compare(t * D + d, y[d], absy[d]);
    };
    if (T * K * D * F * 2 <= check.full_max_macs) {
      r.mode = "full";
      for (int64_t t = 0; t < T; ++t) token(t);
    } else {
      r.mode = "sampled";
      token(0);
      token(T - 1);
      SplitMix64 rng{seed ^ 0x40e0ull};
      for (int64_t done = 0; done < check.samples; done += D)
        token(static_cast<int64_t>(rng.Next() % static_cast<uint64_t>(T)));
    }
  }
  if (IsRowRefOp(check.op)) CheckRowRef(check, tensors, out, seed, compare, &r.mode);
  if (check.op == "softmax" || check.op == "rmsnorm" || check.op == "attention") {
    const HostTensor* a = FindTensor(tensors, check.a);
    const HostTensor* b = check.b.empty() ? nullptr : FindTensor(tensors, check.b);
    const HostTensor* v = check.d.empty() ? nullptr : FindTensor(tensors, check.d);
    const int64_t M = check.m, N = check.n, D = check.k;
    // Attention geometry as ParseRunSpec completes it (MHA, Skv = N, 1/sqrt(D) when unset).
    const int64_t SKV = check.kv_len > 0 ? check.kv_len : N;
    const int64_t G = check.kv_heads > 0 ? M / check.kv_heads : 1;
    const double scale = check.scale >= 0
                             ? check.scale
                             : 1.0 / std::sqrt(static_cast<double>(std::max<int64_t>(D, 1)));
    // One reference row: softmax/rmsnorm row r (N outputs), attention row
    // (bh, i) = r (D outputs).
    auto row = [&](int64_t rr) {
      if (check.op == "softmax") {
        double mx = -INFINITY, sum = 0;
        for (int64_t j = 0; j < N; ++j) mx = std::max(mx, a->At(rr * N + j));
        for (int64_t j = 0; j < N; ++j) sum += std::exp(a->At(rr * N + j) - mx);
        for (int64_t j = 0; j < N; ++j) {
          double want = std::exp(a->At(rr * N + j) - mx) / sum;
          compare(rr * N + j, want, want);
        }
      } else if (check.op == "rmsnorm") {
        double ss = 0;
        for (int64_t j = 0; j < N; ++j) ss += a->At(rr * N + j) * a->At(rr * N + j);
        double scale = 1.0 / std::sqrt(ss / static_cast<double>(N) + check.eps);
        for (int64_t j = 0; j < N; ++j) {
          double want = a->At(rr * N + j) * scale * b->At(j);
          compare(rr * N + j, want, std::fabs(want));
        }
      } else {
        // Query head bh reads kv head bh / G; causal keys end at i + (SKV - N).
        const int64_t bh = rr / N, i = rr % N;
        const int64_t base = bh * N * D, kvbase = bh / G * SKV * D;
        std::vector<double> s(static_cast<size_t>(SKV)), o(static_cast<size_t>(D), 0.0),
            abso(static_cast<size_t>(D), 0.0);
        double mx = -INFINITY, l = 0;
        const int64_t last = check.causal ? std::min(SKV - 1, i + SKV - N) : SKV - 1;
        for (int64_t j = 0; j <= last; ++j) {
          double dot = 0;
          for (int64_t d = 0; d < D; ++d)
            dot += a->At(base + i * D + d) * b->At(kvbase + j * D + d);
          s[j] = dot * scale;
          mx = std::max(mx, s[j]);
        }
        for (int64_t j = 0; j <= last; ++j) {
          double p = std::exp(s[j] - mx);
          l += p;
          for (int64_t d = 0; d < D; ++d) {
            o[d] += p * v->At(kvbase + j * D + d);
            abso[d] += p * std::fabs(v->At(kvbase + j * D + d));
          }
        }
        if (l == 0) l = 1;  // no key (causal, N > SKV): the row is 0
        for (int64_t d = 0; d < D; ++d) compare(base + i * D + d, o[d] / l, abso[d] / l);
      }
    };
    const int64_t rows = check.op == "attention" ? M * N : M;
    const int64_t work = check.op == "attention" ? M * N * SKV * D : M * N;
    if (work <= check.full_max_macs) {
      r.mode = "full";
      for (int64_t rr = 0; rr < rows; ++rr) row(rr);
    } else {
      r.mode = "sampled";
      row(0);
      row(rows - 1);
      const int64_t per = check.op == "attention" ? D : N;
      SplitMix64 rng{seed ^ 0x50f7a4ull};
      for (int64_t done = 0; done < check.samples; done += per)
        row(static_cast<int64_t>(rng.Next() % static_cast<uint64_t>(rows)));
    }
  }
  r.rel_l2_err = ref2 > 0 ? std::sqrt(err2 / ref2) : std::sqrt(err2);
  r.passed = r.nan_count == 0 && r.mismatches == 0;
  if (r.nan_count > 0) {
    r.message = std::to_string(r.nan_count) + " output elements are NaN (unwritten or invalid)";
  } else if (r.mismatches > 0 && r.message.empty()) {
    r.message = std::to_string(r.mismatches) + " of " + std::to_string(r.checked) +
                " checked elements are outside the tolerance";
  }
  return r;
}

json TimingStats::ToJson() const {
  return {{"reps", reps},     {"median_ms", median_ms}, {"min_ms", min_ms},
          {"max_ms", max_ms}, {"mean_ms", mean_ms},     {"p10_ms", p10_ms},
          {"p90_ms", p90_ms}, {"stdev_ms", stdev_ms}};
}

double Median(std::vector<double> v) { return ComputeStats(std::move(v)).median_ms; }

TimingStats ComputeStats(std::vector<double> ms) {
  TimingStats s;
  s.reps = static_cast<int>(ms.size());
  if (ms.empty()) return s;
  std::sort(ms.begin(), ms.end());
  auto q = [&](double p) {
    const double pos = p * static_cast<double>(ms.size() - 1);
    const size_t lo = static_cast<size_t>(pos);
    const size_t hi = std::min(lo + 1, ms.size() - 1);
    return ms[lo] + (ms[hi] - ms[lo]) * (pos - static_cast<double>(lo));
  };
  s.median_ms = q(0.5);
  s.p10_ms = q(0.1);
  s.p90_ms = q(0.9);
  s.min_ms = ms.front();
  s.max_ms = ms.back();
  double sum = 0;
  for (double v : ms) sum += v;
  s.mean_ms = sum / static_cast<double>(ms.size());
  double var = 0;
  for (double v : ms) var += (v - s.mean_ms) * (v - s.mean_ms);
  s.stdev_ms = std::sqrt(var / static_cast<double>(ms.size()));
  return s;
}

}  // namespace argus::runner

namespace argus::runner {

void FitTiming(double estimate_ms, double budget_ms, int* warmup, int* reps) {
  if (budget_ms <= 0 || estimate_ms <= 0) return;
  const int fit = static_cast<int>(budget_ms / estimate_ms);
  if (*warmup + *reps <= fit) return;
  // Keep about one warm-up per five reps, as the defaults do.
  *warmup = std::max(1, std::min(*warmup, fit / 6));
  *reps = std::max(3, std::min(*reps, fit - *warmup));
}

}  // namespace argus::runner
