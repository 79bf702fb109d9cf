// Tests of the reference interpreter: rounding, MMA layouts, every example
// against a plain C++ reference, and the hazards it must report.
#include "dsl/interp.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>

#include "absl/strings/str_replace.h"
#include "base/status.h"
#include "dsl/check.h"
#include "dsl/mma.h"

namespace argus::dsl {
namespace {

std::string ExamplePath(const std::string& name) {
  return std::string(ARGUS_SOURCE_DIR) + "/examples/" + name;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct Ran {
  ir::Module module;
  std::vector<HostTensor> t;
  RunStats stats;
};

absl::StatusOr<Ran> RunText(const std::string& name, const std::string& text,
                            const std::string& kernel, std::map<std::string, int64_t> dims,
                            std::map<std::string, std::string> consts = {}, uint64_t seed = 1) {
  CheckOptions opt;
  opt.consts = consts;
  auto m = Compile(std::make_shared<SourceFile>(name, text), opt);
  if (!m.ok()) return m.status();
  Ran r{std::move(*m), {}, {}};
  const ir::Function* k = kernel.empty() ? &r.module.functions.back() : r.module.Find(kernel);
  if (!k) return absl::NotFoundError(kernel);
  LaunchArgs la;
  la.dims = dims;
  auto ts = MakeTensors(*k, la);
  if (!ts.ok()) return ts.status();
  r.t = std::move(*ts);
  FillRandom(&r.t, seed);
  absl::Status st = Run(r.module, *k, la, &r.t, &r.stats);
  if (!st.ok()) return st;
  return r;
}

absl::StatusOr<Ran> RunExample(const std::string& file, const std::string& kernel,
                               std::map<std::string, int64_t> dims,
                               std::map<std::string, std::string> consts = {}) {
  return RunText(file, ReadFile(ExamplePath(file)), kernel, dims, consts);
}

// Max of |got - ref| / (abs_tol + rel_tol * |ref|); <= 1 passes.
double Worst(const std::vector<double>& got, const std::vector<double>& ref, double abs_tol,
             double rel_tol) {
  double w = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    double e = std::fabs(got[i] - ref[i]) / (abs_tol + rel_tol * std::fabs(ref[i]));
    if (std::isnan(got[i])) e = INFINITY;
    w = std::max(w, e);
  }
  return w;
}

std::vector<double> Gemm(const HostTensor& A, const HostTensor& B) {
  int64_t M = A.shape[0], K = A.shape[1], N = B.shape[1];
  std::vector<double> C(M * N);
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      double s = 0;
      for (int64_t k = 0; k < K; ++k) s += A.At({i, k}) * B.At({k, j});
      C[i * N + j] = s;
    }
  return C;
}

TEST_CASE("round to nearest even") {
  CHECK(RoundTo(DType::kBF16, 1.0 + std::ldexp(1, -8)) == 1.0);
  CHECK(RoundTo(DType::kBF16, 1.0 + 3 * std::ldexp(1, -8)) == 1.0 + std::ldexp(1, -6));
  CHECK(RoundTo(DType::kBF16, 1.0 + std::ldexp(1, -8) + std::ldexp(1, -20)) ==
        1.0 + std::ldexp(1, -7));
  CHECK(RoundTo(DType::kF16, 65520.0) == INFINITY);
  CHECK(RoundTo(DType::kF16, 65519.0) == 65504.0);
  CHECK(RoundTo(DType::kF16, std::ldexp(1, -25)) == 0.0);  // tie to even (0)
  CHECK(RoundTo(DType::kF16, 3 * std::ldexp(1, -25)) == std::ldexp(1, -23));
  CHECK(RoundTo(DType::kE4M3, 500.0) == 448.0);
  CHECK(RoundTo(DType::kE4M3, 0.0703125) == 0.0703125);
  CHECK(RoundTo(DType::kE5M2, 1e6) == INFINITY);
  CHECK(RoundTo(DType::kF32, 1.0 + std::ldexp(1, -24)) == 1.0);
}

TEST_CASE("MMA lane layouts match the PTX ISA and CDNA3 tables") {
  const MmaInfo* nv = FindMma("mma_sync_m16n8k16_bf16");
  int r, c;
  // PTX: groupID = lane >> 2, tig = lane % 4; a0,a1: (g, 2t+{0,1}); a2,a3: (g+8, ..); a4..a7: col
  // + 8.
  int expect_a[8][2] = {{1, 2}, {1, 3}, {9, 2}, {9, 3}, {1, 10}, {1, 11}, {9, 10}, {9, 11}};
  for (int i = 0; i < 8; ++i) {
    nv->a_coord(5, i, &r, &c);
    CHECK(r == expect_a[i][0]);
    CHECK(c == expect_a[i][1]);
  }
  int expect_b[4][2] = {{2, 1}, {3, 1}, {10, 1}, {11, 1}};  // (k, n)
  for (int i = 0; i < 4; ++i) {
    nv->b_coord(5, i, &r, &c);
    CHECK(r == expect_b[i][0]);
    CHECK(c == expect_b[i][1]);
  }
  int expect_c[4][2] = {{1, 2}, {1, 3}, {9, 2}, {9, 3}};
  for (int i = 0; i < 4; ++i) {
    nv->c_coord(5, i, &r, &c);
    CHECK(r == expect_c[i][0]);
    CHECK(c == expect_c[i][1]);
  }
  const MmaInfo* m32 = FindMma("mfma_f32_32x32x8_bf16");
  m32->a_coord(33, 2, &r, &c);
  CHECK((r == 1 && c == 6));
  m32->c_coord(33, 5, &r, &c);
  CHECK((r == 13 && c == 1));
  const MmaInfo* m16 = FindMma("mfma_f32_16x16x16_bf16");
  m16->a_coord(17, 3, &r, &c);
  CHECK((r == 1 && c == 7));
  m16->c_coord(17, 3, &r, &c);
  CHECK((r == 7 && c == 1));
  // Every table is a bijection onto its matrix.
  int n;
  const MmaInfo* all = AllMmas(&n);
  for (int i = 0; i < n; ++i) {
    const MmaInfo& mi = all[i];
    std::set<std::pair<int, int>> a, b, cc;
    for (int l = 0; l < mi.warp_size; ++l) {
      for (int x = 0; x < mi.regs_a; ++x) {
        mi.a_coord(l, x, &r, &c);
        a.insert({r, c});
        CHECK((r < mi.m && c < mi.k));
      }
      for (int x = 0; x < (mi.wgmma ? 0 : mi.regs_b); ++x) {
        mi.b_coord(l, x, &r, &c);
        b.insert({r, c});
        CHECK((r < mi.k && c < mi.n));
      }
      for (int x = 0; x < mi.regs_c; ++x) {
        mi.c_coord(l, x, &r, &c);
        cc.insert({r, c});
        CHECK((r < mi.m && c < mi.n));
      }
    }
    CHECK(static_cast<int>(cc.size()) == mi.m * mi.n);
    CHECK(mi.warp_size * mi.regs_c == mi.m * mi.n);
    CHECK(static_cast<int>(a.size()) == mi.m * mi.k);
    CHECK(mi.warp_size * mi.regs_a == mi.m * mi.k);
    if (mi.wgmma) {  // B comes from a shared memory descriptor; A also from registers
      CHECK((mi.regs_b == 0 && !mi.b_coord && mi.a_coord));
      continue;
    }
    CHECK(static_cast<int>(b.size()) == mi.k * mi.n);
    CHECK(mi.warp_size * mi.regs_a == mi.m * mi.k);
    CHECK(mi.warp_size * mi.regs_c == mi.m * mi.n);
  }
}

TEST_CASE("vector_add") {
  auto r = RunExample("vector_add.py", "", {{"N", 1000}});
  REQUIRE(r.ok());
  for (int i = 0; i < 1000; ++i) {
    CHECK(r->t[2].data[i] ==
          static_cast<double>(static_cast<float>(r->t[0].data[i] + r->t[1].data[i])));
  }
}

TEST_CASE("naive and shared-memory GEMMs") {
  for (const char* f : {"gemm_naive.py", "gemm_smem.py"}) {
    auto r = RunExample(f, "", {{"M", 64}, {"N", 96}, {"K", 64}});
    INFO(f << ": " << r.status().message());
    REQUIRE(r.ok());
    CHECK(Worst(r->t[2].data, Gemm(r->t[0], r->t[1]), 1e-3, 1e-3) <= 1);
  }
}

TEST_CASE("MMA GEMM (mma.sync m16n8k16 bf16, cp.async pipeline)") {
  auto r = RunExample("../kb/templates/gemm_mma.py", "", {{"M", 128}, {"N", 256}, {"K", 96}},
                      {{"BM", "64"}});
  INFO(r.status().message());
  REQUIRE(r.ok());
  CHECK(Worst(r->t[2].data, Gemm(r->t[0], r->t[1]), 1e-3, 1e-3) <= 1);
  auto r3 = RunExample("../kb/templates/gemm_mma.py", "", {{"M", 128}, {"N", 128}, {"K", 128}},
                       {{"STAGES", "3"}});
  REQUIRE(r3.ok());
  CHECK(Worst(r3->t[2].data, Gemm(r3->t[0], r3->t[1]), 1e-3, 1e-3) <= 1);
}

// Replaces the one occurrence of `from` in `text` (the test fails otherwise).
std::string Patch(std::string text, const std::string& from, const std::string& to) {
  size_t p = text.find(from);
  REQUIRE(p != std::string::npos);
  REQUIRE(text.find(from, p + 1) == std::string::npos);
  return text.replace(p, from.size(), to);
}

TEST_CASE("wgmma GEMM (TMA + mbarrier pipeline, warp-specialized)") {
  auto r = RunExample("gemm_wgmma.py", "", {{"M", 256}, {"N", 512}, {"K", 384}});
  INFO(r.status().message());
  REQUIRE(r.ok());
  CHECK(Worst(r->t[2].data, Gemm(r->t[0], r->t[1]), 1e-3, 1e-3) <= 1);
  // Narrower tiles (mma="wgmma_bf16" picks m64n128k16), two stages wrapping many times.
  auto r2 = RunExample("gemm_wgmma.py", "", {{"M", 128}, {"N", 256}, {"K", 512}},
                       {{"BN", "128"}, {"STAGES", "2"}});
  INFO(r2.status().message());
  REQUIRE(r2.ok());
  CHECK(Worst(r2->t[2].data, Gemm(r2->t[0], r2->t[1]), 1e-3, 1e-3) <= 1);
}

TEST_CASE("persistent wgmma GEMM (grouped tile order, stage ring across tiles)") {
  // 3x3 tiles of 128x256 over 5 blocks: blocks take 2 or 1 tiles; GROUP=2 leaves a partial group.
  auto r = RunExample("../kb/templates/gemm_wgmma_persistent.py", "",
                      {{"M", 384}, {"N", 768}, {"K", 256}},
                      {{"SMS", "5"}, {"GROUP", "2"}, {"STAGES", "3"}});
  INFO(r.status().message());
  REQUIRE(r.ok());
  CHECK(r->stats.blocks == 5);
  CHECK(Worst(r->t[2].data, Gemm(r->t[0], r->t[1]), 1e-3, 1e-3) <= 1);
}

TEST_CASE("TMA-store epilogue GEMM (acc -> swizzled shared sub-tiles -> tma_store)") {
  for (auto consts : std::vector<std::map<std::string, std::string>>{
           {{"SMS", "5"}, {"GROUP", "2"}, {"STAGES", "3"}},
           {{"SMS", "3"}, {"EBUFS", "4"}, {"BN", "128"}}}) {
    auto r = RunExample("../kb/templates/gemm_wgmma_tma_store.py", "",
                        {{"M", 384}, {"N", 768}, {"K", 256}}, consts);
    INFO(r.status().message());
    REQUIRE(r.ok());
    CHECK(Worst(r->t[2].data, Gemm(r->t[0], r->t[1]), 1e-3, 1e-3) <= 1);
  }
  // BN = 320 (five m64n64k16 tiles per warp group) with N = 704: three column tiles, the last
  // one starting at N - BN = 384, overlapping the second (320..639); every column is written.
  auto r = RunExample("../kb/templates/gemm_wgmma_tma_store.py", "",
                      {{"M", 256}, {"N", 704}, {"K", 192}},
                      {{"SMS", "4"}, {"BN", "320"}, {"STAGES", "3"}});
  INFO(r.status().message());
  REQUIRE(r.ok());
  CHECK(r->stats.blocks == 4);
  CHECK(Worst(r->t[2].data, Gemm(r->t[0], r->t[1]), 1e-3, 1e-3) <= 1);
  // BN = 192 (one m64n192k16 tile) with N = 448: the last column tile starts at 256.
  auto r192 = RunExample("../kb/templates/gemm_wgmma_tma_store.py", "",
                         {{"M", 128}, {"N", 448}, {"K", 128}},
                         {{"SMS", "2"}, {"BN", "192"}, {"EBUFS", "4"}});
  INFO(r192.status().message());
  REQUIRE(r192.ok());
  CHECK(Worst(r192->t[2].data, Gemm(r192->t[0], r192->t[1]), 1e-3, 1e-3) <= 1);
}

// The split-K GEMM's two launches over one set of tensors, C poisoned first (as the runner does):
// gemm_splitk_dp's tiles and zeros, then gemm_splitk_tail's reduce-add stores.
absl::StatusOr<Ran> RunSplitK(
    std::map<std::string, int64_t> dims, std::map<std::string, std::string> consts,
    const std::string& text = ReadFile(ExamplePath("../kb/templates/gemm_wgmma_splitk.py"))) {
  CheckOptions opt;
  opt.consts = consts;
  auto m = Compile(std::make_shared<SourceFile>("gemm_wgmma_splitk.py", text), opt);
  if (!m.ok()) return m.status();
  Ran r{std::move(*m), {}, {}};
  LaunchArgs la;
  la.dims = dims;
  const ir::Function* dp = r.module.Find("gemm_splitk_dp");
  auto ts = MakeTensors(*dp, la);
  if (!ts.ok()) return ts.status();
  r.t = std::move(*ts);
  FillRandom(&r.t, 1);
  for (double& x : r.t[2].data) x = std::nan("");
  for (const char* k : {"gemm_splitk_dp", "gemm_splitk_tail"}) {
    RunStats st;
    RETURN_IF_ERROR(Run(r.module, *r.module.Find(k), la, &r.t, &st));
    r.stats.blocks += st.blocks;
  }
  return r;
}

TEST_CASE("split-K tail GEMM: data-parallel tiles, zeroed tail, reduce-add units") {
  // 3 x 3 tiles of 128 x 128 on SMS = 4: 8 data-parallel tiles (two waves), one tail tile in
  // SPLITK units; K = 512 (8 k-steps): units of 4, 2 and 1 k-steps. Every block of the tail
  // launch adds into the same tile.
  for (const char* split : {"2", "4", "8"}) {
    INFO("SPLITK=" << split);
    auto r = RunSplitK({{"M", 384}, {"N", 384}, {"K", 512}},
                       {{"SMS", "4"}, {"BN", "128"}, {"GROUP", "2"}, {"SPLITK", split}});
    INFO(r.status().message());
    REQUIRE(r.ok());
    CHECK(r->stats.blocks == 4 + std::min(4, std::atoi(split)));
    CHECK(Worst(r->t[2].data, Gemm(r->t[0], r->t[1]), 1e-3, 1e-3) <= 1);
  }
  // 2 x 2 tiles of 128 x 256 on SMS = 3, GROUP 16: one tail tile of 2 units (BN = 256 as
  // on the H200); and fewer tiles than SMS: no data-parallel tile, all four tiles split.
  for (auto [sms, blocks] : std::vector<std::pair<std::string, int>>{{"3", 3 + 2}, {"8", 4 + 8}}) {
    auto r = RunSplitK({{"M", 256}, {"N", 512}, {"K", 256}}, {{"SMS", sms}, {"SPLITK", "2"}});
    INFO("SMS=" << sms << " " << r.status().message());
    REQUIRE(r.ok());
    CHECK(r->stats.blocks == blocks);
    CHECK(Worst(r->t[2].data, Gemm(r->t[0], r->t[1]), 1e-3, 1e-3) <= 1);
  }
  // Without the first launch's zeros the adds land on poison; with a unit range that skips the
  // last k-step (KU one short) the sum misses it: both are caught by the reference check.
  std::string text = ReadFile(ExamplePath("../kb/templates/gemm_wgmma_splitk.py"));
  for (const std::string& bad :
       {Patch(text, "C[bm * BM + e // (BN // 64), bn * BN + e % (BN // 64) * 64 + z] = 0.0",
              "pass"),
        Patch(text, "KU = cdiv(K, BK) // SPLITK", "KU = cdiv(K, BK) // SPLITK - 1")}) {
    auto r = RunSplitK({{"M", 256}, {"N", 512}, {"K", 256}}, {{"SMS", "3"}, {"SPLITK", "2"}}, bad);
    REQUIRE(r.ok());
    CHECK(Worst(r->t[2].data, Gemm(r->t[0], r->t[1]), 1e-3, 1e-3) > 1);
  }
}

TEST_CASE("TMA-store epilogue hazards are reported") {
  std::string text = ReadFile(ExamplePath("../kb/templates/gemm_wgmma_tma_store.py"));
  std::map<std::string, int64_t> dims = {{"M", 256}, {"N", 512}, {"K", 128}};
  std::map<std::string, std::string> consts = {{"SMS", "3"}};
  auto fails_with = [&](const std::string& patched, const std::string& what) {
    auto r = RunText("epi.py", patched, "", dims, consts);
    REQUIRE(!r.ok());
    std::string msg(r.status().message());
    INFO(msg);
    CHECK(msg.find(what) != std::string::npos);
  };
  SECTION("a buffer rewritten before its store was waited for") {
    fails_with(Patch(text, "tma_store_wait(EBUFS - 1)", "tma_store_wait(EBUFS)"),
               "written while the tma_store at line");
  }
  SECTION("the elected thread stores before the other writers are done") {
    fails_with(Patch(text, "fence_proxy_async()\n                warpgroup_barrier()",
                     "fence_proxy_async()"),
               "written while the tma_store at line");
  }
  SECTION("stores still in flight at the end") {
    fails_with(Patch(text, "            tma_store_wait(0)", "            pass"),
               "tma_store group(s) of this thread not waited for");
  }
}

TEST_CASE("ping-pong wgmma GEMM (one warp group per tile, alternating)") {
  for (auto consts : std::vector<std::map<std::string, std::string>>{
           {{"SMS", "3"}, {"GROUP", "2"}},
           {{"SMS", "3"}, {"BM", "128"}, {"BN", "128"}, {"STAGES", "3"}}}) {
    auto r = RunExample("gemm_wgmma_pingpong.py", "", {{"M", 256}, {"N", 512}, {"K", 256}}, consts);
    INFO(r.status().message());
    REQUIRE(r.ok());
    CHECK(Worst(r->t[2].data, Gemm(r->t[0], r->t[1]), 1e-3, 1e-3) <= 1);
  }
}

TEST_CASE("a ping-pong consumer that runs two phases ahead reads stale stages") {
  // Without the turn barrier the second warp group waits on full[s] for its tile's first
  // iteration while the barrier is two phases behind: the parity matches an old phase.
  std::string text = Patch(ReadFile(ExamplePath("gemm_wgmma_pingpong.py")),
                           "mbarrier_wait(turn[1], (i // 2) % 2)", "pass");
  auto r = RunText("noturn.py", text, "", {{"M", 256}, {"N", 512}, {"K", 1024}},
                   {{"SMS", "3"}, {"STAGES", "3"}});
  REQUIRE(!r.ok());
  std::string msg(r.status().message());
  INFO(msg);
  // Either symptom: a stale stage read, or the early release it causes letting the producer
  // refill a stage that a queued wgmma still reads.
  CHECK((msg.find("has not waited for") != std::string::npos ||
         msg.find("while a queued wgmma still reads it") != std::string::npos));
  auto ok = RunExample("gemm_wgmma_pingpong.py", "", {{"M", 256}, {"N", 512}, {"K", 1024}},
                       {{"SMS", "3"}, {"STAGES", "3"}});
  INFO(ok.status().message());
  REQUIRE(ok.ok());
  CHECK(Worst(ok->t[2].data, Gemm(ok->t[0], ok->t[1]), 1e-3, 1e-3) <= 1);
}

TEST_CASE("wgmma pipeline hazards are reported") {
  std::string text = ReadFile(ExamplePath("gemm_wgmma.py"));
  std::map<std::string, int64_t> dims = {{"M", 128}, {"N", 256}, {"K", 256}};
  SECTION("a consumer waiting on the wrong parity deadlocks") {
    auto r = RunText("parity.py",
                     Patch(text, "mbarrier_wait(full[s], (k // STAGES) % 2)",
                           "mbarrier_wait(full[s], (k // STAGES + 1) % 2)"),
                     "", dims);
    REQUIRE(!r.ok());
    std::string msg(r.status().message());
    INFO(msg);
    CHECK(msg.find("deadlock: mbarrier_wait(") != std::string::npos);
    CHECK(msg.find("never returns") != std::string::npos);
  }
  SECTION("a consumer that skips its wait reads data it has not waited for") {
    auto r = RunText("nowait.py", Patch(text, "mbarrier_wait(full[s], (k // STAGES) % 2)", "pass"),
                     "", dims);
    REQUIRE(!r.ok());
    std::string msg(r.status().message());
    INFO(msg);
    CHECK(msg.find("which this thread has not waited for") != std::string::npos);
  }
  SECTION("a producer that does not wait for the release overruns the ring") {
    auto r =
        RunText("noempty.py", Patch(text, "mbarrier_wait(empty[s], (k // STAGES + 1) % 2)", "pass"),
                "", {{"M", 128}, {"N", 256}, {"K", 512}}, {{"STAGES", "2"}});
    REQUIRE(!r.ok());
    std::string msg(r.status().message());
    INFO(msg);
    CHECK(msg.find("deadlock: mbarrier_wait(full[0], parity 0) never returns") !=
          std::string::npos);
  }
  SECTION("releasing a stage before the wgmma that reads it completes is an error") {
    auto r = RunText("early_release.py",
                     Patch(text,
                           "if k > 0 and thread_id() % 128 == 0:\n"
                           "                mbarrier_arrive(empty[(k - 1) % STAGES])",
                           "if thread_id() % 128 == 0:\n"
                           "                mbarrier_arrive(empty[s])"),
                     "", {{"M", 128}, {"N", 256}, {"K", 512}}, {{"STAGES", "2"}});
    REQUIRE(!r.ok());
    std::string msg(r.status().message());
    INFO(msg);
    CHECK(msg.find("while a queued wgmma still reads it") != std::string::npos);
  }
  SECTION("storing the accumulator before wgmma_wait is an error") {
    auto r = RunText("nowgwait.py", Patch(text, "        wgmma_wait(0)\n", ""), "", dims);
    REQUIRE(!r.ok());
    std::string msg(r.status().message());
    INFO(msg);
    CHECK(msg.find("in flight") != std::string::npos);
    CHECK(msg.find("wgmma_wait") != std::string::npos);
  }
  SECTION("too few expected bytes complete the phase early: the last load is still in flight") {
    auto r =
        RunText("tx.py", Patch(text, "(BM * BK + BK * BN) * 2)", "(BM * BK + BK * BN) * 2 - 128)"),
                "", dims);
    REQUIRE(!r.ok());
    INFO(r.status().message());
  }
  SECTION("a B buffer without the 128-byte swizzle is refused") {
    auto r = RunText(
        "noswz.py",
        Patch(text, "sB = shared(bf16, (STAGES, BN // 64, BK, 64), swizzle=Swizzle(3, 3, 3))",
              "sB = shared(bf16, (STAGES, BN // 64, BK, 64))"),
        "", dims);
    REQUIRE(!r.ok());
    std::string msg(r.status().message());
    INFO(msg);
    CHECK(msg.find("128-byte swizzle") != std::string::npos);
  }
}

TEST_CASE("MFMA GEMMs (gfx942, 64-lane waves)") {
  auto r = RunExample("gemm_mfma.py", "gemm_mfma32", {{"M", 128}, {"N", 64}, {"K", 64}});
  INFO(r.status().message());
  REQUIRE(r.ok());
  CHECK(Worst(r->t[2].data, Gemm(r->t[0], r->t[1]), 1e-3, 1e-3) <= 1);
  auto r16 = RunExample("gemm_mfma.py", "gemm_mfma16", {{"M", 64}, {"N", 128}, {"K", 64}});
  INFO(r16.status().message());
  REQUIRE(r16.ok());
  CHECK(Worst(r16->t[2].data, Gemm(r16->t[0], r16->t[1]), 1e-6, std::ldexp(1.0, -8)) <= 1);
}

TEST_CASE("softmax") {
  auto r = RunExample("softmax.py", "", {{"R", 5}, {"N", 300}});
  REQUIRE(r.ok());
  const HostTensor& X = r->t[0];
  std::vector<double> ref(5 * 300);
  for (int i = 0; i < 5; ++i) {
    double m = -1e300, s = 0;
    for (int j = 0; j < 300; ++j) m = std::max(m, X.At({i, j}));
    for (int j = 0; j < 300; ++j) s += std::exp(X.At({i, j}) - m);
    for (int j = 0; j < 300; ++j) ref[i * 300 + j] = std::exp(X.At({i, j}) - m) / s;
  }
  CHECK(Worst(r->t[1].data, ref, 1e-7, 1e-4) <= 1);
}

TEST_CASE("rmsnorm") {
  auto r = RunExample("rmsnorm.py", "", {{"R", 7}, {"N", 200}});
  INFO(r.status().message());
  REQUIRE(r.ok());
  const HostTensor &X = r->t[0], &W = r->t[1];
  std::vector<double> ref(7 * 200);
  for (int i = 0; i < 7; ++i) {
    double ss = 0;
    for (int j = 0; j < 200; ++j) ss += X.At({i, j}) * X.At({i, j});
    double scale = 1.0 / std::sqrt(ss / 200 + 1e-6);
    for (int j = 0; j < 200; ++j) ref[i * 200 + j] = X.At({i, j}) * scale * W.At({j});
  }
  CHECK(Worst(r->t[2].data, ref, 1e-6, std::ldexp(1.0, -7)) <= 1);
}

// Attention in double from the (already rounded) inputs, layout [BH, S, D].
// Query head h reads key/value head h / group (GQA).
std::vector<double> AttentionRef(const HostTensor& Q, const HostTensor& K, const HostTensor& V,
                                 bool causal, int group = 1) {
  int BH = static_cast<int>(Q.shape[0]), S = static_cast<int>(Q.shape[1]),
      D = static_cast<int>(Q.shape[2]);
  std::vector<double> ref(static_cast<size_t>(BH) * S * D);
  for (int h = 0; h < BH; ++h)
    for (int i = 0; i < S; ++i) {
      std::vector<double> s(S);
      double m = -1e300, l = 0;
      int n = causal ? i + 1 : S;
      for (int j = 0; j < n; ++j) {
        double d = 0;
        for (int x = 0; x < D; ++x) d += Q.At({h, i, x}) * K.At({h / group, j, x});
        s[j] = d / std::sqrt(double(D));
        m = std::max(m, s[j]);
      }
      for (int j = 0; j < n; ++j) l += std::exp(s[j] - m);
      for (int x = 0; x < D; ++x) {
        double o = 0;
        for (int j = 0; j < n; ++j) o += std::exp(s[j] - m) / l * V.At({h / group, j, x});
        ref[(static_cast<size_t>(h) * S + i) * D + x] = o;
      }
    }
  return ref;
}

TEST_CASE("flash attention forward") {
  for (const char* causal : {"False", "True"}) {
    auto r = RunExample("flash_attention.py", "", {{"BH", 2}, {"S", 96}},
                        {{"CAUSAL", causal}, {"BQ", "32"}, {"HD", "32"}});
    INFO(r.status().message());
    REQUIRE(r.ok());
    auto ref = AttentionRef(r->t[0], r->t[1], r->t[2], std::string(causal) == "True");
    CHECK(Worst(r->t[3].data, ref, 1e-3, 1e-3) <= 1);
  }
}

// Tensor-core flash attention: P is rounded to bf16 before P V (as on the
// hardware), so the tolerance is that of one bf16 rounding of the weights.
TEST_CASE("flash attention forward on mma.sync fragments") {
  for (const char* causal : {"False", "True"}) {
    for (const char* hd : {"64", "128"}) {
      INFO(causal << " HD=" << hd);
      auto r = RunExample("flash_attention_mma.py", "", {{"BH", 2}, {"S", 128}},
                          {{"CAUSAL", causal}, {"BQ", "32"}, {"BKV", "32"}, {"HD", hd}});
      INFO(r.status().message());
      REQUIRE(r.ok());
      auto ref = AttentionRef(r->t[0], r->t[1], r->t[2], std::string(causal) == "True");
      CHECK(Worst(r->t[3].data, ref, 2e-3, 4e-3) <= 1);
    }
  }
}

// A [heads * S, D] tensor viewed as [heads, S, D] (row-major either way).
HostTensor Heads(HostTensor t, int64_t s) {
  int64_t d = t.shape[1];
  t.shape = {t.shape[0] / s, s, d};
  t.stride = {s * d, d, 1};
  return t;
}

// The FA3-style kernel: wgmma on both products (P from registers), the online
// softmax on wgmma accumulators, K/V through a TMA + mbarrier ring.
TEST_CASE("flash attention forward on wgmma (warp-specialized, TMA)") {
  struct Case {
    const char* causal;
    const char* hd;
    int g, bh, s, stages;
    const char* kernel;  // "" = flash_attention_wgmma (overlapped)
  };
  for (const Case& c :
       {Case{"False", "64", 1, 1, 256, 2, ""}, Case{"True", "64", 2, 2, 256, 3, ""},
        Case{"False", "128", 1, 1, 256, 2, ""}, Case{"True", "128", 1, 1, 384, 2, ""},
        Case{"False", "64", 1, 1, 384, 3, "flash_attention_wgmma_serial"},
        Case{"True", "128", 2, 2, 256, 2, "flash_attention_wgmma_serial"},
        Case{"False", "64", 1, 1, 384, 3, "flash_attention_wgmma_pingpong"},
        Case{"True", "64", 1, 1, 256, 2, "flash_attention_wgmma_pingpong"},
        Case{"True", "128", 2, 2, 256, 2, "flash_attention_wgmma_pingpong"},
        // D256 (four 64-wide chunks, BN 64); MQA (G = BH: one kv head) at S = 192, where the
        // last query block overlaps the one before it.
        Case{"True", "256", 2, 2, 256, 2, "flash_attention_wgmma_pingpong"},
        Case{"False", "256", 4, 4, 192, 2, "flash_attention_wgmma_pingpong"},
        Case{"False", "64", 1, 2, 256, 2, "flash_attention_wgmma_persistent"},
        Case{"True", "128", 2, 2, 384, 3, "flash_attention_wgmma_persistent"}}) {
    INFO(c.kernel << " " << c.causal << " HD=" << c.hd << " G=" << c.g << " S=" << c.s);
    int64_t hkv = c.bh / c.g;
    const bool persistent = std::string(c.kernel) == "flash_attention_wgmma_persistent";
    std::map<std::string, std::string> consts = {{"CAUSAL", c.causal},
                                                 {"HD", c.hd},
                                                 {"G", std::to_string(c.g)},
                                                 {"STAGES", std::to_string(c.stages)}};
    if (std::string(c.hd) == "256") consts["BN"] = "64";
    if (persistent) consts["SMS"] = "2";  // 2 blocks: each runs several tiles (S / 128 * BH)
    auto r = RunExample(persistent ? "flash_attention_wgmma_persistent.py"
                                   : "../kb/templates/flash_attention_wgmma.py",
                        c.kernel,
                        {{"RQ", c.bh * c.s}, {"RKV", hkv * c.s}, {"BH", c.bh}, {"S", c.s}}, consts);
    INFO(r.status().message());
    REQUIRE(r.ok());
    auto ref = AttentionRef(Heads(r->t[0], c.s), Heads(r->t[1], c.s), Heads(r->t[2], c.s),
                            std::string(c.causal) == "True", c.g);
    CHECK(Worst(r->t[3].data, ref, 2e-3, 4e-3) <= 1);
  }
}

// Two warp groups hand a shared value back and forth through two named
// barriers: arrive (no wait) on the other's barrier, sync on one's own.
constexpr char kNamedPingPong[] = R"(@kernel(threads=256, arch="sm_90a")
def nb(X: Tensor[f32, "N"]):
    grid(1)
    buf = shared(f32, (1,))
    if warpgroup_id() == 0:
        for i in range(3):
            if thread_id() == 0:
                buf[0] = f32(i + 1) * 10.0
            named_barrier_arrive(5, 256)
            named_barrier_sync(6, 256)
    else:
        acc = 0.0
        for i in range(3):
            named_barrier_sync(5, 256)
            acc = acc + buf[0]
            named_barrier_arrive(6, 256)
        if thread_id() == 128:
            X[0] = acc
)";

