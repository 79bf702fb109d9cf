// The six-launch tensor-core MoE (kb/templates/moe_wgmma.py): every kernel
// verifies at both of issue 7's shapes, and the chain, run launch after launch
// in the reference interpreter on one set of tensors, computes the SwiGLU
// experts' output (f64 reference) at a small shape, its routing tables
// consistent with the ids.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <fstream>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "dsl/check.h"
#include "dsl/interp.h"
#include "dsl/source.h"
#include "dsl/types.h"
#include "kb/kb.h"
#include "verifier/verify.h"

namespace argus::kb {
namespace {

std::string TemplateSource() {
  std::ifstream in(DefaultKbDir() + "/templates/moe_wgmma.py");
  std::stringstream ss;
  ss << in.rdbuf();
  std::string s = ss.str();
  for (size_t p; (p = s.find("${dtype}")) != std::string::npos;) s.replace(p, 8, "bf16");
  return s;
}

// The dims of every kernel of the chain for a problem shape (moe_wgmma.json's
// "dims"): padded rows R = MT * BM with MT = cdiv(T * TOPK, BM) + E tiles.
std::map<std::string, int64_t> ChainDims(int64_t t, int64_t d, int64_t f, int64_t e, int64_t topk) {
  const int64_t bm = 128, mt = (t * topk + bm - 1) / bm + e;
  return {{"T", t},   {"D", d},       {"F", f},      {"E", e},     {"TOPK", topk},
          {"MT", mt}, {"R", mt * bm}, {"ED", e * d}, {"EF", e * f}};
}

TEST_CASE("moe_wgmma: every launch verifies at issue 7's shapes", "[kb][moe]") {
  const std::string src = TemplateSource();
  for (const auto& dims :
       {ChainDims(4096, 2048, 1408, 64, 6), ChainDims(4096, 4096, 14336, 8, 2)}) {
    verifier::VerifyOptions vo;
    vo.dims = dims;
    auto rep = verifier::VerifySource("moe_wgmma.py", src, {}, vo);
    REQUIRE(rep.ok());
    INFO(verifier::ToText(*rep));
    CHECK(rep->verified());
    CHECK(rep->kernel.find("moe_gateup") != std::string::npos);
    CHECK(rep->kernel.find("moe_reduce") != std::string::npos);
  }
}

double Silu(double x) { return x / (1.0 + std::exp(-x)); }

// Runs the six launches in the interpreter on one pool of tensors for the
// routing `ids` (T x TOPK expert ids, distinct per token) and checks the
// routing tables and Y against the f64 reference; returns the pool.
std::map<std::string, dsl::HostTensor> RunChain(
    int64_t T, int64_t E, int64_t TOPK, const std::vector<int64_t>& ids_in,
    const std::map<std::string, std::string>& consts = {}) {
  dsl::CheckOptions co;
  co.consts = consts;
  co.consts["GW"] = "256";  // the gather's row pass: D = 256 here
  auto mod = dsl::Compile(std::make_shared<dsl::SourceFile>("moe_wgmma.py", TemplateSource()), co);
  REQUIRE(mod.ok());
  const int64_t D = 256, F = 256;  // two column tiles of F
  dsl::LaunchArgs args;
  for (const auto& [k, v] : ChainDims(T, D, F, E, TOPK)) args.dims[k] = v;
  const int64_t R = args.dims["R"];
  // The tensors of the whole chain, by name, filled once: the kernels share them.
  std::map<std::string, dsl::HostTensor> pool;
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> uni(-1.0, 1.0);
  auto bf16 = [](double x) { return dsl::RoundTo(dsl::DType::kBF16, x); };
  for (const dsl::ir::Function& f : mod->functions) {
    dsl::LaunchArgs own;
    for (const std::string& d : f.dims) own.dims[d] = args.dims.at(d);
    auto ts = dsl::MakeTensors(f, own);
    REQUIRE(ts.ok());
    for (dsl::HostTensor& t : *ts) {
      if (pool.count(t.name)) continue;
      // Scratch starts as NaN / garbage, as on the GPU; inputs random.
      const bool input = t.name == "X" || t.name == "Wt" || t.name[0] == 'W';
      for (double& x : t.data) {
        x = input ? (t.dtype == dsl::DType::kF32 ? uni(rng) : bf16(uni(rng) * 0.5))
            : t.dtype == dsl::DType::kI32 ? 0x5A5A5A5A
                                          : std::nan("");
      }
      pool[t.name] = t;
    }
  }
  dsl::HostTensor& ids = pool["Ids"];
  REQUIRE(ids_in.size() == ids.data.size());
  for (size_t i = 0; i < ids_in.size(); ++i) ids.data[i] = static_cast<double>(ids_in[i]);
  for (const char* name :
       {"moe_count", "moe_place", "moe_gather", "moe_gateup", "moe_down", "moe_reduce"}) {
    INFO(name);
    const dsl::ir::Function* k = nullptr;
    for (const auto& f : mod->functions)
      if (f.name == name) k = &f;
    REQUIRE(k != nullptr);
    std::vector<dsl::HostTensor> ts;
    for (const auto& p : k->tensors) ts.push_back(pool.at(p.name));
    dsl::LaunchArgs own;  // the kernel's own dims only
    for (const std::string& d : k->dims) own.dims[d] = args.dims.at(d);
    auto st = dsl::Run(*mod, *k, own, &ts);
    INFO(st.ToString());
    REQUIRE(st.ok());
    for (dsl::HostTensor& t : ts) pool[t.name] = std::move(t);
  }
  // Routing: every slot has its own row, holding its token, in a live tile of its expert
  // (not in the padding half of a half tile); every other row is padding (-1); an expert's
  // tiles are contiguous, ceil(count / 128) of them, the last one a half tile (TileH = 1) when
  // 1..64 rows were left over after the full ones; Ord lists the live tiles, full tiles first
  // (in tile order), then the half tiles (in tile order).
  const int64_t live = static_cast<int64_t>(pool["Live"].data[0]);
  int64_t want_live = 0, want_full = 0;
  std::vector<double> want_e, want_h;
  for (int64_t e = 0; e < E; ++e) {
    int64_t c = 0;
    for (int64_t v : ids_in) c += v == e;
    for (int64_t i = 0; i < (c + 127) / 128; ++i) {
      want_e.push_back(static_cast<double>(e));
      want_h.push_back(i < (c + 63) / 128 ? 0 : 1);
    }
    want_live += (c + 127) / 128;
    want_full += (c + 63) / 128;
  }
  REQUIRE(live == want_live);
  REQUIRE(live < args.dims["MT"]);  // the routings here leave unused tiles
  std::vector<double> got_e(pool["TileE"].data.begin(), pool["TileE"].data.begin() + live);
  std::vector<double> got_h(pool["TileH"].data.begin(), pool["TileH"].data.begin() + live);
  CHECK(got_e == want_e);
  CHECK(got_h == want_h);
  std::vector<double> want_ord;
  for (int pass = 0; pass < 2; ++pass)
    for (int64_t i = 0; i < live; ++i)
      if (want_h[i] == pass) want_ord.push_back(static_cast<double>(i));
  CHECK(std::vector<double>(pool["Ord"].data.begin(), pool["Ord"].data.begin() + live) == want_ord);
  CHECK(want_full < live);  // some half tile
  std::set<int64_t> rows;
  for (int64_t s = 0; s < T * TOPK; ++s) {
    const int64_t r = static_cast<int64_t>(pool["SlotRow"].data[s]);
    REQUIRE(r >= 0);
    REQUIRE(r < live * 128);
    CHECK(rows.insert(r).second);
    CHECK(pool["RowTok"].data[r] == s / TOPK);
    CHECK(pool["TileE"].data[r / 128] == ids.data[s]);
    if (pool["TileH"].data[r / 128] == 1) CHECK(r % 128 < 64);
  }
  for (int64_t r = 0; r < R; ++r)
    if (!rows.count(r)) CHECK(pool["RowTok"].data[r] == -1);
  // Y against the f64 reference with the hidden activation rounded to bf16
  // (what the kernel stores between the two GEMMs).
  const auto& X = pool["X"].data;
  const auto& Wg = pool["Wg"].data;
  const auto& Wu = pool["Wu"].data;
  const auto& Wd = pool["Wd"].data;
  const auto& Wt = pool["Wt"].data;
  const auto& Y = pool["Y"].data;
  double worst = 0;
  for (int64_t t = 0; t < T; ++t) {
    std::vector<double> y(D, 0.0), mag(D, 0.0);
    for (int64_t k = 0; k < TOPK; ++k) {
      const int64_t e = ids_in[t * TOPK + k];
      for (int64_t j = 0; j < F; ++j) {
        double g = 0, u = 0;
        for (int64_t i = 0; i < D; ++i) {
          g += X[t * D + i] * Wg[(e * D + i) * F + j];
          u += X[t * D + i] * Wu[(e * D + i) * F + j];
        }
        const double h = bf16(Silu(g) * u);
        for (int64_t i = 0; i < D; ++i) {
          y[i] += Wt[t * TOPK + k] * h * Wd[(e * F + j) * D + i];
          mag[i] += std::fabs(Wt[t * TOPK + k] * h * Wd[(e * F + j) * D + i]);
        }
      }
    }
    for (int64_t i = 0; i < D; ++i) {
      const double err = std::fabs(Y[t * D + i] - y[i]) / (1e-6 + mag[i]);
      worst = std::max(worst, std::isnan(err) ? 1e9 : err);
    }
  }
  INFO("worst error relative to the sum of |terms|: " << worst);
  CHECK(worst < 1e-2);
  return pool;
}

TEST_CASE("moe_wgmma: the six launches compute the SwiGLU experts in the interpreter",
          "[kb][moe]") {
  // Distinct experts per token, skewed towards expert 1 (an uneven split).
  const int64_t T = 80, E = 4, TOPK = 2;
  std::mt19937_64 rng(11);
  std::vector<int64_t> ids;
  for (int64_t t = 0; t < T; ++t) {
    std::set<int64_t> used;
    for (int64_t k = 0; k < TOPK; ++k) {
      int64_t e = (t % 3 == 0 && !used.count(1)) ? 1 : static_cast<int64_t>(rng() % E);
      while (used.count(e)) e = (e + 1) % E;
      used.insert(e);
      ids.push_back(e);
    }
  }
  RunChain(T, E, TOPK, ids);
}

TEST_CASE("moe_wgmma: half tiles, a padded full tile and an expert without rows", "[kb][moe]") {
  // 150 tokens, top-2 of 4 experts: expert 0 gets no row, expert 1 138 (a full tile and a
  // half tile of 10 rows), expert 2 100 (one full tile, 28 padding rows), expert 3 62 (a half
  // tile). Tiles: [e1 full, e1 half, e2 full, e3 half], in Ord [0, 2, 1, 3]. Pairs:
  // 88 x (1, 2), 50 x (3, 1), 12 x (2, 3), interleaved so that a block's slots are not in
  // expert order.
  const int64_t T = 150, E = 4, TOPK = 2;
  std::vector<int64_t> ids;
  std::vector<std::pair<int64_t, int64_t>> pairs;
  for (int i = 0; i < 88; ++i) pairs.push_back({1, 2});
  for (int i = 0; i < 50; ++i) pairs.push_back({3, 1});
  for (int i = 0; i < 12; ++i) pairs.push_back({2, 3});
  std::mt19937_64 rng(5);
  std::shuffle(pairs.begin(), pairs.end(), rng);
  for (const auto& [a, b] : pairs) {
    ids.push_back(a);
    ids.push_back(b);
  }
  // The knobs' other paths: both GEMMs walk the tiles in Ord (GU_TAIL, DN_TAIL), and gate/up
  // stores H from registers (EPI = 0) instead of through shared memory and TMA.
  RunChain(T, E, TOPK, ids, {{"GU_TAIL", "1"}, {"DN_TAIL", "1"}, {"EPI", "0"}});
  auto pool = RunChain(T, E, TOPK, ids);
  CHECK(pool["Live"].data[0] == 4);
  CHECK(std::vector<double>(pool["TileE"].data.begin(), pool["TileE"].data.begin() + 4) ==
        std::vector<double>{1, 1, 2, 3});
  CHECK(std::vector<double>(pool["Ord"].data.begin(), pool["Ord"].data.begin() + 4) ==
        std::vector<double>{0, 2, 1, 3});
}

}  // namespace
}  // namespace argus::kb
