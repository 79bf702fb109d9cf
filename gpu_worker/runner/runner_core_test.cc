#include "gpu_worker/runner/runner_core.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>

namespace argus::runner {
namespace {

using nlohmann::json;

TEST_CASE("bf16 and f16 conversions round to nearest even", "[runner]") {
  CHECK(F32ToBf16(1.0f) == 0x3f80);
  CHECK(Bf16ToF32(0x3f80) == 1.0f);
  CHECK(F32ToBf16(1.00390625f) == 0x3f80);  // halfway: to even
  CHECK(F32ToBf16(1.01171875f) == 0x3f82);  // halfway: to even (up)
  CHECK(std::isnan(Bf16ToF32(F32ToBf16(NAN))));
  CHECK(F32ToF16(1.0f) == 0x3c00);
  CHECK(F16ToF32(0x3c00) == 1.0f);
  CHECK(F16ToF32(F32ToF16(-2.5f)) == -2.5f);
  CHECK(F16ToF32(F32ToF16(6.1035156e-05f)) == 6.1035156e-05f);
}

json GemmSpec(int m, int n, int k) {
  return {
      {"kernel",
       {{"artifact", "g.cubin"}, {"symbol", "g"}, {"grid", {1, 1, 1}}, {"block", {128, 1, 1}}}},
      {"tensors",
       {{{"name", "A"}, {"dtype", "bf16"}, {"shape", {m, k}}},
        {{"name", "B"}, {"dtype", "bf16"}, {"shape", {n, k}}},
        {{"name", "C"}, {"dtype", "f32"}, {"shape", {m, n}}, {"init", "poison"}}}},
      {"args", {{{"tensor", "A"}}, {{"tensor", "B"}}, {{"tensor", "C"}}, {{"i32", m}}}},
      {"check", {{"op", "gemm"}, {"a", "A"}, {"b", "B"}, {"c", "C"}, {"m", m}, {"n", n}, {"k", k}}},
      {"baseline", "cublas"},
      {"seed", 7}};
}

// A host-side GEMM in f32 with the device's data, as a kernel would compute.
HostTensor HostGemm(const RunSpec& s, const std::vector<HostTensor>& t) {
  HostTensor c = MakeHostTensor(s.tensors[2], s.seed, 2);
  const int64_t M = s.check.m, N = s.check.n, K = s.check.k;
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      float acc = 0;
      for (int64_t kk = 0; kk < K; ++kk) {
        acc += static_cast<float>(t[0].At(i * K + kk)) * static_cast<float>(t[1].At(j * K + kk));
      }
      std::memcpy(&c.data[(i * N + j) * 4], &acc, 4);
    }
  return c;
}

TEST_CASE("GEMM check passes a right answer, fails wrong and NaN", "[runner]") {
  RunSpec s;
  std::string err;
  REQUIRE(ParseRunSpec(GemmSpec(64, 32, 128), &s, &err));
  CHECK(s.flops == 2.0 * 64 * 32 * 128);
  CHECK(s.launches[0].format == "cubin");
  std::vector<HostTensor> t;
  for (int i = 0; i < 3; ++i) t.push_back(MakeHostTensor(s.tensors[i], s.seed, i));
  CHECK(std::isnan(t[2].At(0)));  // poisoned
  HostTensor c = HostGemm(s, t);
  CheckResult ok = CheckOutput(s.check, t, c, s.seed);
  CHECK(ok.passed);
  CHECK(ok.mode == "full");
  CHECK(ok.checked == 64 * 32);
  CHECK(ok.rel_l2_err < 1e-5);

  HostTensor bad = c;
  float v = 0.5f;
  std::memcpy(&bad.data[(5 * 32 + 7) * 4], &v, 4);
  CheckResult wrong = CheckOutput(s.check, t, bad, s.seed);
  CHECK_FALSE(wrong.passed);
  CHECK(wrong.first_bad_index == 5 * 32 + 7);

  HostTensor nan = c;
  float q = NAN;
  std::memcpy(&nan.data[100 * 4], &q, 4);
  CheckResult n = CheckOutput(s.check, t, nan, s.seed);
  CHECK_FALSE(n.passed);
  CHECK(n.nan_count == 1);

  s.check.full_max_macs = 1;  // force sampling
  s.check.samples = 100;
  CheckResult sampled = CheckOutput(s.check, t, c, s.seed);
  CHECK(sampled.passed);
  CHECK(sampled.mode == "sampled");
  CHECK(sampled.checked == 104);
  CHECK_FALSE(CheckOutput(s.check, t, nan, s.seed).passed);  // NaN anywhere fails
}

TEST_CASE("GEMM check reads A stored [K, M] when a_layout is km", "[runner]") {
  RunSpec s;
  std::string err;
  REQUIRE(ParseRunSpec(GemmSpec(64, 32, 128), &s, &err));
  std::vector<HostTensor> t;
  for (int i = 0; i < 3; ++i) t.push_back(MakeHostTensor(s.tensors[i], s.seed, i));
  HostTensor c = HostGemm(s, t);  // C = A B^T with A [M, K]
  // The same A stored transposed: element (i, k) at k * M + i.
  const int64_t M = s.check.m, K = s.check.k;
  HostTensor at = t[0];
  const int es = DTypeSize(at.spec.dtype);
  for (int64_t i = 0; i < M; ++i)
    for (int64_t k = 0; k < K; ++k)
      std::memcpy(&at.data[(k * M + i) * es], &t[0].data[(i * K + k) * es], es);
  std::vector<HostTensor> tt = {at, t[1], t[2]};
  CHECK_FALSE(CheckOutput(s.check, tt, c, s.seed).passed);
  s.check.a_layout = "km";
  CHECK(CheckOutput(s.check, tt, c, s.seed).passed);
  CHECK_FALSE(CheckOutput(s.check, t, c, s.seed).passed);
}

TEST_CASE("Random fills depend on the seed and tensor, not on luck", "[runner]") {
  TensorSpec ts;
  ts.name = std::string(1, 'x');  // (GCC 12 -Wrestrict false positive on = "x")
  ts.dtype = DType::kF32;
  ts.shape = {1000};
  HostTensor a = MakeHostTensor(ts, 1, 0), b = MakeHostTensor(ts, 1, 0),
             c = MakeHostTensor(ts, 2, 0);
  CHECK(a.data == b.data);
  CHECK(a.data != c.data);
  double lo = 1, hi = -1;
  for (int i = 0; i < 1000; ++i) {
    lo = std::min(lo, a.At(i));
    hi = std::max(hi, a.At(i));
  }
  CHECK(lo >= -1.0);
  CHECK(hi <= 1.0);
  CHECK(hi - lo > 1.5);
}

TEST_CASE("Bad specs are refused with a message", "[runner]") {
  RunSpec s;
  std::string err;
  json j = GemmSpec(64, 64, 64);
  j["check"]["m"] = 65;
  CHECK_FALSE(ParseRunSpec(j, &s, &err));
  CHECK(err.find("do not match") != std::string::npos);
  json k = GemmSpec(64, 64, 64);
  k["args"].push_back({{"tensor", "nope"}});
  RunSpec s2;
  CHECK_FALSE(ParseRunSpec(k, &s2, &err));
  RunSpec s3;
  CHECK_FALSE(ParseRunSpec(json::object(), &s3, &err));
  // Tensor maps: a rank-2 tensor, boxes of 1..256, swizzle 128B or none.
  json t = GemmSpec(64, 64, 64);
  t["args"].push_back({{"tensormap", {{"tensor", "A"}, {"box", {64, 64}}, {"swizzle", "128B"}}}});
  RunSpec s4;
  REQUIRE(ParseRunSpec(t, &s4, &err));
  CHECK(s4.launches[0].args.back().kind == ArgSpec::Kind::kTensorMap);
  CHECK(s4.launches[0].args.back().box == std::array<int64_t, 2>{64, 64});
  t["args"].back()["tensormap"]["box"] = {512, 64};
  RunSpec s5;
  CHECK_FALSE(ParseRunSpec(t, &s5, &err));
  CHECK(err.find("box") != std::string::npos);
  // Interleaved timing rounds: 1 by default, 1..100.
  json r = GemmSpec(64, 64, 64);
  RunSpec s6;
  REQUIRE(ParseRunSpec(r, &s6, &err));
  CHECK(s6.rounds == 1);
  r["timing"] = {{"rounds", 5}};
  RunSpec s7;
  REQUIRE(ParseRunSpec(r, &s7, &err));
  CHECK(s7.rounds == 5);
  r["timing"]["rounds"] = 0;
  RunSpec s8;
  CHECK_FALSE(ParseRunSpec(r, &s8, &err));
  CHECK(err.find("timing.rounds") != std::string::npos);
}

TEST_CASE("A spec may hold a list of launches with scratch tensors between them", "[runner]") {
  // GEMM as two launches: T = A B into a scratch buffer, then C = T.
  json j = GemmSpec(64, 64, 64);
  j["tensors"].push_back({{"name", "T"},
                          {"dtype", "f32"},
                          {"shape", {64, 64}},
                          {"init", "poison"},
                          {"scratch", true}});
  json first = {{"kernel", {{"artifact", "a.cubin"}, {"symbol", "mm"}, {"grid", {4, 2, 1}}}},
                {"args", {{{"tensor", "A"}}, {{"tensor", "B"}}, {{"tensor", "T"}}}}};
  json second = {{"kernel", {{"artifact", "b.ptx"}, {"symbol", "copy"}, {"shared_bytes", 64}}},
                 {"args",
                  {{{"tensor", "T"}},
                   {{"tensor", "C"}},
                   {{"i32", 4096}},
                   {{"tensormap", {{"tensor", "T"}, {"box", {64, 64}}}}}}}};
  json l = j;
  l.erase("kernel");
  l.erase("args");
  l["launches"] = {first, second};
  RunSpec s;
  std::string err;
  REQUIRE(ParseRunSpec(l, &s, &err));
  REQUIRE(s.launches.size() == 2);
  CHECK(s.launches[0].symbol == "mm");
  CHECK(s.launches[0].grid == std::array<int, 3>{4, 2, 1});
  CHECK(s.launches[0].format == "cubin");
  CHECK(s.launches[1].format == "ptx");
  CHECK(s.launches[1].shared_bytes == 64);
  CHECK(s.launches[1].args.size() == 4);
  CHECK(s.Find("T")->scratch);
  CHECK_FALSE(s.Find("C")->scratch);
  // The old single-launch form is one launch.
  RunSpec one;
  REQUIRE(ParseRunSpec(GemmSpec(64, 64, 64), &one, &err));
  CHECK(one.launches.size() == 1);
  // Both forms at once, an empty list, an unknown tensor in a later launch
  // (named by its index and symbol), and a checked scratch tensor are refused.
  json both = l;
  both["kernel"] = j["kernel"];
  RunSpec b;
  CHECK_FALSE(ParseRunSpec(both, &b, &err));
  CHECK(err.find("either launches or kernel") != std::string::npos);
  json none = l;
  none["launches"] = json::array();
  RunSpec n;
  CHECK_FALSE(ParseRunSpec(none, &n, &err));
  json unknown = l;
  unknown["launches"][1]["args"].push_back({{"tensor", "nope"}});
  RunSpec u;
  CHECK_FALSE(ParseRunSpec(unknown, &u, &err));
  CHECK(err.find("launch 1 (copy)") != std::string::npos);
  json checked = l;
  checked["check"]["c"] = "T";
  checked["check"]["op"] = "none";
  RunSpec c;
  CHECK_FALSE(ParseRunSpec(checked, &c, &err));
  CHECK(err.find("scratch") != std::string::npos);
}

json MoeSpec(int64_t T, int64_t D, int64_t F, int64_t E, int64_t K) {
  return {{"kernel", {{"artifact", "moe.cubin"}, {"symbol", "moe"}}},
          {"tensors",
           {{{"name", "X"}, {"dtype", "bf16"}, {"shape", {T, D}}},
            {{"name", "Ids"}, {"dtype", "i32"}, {"shape", {T, K}}, {"init", "topk"}, {"high", E}},
            {{"name", "Wt"}, {"dtype", "f32"}, {"shape", {T, K}}, {"low", 0}, {"high", 0.5}},
            {{"name", "Wg"}, {"dtype", "bf16"}, {"shape", {E, D, F}}},
            {{"name", "Wu"}, {"dtype", "bf16"}, {"shape", {E, D, F}}},
            {{"name", "Wd"}, {"dtype", "bf16"}, {"shape", {E, F, D}}},
            {{"name", "Y"}, {"dtype", "f32"}, {"shape", {T, D}}, {"init", "poison"}}}},
          {"args", json::array()},
          {"check",
           {{"op", "moe"},
            {"a", "X"},
            {"b", "Wg"},
            {"u", "Wu"},
            {"d", "Wd"},
            {"c", "Y"},
            {"ids", "Ids"},
            {"weights", "Wt"},
            {"m", T},
            {"n", D},
            {"k", F}}}};
}

// How a kernel computes an expert's hidden activation from gate g and up u.
enum class Act { kSwiGlu, kSwiGluBf16, kRelu };

// A plain MoE, written independently of the check's loop order; tensors in
// MoeSpec's order (X, Ids, Wt, Wg, Wu, Wd, Y).
HostTensor HostMoe(const RunSpec& s, const std::vector<HostTensor>& t, Act act = Act::kSwiGlu) {
  const int64_t T = s.check.m, D = s.check.n, F = s.check.k, K = s.check.topk;
  HostTensor y = t[6];
  for (int64_t tok = 0; tok < T; ++tok) {
    for (int64_t d = 0; d < D; ++d) {
      double acc = 0;
      for (int64_t j = 0; j < K; ++j) {
        int64_t e = static_cast<int64_t>(t[1].At(tok * K + j));
        for (int64_t f = 0; f < F; ++f) {
          double g = 0, u = 0;
          for (int64_t dd = 0; dd < D; ++dd) {
            g += t[0].At(tok * D + dd) * t[3].At((e * D + dd) * F + f);
            u += t[0].At(tok * D + dd) * t[4].At((e * D + dd) * F + f);
          }
          double h = act == Act::kRelu ? std::max(g, 0.0) : g / (1 + std::exp(-g)) * u;
          if (act == Act::kSwiGluBf16) h = Bf16ToF32(F32ToBf16(static_cast<float>(h)));
          acc += t[2].At(tok * K + j) * h * t[5].At((e * F + f) * D + d);
        }
      }
      float v = static_cast<float>(acc);
      std::memcpy(&y.data[(tok * D + d) * 4], &v, 4);
    }
  }
  return y;
}

TEST_CASE("MoE check: routed ids are distinct experts - right and wrong and sampled", "[runner]") {
  RunSpec s;
  std::string err;
  REQUIRE(ParseRunSpec(MoeSpec(6, 16, 24, 5, 3), &s, &err));
  CHECK(s.check.experts == 5);
  CHECK(s.check.topk == 3);
  std::vector<HostTensor> t;
  for (int i = 0; i < 7; ++i) t.push_back(MakeHostTensor(s.tensors[i], s.seed, i));
  for (int64_t tok = 0; tok < 6; ++tok) {
    std::vector<int> seen(5, 0);
    for (int64_t j = 0; j < 3; ++j) {
      double e = t[1].At(tok * 3 + j);
      REQUIRE(e >= 0);
      REQUIRE(e < 5);
      CHECK(++seen[static_cast<int>(e)] == 1);  // distinct within a token
      CHECK(t[2].At(tok * 3 + j) >= 0);         // routing weights are non-negative
    }
  }
  HostTensor y = HostMoe(s, t);
  CheckResult ok = CheckOutput(s.check, t, y, s.seed);
  CHECK(ok.passed);
  CHECK(ok.mode == "full");
  CHECK(ok.checked == 6 * 16);
  // The hidden activation rounded to bf16 before the down projection (what
  // tensor-core kernels and PyTorch's bf16 loop do) is within tolerance ...
  CHECK(CheckOutput(s.check, t, HostMoe(s, t, Act::kSwiGluBf16), s.seed).passed);
  // ... a ReLU expert (this family's old semantics) is not.
  CHECK_FALSE(CheckOutput(s.check, t, HostMoe(s, t, Act::kRelu), s.seed).passed);

  // A kernel that used the wrong expert for one token's second pick.
  std::vector<HostTensor> swapped = t;
  int32_t other = (static_cast<int32_t>(t[1].At(4 * 3 + 1)) + 1) % 5;
  std::memcpy(&swapped[1].data[(4 * 3 + 1) * 4], &other, 4);
  HostTensor wrong_expert = HostMoe(s, swapped);
  CheckResult w = CheckOutput(s.check, t, wrong_expert, s.seed);
  CHECK_FALSE(w.passed);
  CHECK(w.first_bad_index / 16 == 4);

  // Ids out of range in the inputs: reported, never read out of bounds.
  std::vector<HostTensor> bad_ids = t;
  int32_t big = 99;
  std::memcpy(&bad_ids[1].data[0], &big, 4);
  CheckResult oob = CheckOutput(s.check, bad_ids, y, s.seed);
  CHECK_FALSE(oob.passed);
  CHECK(oob.message.find("expert id 99") != std::string::npos);

  s.check.full_max_macs = 1;  // sampled: first, last and samples/n random tokens
  s.check.samples = 32;
  CheckResult sampled = CheckOutput(s.check, t, y, s.seed);
  CHECK(sampled.passed);
  CHECK(sampled.mode == "sampled");
  CHECK(sampled.checked == 4 * 16);

  json bad = MoeSpec(6, 16, 24, 5, 3);
  bad["tensors"][5]["shape"] = {5, 24, 8};  // Wd not [E, k, n]
  RunSpec s2;
  CHECK_FALSE(ParseRunSpec(bad, &s2, &err));
  CHECK(err.find("check.moe") != std::string::npos);
  json few = MoeSpec(6, 16, 24, 2, 3);  // top-3 of 2 experts
  CHECK_FALSE(ParseRunSpec(few, &s2, &err));
  CHECK(err.find("topk") != std::string::npos);
}

json AttentionSpec(int bh, int kv_bh, int seq, int kv_seq, int dim, bool causal) {
  auto t = [](const char* name, int rows, int n, int d, const char* dtype) {
    return json{{"name", name}, {"dtype", dtype}, {"shape", {rows, n, d}}};
  };
  json o = t("O", bh, seq, dim, "f32");
  o["init"] = "poison";
  return {{"kernel", {{"artifact", "a.cubin"}, {"symbol", "a"}}},
          {"tensors",
           {t("Q", bh, seq, dim, "bf16"), t("K", kv_bh, kv_seq, dim, "bf16"),
            t("V", kv_bh, kv_seq, dim, "bf16"), o}},
          {"args", json::array()},
          {"check",
           {{"op", "attention"},
            {"a", "Q"},
            {"b", "K"},
            {"d", "V"},
            {"c", "O"},
            {"m", bh},
            {"n", seq},
            {"k", dim},
            {"kv_len", kv_seq},
            {"causal", causal}}},
          {"seed", 3}};
}

// Attention as a user would write it with K and V repeated over each group
// and an explicit mask: keys past `i + shift` are hidden when causal.
HostTensor HostAttention(const RunSpec& s, const std::vector<HostTensor>& t, int64_t group,
                         int64_t shift) {
  HostTensor o = MakeHostTensor(s.tensors[3], s.seed, 3);
  const int64_t BH = s.check.m, N = s.check.n, D = s.check.k, KV = s.check.kv_len;
  std::vector<double> k(BH * KV * D), v(BH * KV * D);
  for (int64_t h = 0; h < BH; ++h)
    for (int64_t e = 0; e < KV * D; ++e) {
      k[h * KV * D + e] = t[1].At(h / group * KV * D + e);
      v[h * KV * D + e] = t[2].At(h / group * KV * D + e);
    }
  for (int64_t h = 0; h < BH; ++h)
    for (int64_t i = 0; i < N; ++i) {
      std::vector<double> p(KV, 0.0);
      double mx = -1e300, l = 0;
      for (int64_t j = 0; j < KV; ++j) {
        if (s.check.causal && j > i + shift) continue;
        for (int64_t d = 0; d < D; ++d)
          p[j] += t[0].At((h * N + i) * D + d) * k[(h * KV + j) * D + d];
        p[j] /= std::sqrt(static_cast<double>(D));
        mx = std::max(mx, p[j]);
      }
      for (int64_t j = 0; j < KV; ++j) {
        p[j] = s.check.causal && j > i + shift ? 0 : std::exp(p[j] - mx);
        l += p[j];
      }
      for (int64_t d = 0; d < D; ++d) {
        double acc = 0;
        for (int64_t j = 0; j < KV; ++j) acc += p[j] * v[(h * KV + j) * D + d];
        float f = static_cast<float>(l > 0 ? acc / l : 0.0);
        std::memcpy(&o.data[((h * N + i) * D + d) * 4], &f, 4);
      }
    }
  return o;
}

TEST_CASE("Attention check: GQA heads, bottom-right causal mask with Sq != Skv", "[runner]") {
  for (bool causal : {false, true}) {
    INFO("causal " << causal);
    RunSpec s;
    std::string err;
    REQUIRE(ParseRunSpec(AttentionSpec(8, 2, 5, 9, 16, causal), &s, &err));
    CHECK(s.check.kv_heads == 2);  // from K's size
    CHECK(s.check.kv_len == 9);
    CHECK(s.check.scale == Approx(0.25));
    std::vector<HostTensor> t;
    for (int i = 0; i < 4; ++i) t.push_back(MakeHostTensor(s.tensors[i], s.seed, i));
    CheckResult ok = CheckOutput(s.check, t, HostAttention(s, t, 4, 9 - 5), s.seed);
    INFO(ok.message);
    CHECK(ok.passed);
    CHECK(ok.checked == 8 * 5 * 16);
    // Query head h reading kv head h % 2 instead of h / 4.
    std::vector<HostTensor> swapped = t;
    for (int64_t e = 0; e < 9 * 16; ++e) {
      std::memcpy(&swapped[1].data[e * 2], &t[1].data[(9 * 16 + e) * 2], 2);
      std::memcpy(&swapped[1].data[(9 * 16 + e) * 2], &t[1].data[e * 2], 2);
    }
    CHECK_FALSE(CheckOutput(s.check, t, HostAttention(s, swapped, 4, 9 - 5), s.seed).passed);
    // The top-left aligned mask differs wherever Sq != Skv.
    if (causal) CHECK_FALSE(CheckOutput(s.check, t, HostAttention(s, t, 4, 0), s.seed).passed);
  }
  // More queries than keys, causal: the first rows see no key and are 0.
  RunSpec s;
  std::string err;
  REQUIRE(ParseRunSpec(AttentionSpec(2, 2, 6, 4, 8, true), &s, &err));
  std::vector<HostTensor> t;
  for (int i = 0; i < 4; ++i) t.push_back(MakeHostTensor(s.tensors[i], s.seed, i));
  CHECK(CheckOutput(s.check, t, HostAttention(s, t, 1, 4 - 6), s.seed).passed);
  // K/V that do not split into whole heads, or a group that does not divide.
  json bad = AttentionSpec(6, 4, 5, 5, 8, false);
  RunSpec s2;
  CHECK_FALSE(ParseRunSpec(bad, &s2, &err));
  CHECK(err.find("check.attention") != std::string::npos);
  bad = AttentionSpec(6, 3, 5, 5, 8, false);
  bad["check"]["kv_heads"] = 2;
  CHECK_FALSE(ParseRunSpec(bad, &s2, &err));
  CHECK(err.find("kv_heads") != std::string::npos);
}

TEST_CASE("A timing budget shrinks warm-up and reps for slow kernels only", "[runner]") {
  int warmup = 10, reps = 50;
  FitTiming(0.5, 1500, &warmup, &reps);  // 60 launches fit: unchanged
  CHECK(warmup == 10);
  CHECK(reps == 50);
  FitTiming(100, 1500, &warmup, &reps);  // 15 launches fit
  CHECK(warmup == 2);
  CHECK(reps == 13);
  warmup = 10, reps = 50;
  FitTiming(2000, 1500, &warmup, &reps);  // not even one: the floor
  CHECK(warmup == 1);
  CHECK(reps == 3);
  warmup = 10, reps = 50;
  FitTiming(100, 0, &warmup, &reps);  // no budget
  CHECK(reps == 50);
}

TEST_CASE("Timing statistics", "[runner]") {
  TimingStats t = ComputeStats({5, 1, 3, 2, 4});
  CHECK(t.median_ms == 3);
  CHECK(t.min_ms == 1);
  CHECK(t.max_ms == 5);
  CHECK(t.mean_ms == 3);
  CHECK(t.reps == 5);
  CHECK(Median({0.98, 1.02, 0.99, 1.01}) == Approx(1.0));  // even count: the middle two's mean
  CHECK(Median({}) == 0);
}

}  // namespace
}  // namespace argus::runner