TEST_CASE("named barriers: arrive and sync hand data between warp groups") {
  auto r = RunText("nb.py", kNamedPingPong, "", {{"N", 1}});
  INFO(r.status().message());
  REQUIRE(r.ok());
  CHECK(r->t[0].data[0] == 60.0);
}

TEST_CASE("named barrier misuse is a located error") {
  struct Bad {
    const char* from;
    const char* to;
    const char* msg;
  };
  for (const Bad& b :
       {Bad{"            named_barrier_arrive(5, 256)\n            named_barrier_sync(6",
            "            named_barrier_sync(6", "named_barrier_sync(6, 256) never returns"},
        Bad{"named_barrier_sync(5, 256)", "named_barrier_sync(5, 128)",
            "every arrival of one generation must give the same count"},
        Bad{"named_barrier_sync(5, 256)", "named_barrier_sync(0, 256)",
            "named barrier ids are 1..15"},
        Bad{"named_barrier_sync(5, 256)", "named_barrier_sync(5, 100)", "a multiple of 32"},
        Bad{"        acc = 0.0\n", "        warpgroup_barrier()\n        acc = 0.0\n",
            "warpgroup_barrier()'s"}}) {
    std::string text = kNamedPingPong;
    std::string from = b.from, to = b.to;
    size_t p = text.find(from);
    REQUIRE(p != std::string::npos);
    text.replace(p, from.size(), to);
    if (std::string(b.msg) == "warpgroup_barrier()'s") {
      // ids 1..2 belong to warpgroup_barrier() in a 256-thread kernel that uses it
      text = absl::StrReplaceAll(text, {{"(5, 256)", "(2, 256)"}});
    }
    auto r = RunText("bad.py", text, "", {{"N", 1}});
    REQUIRE_FALSE(r.ok());
    std::string msg(r.status().message());
    INFO(msg);
    CHECK(msg.find("bad.py:") == 0);
    CHECK(msg.find(b.msg) != std::string::npos);
  }
}

TEST_CASE("softmax on a wgmma accumulator before its wait is reported") {
  std::string text = ReadFile(ExamplePath("../kb/templates/flash_attention_wgmma.py"));
  const std::string wait = "wgmma_wait(1)  ";
  size_t p = text.rfind(wait);  // the last kernel's (flash_attention_wgmma, the default)
  REQUIRE(p != std::string::npos);
  text.replace(p, wait.size(), "pass           ");
  auto r = RunText("early.py", text, "", {{"RQ", 128}, {"RKV", 128}, {"BH", 1}, {"S", 128}},
                   {{"HD", "64"}, {"BN", "64"}});
  REQUIRE(!r.ok());
  std::string msg(r.status().message());
  INFO(msg);
  CHECK(msg.find("early.py:") == 0);
  CHECK(msg.find("wgmma(s) on it are in flight") != std::string::npos);
}

TEST_CASE("a pipeline that skips its wait reads stale shared memory") {
  std::string text = ReadFile(ExamplePath("../kb/templates/gemm_mma.py"));
  size_t p = text.find("wait_group(STAGES - 2)");
  REQUIRE(p != std::string::npos);
  text.replace(p, std::string("wait_group(STAGES - 2)").size(), "pass");
  auto r = RunText("nowait.py", text, "", {{"M", 128}, {"N", 128}, {"K", 64}});
  REQUIRE(r.ok());
  CHECK(Worst(r->t[2].data, Gemm(r->t[0], r->t[1]), 1e-3, 1e-3) > 1);
}

TEST_CASE("out-of-bounds accesses are reported with the thread") {
  std::string text = ReadFile(ExamplePath("vector_add.py"));
  size_t p = text.find("    if i < N:\n        Z[i]");
  REQUIRE(p != std::string::npos);
  text.replace(p, std::string("    if i < N:\n        Z[i]").size(), "    if True:\n        Z[i]");
  auto r = RunText("oob.py", text, "", {{"N", 1000}});
  REQUIRE(!r.ok());
  std::string msg(r.status().message());
  INFO(msg);
  CHECK(msg.find("oob.py:9:16: error: ") == 0);
  CHECK(msg.find("out-of-bounds access to X: index [1000] outside shape [1000]") !=
        std::string::npos);
  CHECK(msg.find("block (3,0,0), thread 232") != std::string::npos);
}

TEST_CASE("divergent barriers and collectives are errors") {
  auto r = RunText(
      "div.py",
      "@kernel(threads=64)\ndef k(X: Tensor[f32, \"N\"]):\n    grid(1)\n    if thread_id() < 32:\n"
      "        barrier()\n    X[thread_id()] = 1.0\n",
      "", {{"N", 64}});
  REQUIRE(!r.ok());
  CHECK(std::string(r.status().message()).find("never reached by thread 32") != std::string::npos);
  auto s = RunText("div2.py",
                   "@kernel(threads=32)\ndef k(X: Tensor[f32, \"N\"]):\n    grid(1)\n    x = 1.0\n "
                   "   if lane_id() < 16:\n"
                   "        x = shfl_xor(x, 1)\n    else:\n        x = shfl_down(x, 1)\n    "
                   "X[thread_id()] = x\n",
                   "", {{"N", 32}});
  REQUIRE(!s.ok());
  CHECK(std::string(s.status().message()).find("divergent") != std::string::npos);
}

TEST_CASE("runaway loops hit the instruction budget") {
  CheckOptions opt;
  auto m =
      Compile(std::make_shared<SourceFile>("loop.py",
                                           "@kernel(threads=1)\ndef k():\n    grid(1)\n    x = 0\n"
                                           "    while x >= 0:\n        x = (x + 1) % 7\n"),
              opt);
  REQUIRE(m.ok());
  LaunchArgs la;
  la.max_instructions = 1000000;
  std::vector<HostTensor> ts;
  absl::Status st = Run(*m, m->functions[0], la, &ts);
  CHECK(std::string(st.message()).find("instruction budget") != std::string::npos);
}

TEST_CASE("warp shuffles and reductions") {
  auto r = RunText(
      "shfl.py",
      "@kernel(threads=64)\ndef k(X: Tensor[f32, \"N\"], Y: Tensor[f32, \"N\", 4]):\n    grid(1)\n"
      "    t = thread_id()\n    x = X[t]\n    Y[t, 0] = shfl_xor(x, 3)\n    Y[t, 1] = shfl_down(x, "
      "5)\n"
      "    Y[t, 2] = warp_reduce_max(x)\n    Y[t, 3] = block_reduce_sum(x)\n",
      "", {{"N", 64}});
  REQUIRE(r.ok());
  const HostTensor &X = r->t[0], &Y = r->t[1];
  double total = 0;
  for (int t = 0; t < 64; ++t) total += X.data[t];
  for (int t = 0; t < 64; ++t) {
    int w = t / 32 * 32, l = t % 32;
    CHECK(Y.At({t, 0}) == X.data[w + (l ^ 3)]);
    CHECK(Y.At({t, 1}) == X.data[l + 5 < 32 ? t + 5 : t]);
    double mx = -1e300;
    for (int i = 0; i < 32; ++i) mx = std::max(mx, X.data[w + i]);
    CHECK(Y.At({t, 2}) == mx);
    CHECK(std::fabs(Y.At({t, 3}) - total) < 1e-4);
  }
}

TEST_CASE("a slice v[a:a + n] with a run-time start has the constant extent n") {
  // The last 16 rows of X, wherever N puts them: a constant-shaped view for copy().
  auto r = RunText("slice.py",
                   "@kernel(threads=32)\ndef k(X: Tensor[f32, \"N\", 8], Y: Tensor[f32, 16, 8]):\n"
                   "    grid(1)\n    r0 = N - 16\n"
                   "    copy(X[r0:r0 + 16, :], Y.tile((16, 8), (0, 0)), thread_layout((4, 8)))\n",
                   "", {{"N", 40}});
  REQUIRE(r.ok());
  const HostTensor &X = r->t[0], &Y = r->t[1];
  for (int i = 0; i < 16; ++i)
    for (int j = 0; j < 8; ++j) CHECK(Y.At({i, j}) == X.At({24 + i, j}));
}

}  // namespace
}  // namespace argus::dsl
