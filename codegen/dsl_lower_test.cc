// Compile-side checks of the DSL lowering (no GPU needed): every example
// compiles for both targets or says which target lacks what; the PTX
// assembles with ptxas; the gfx942 disassembly has the intended instructions.
#include <catch2/catch.hpp>
#include <fstream>
#include <sstream>

#include "codegen/amdgpu_backend.h"
#include "codegen/compile_cli.h"
#include "codegen/dsl_compile.h"
#include "codegen/lower.h"
#include "codegen/nvptx_backend.h"
#include "dsl/check.h"

namespace argus::codegen {
namespace {

std::string Example(const std::string& name) {
  return std::string(ARGUS_SOURCE_DIR) + "/examples/" + name;
}

bool Has(const std::string& s, const std::string& what) {
  return s.find(what) != std::string::npos;
}

DslArtifacts MustCompile(const std::string& file, const std::string& kernel,
                         const std::string& target, int cov = 5) {
  DslCompileOptions o;
  o.target = target;
  o.kernel = kernel;
  o.code_object_version = cov;
  auto a = CompileDslFile(file, o);
  INFO(file << " " << kernel << " " << target << ": " << a.status().message());
  REQUIRE(a.ok());
  return *std::move(a);
}

struct Case {
  const char* file;
  const char* kernel;
  const char* own;  // the arch it is pinned to ("" = portable)
};
const Case kCases[] = {
    {"vector_add.py", "vector_add", ""},
    {"gemm_naive.py", "gemm_naive", ""},
    {"gemm_smem.py", "gemm_smem", ""},
    {"softmax.py", "softmax", ""},
    {"rmsnorm.py", "rmsnorm", ""},
    {"flash_attention.py", "flash_attention", ""},
    {"../kb/templates/gemm_mma.py", "gemm_mma", "sm_90a"},
    {"flash_attention_mma.py", "flash_attention_mma", "sm_90a"},
    {"gemm_mfma.py", "gemm_mfma32", "gfx942"},
    {"gemm_mfma.py", "gemm_mfma16", "gfx942"},
    {"gemm_wgmma.py", "gemm_wgmma", "sm_90a"},
    {"../kb/templates/gemm_wgmma_persistent.py", "gemm_wgmma_persistent", "sm_90a"},
    {"gemm_wgmma_pingpong.py", "gemm_wgmma_pingpong", "sm_90a"},
    {"../kb/templates/gemm_wgmma_tma_store.py", "gemm_wgmma_tma_store", "sm_90a"},
    {"../kb/templates/gemm_wgmma_splitk.py", "gemm_splitk_dp", "sm_90a"},
    {"../kb/templates/gemm_wgmma_splitk.py", "gemm_splitk_tail", "sm_90a"},
    {"../kb/templates/flash_attention_wgmma.py", "flash_attention_wgmma", "sm_90a"},
    {"../kb/templates/flash_attention_wgmma.py", "flash_attention_wgmma_pingpong", "sm_90a"},
    {"flash_attention_wgmma_persistent.py", "flash_attention_wgmma_persistent", "sm_90a"},
};

TEST_CASE("Every example compiles for both targets or names the target it lacks", "[lower]") {
  bool ptxas = FindPtxas().has_value();
  for (const Case& c : kCases) {
    for (const char* target : {"sm_90a", "gfx942"}) {
      DslCompileOptions o;
      o.target = target;
      o.kernel = c.kernel;
      auto a = CompileDslFile(Example(c.file), o);
      INFO(c.kernel << " for " << target << ": " << a.status().message());
      if (*c.own && std::string(c.own) != target) {
        REQUIRE_FALSE(a.ok());
        std::string msg(a.status().message());
        CHECK(Has(msg, c.own));
        CHECK(Has(msg, std::string(c.file) + ":"));  // located
        continue;
      }
      REQUIRE(a.ok());
      CHECK(a->metadata.symbol == c.kernel);
      if (std::string(target) == "sm_90a") {
        CHECK(Has(a->ptx, ".target sm_90a"));
        if (ptxas) {
          CHECK(a->metadata.format == "cubin");  // ptxas -arch=sm_90a accepted it
          CHECK(!a->cubin.empty());
          CHECK(a->metadata.resources.registers > 0);
        }
      } else {
        CHECK(a->metadata.format == "hsaco");
        CHECK(a->metadata.resources.scratch_bytes == 0);
      }
    }
  }
}

TEST_CASE("gfx942 GEMMs use MFMA, buffer loads and LDS, with no scratch", "[lower]") {
  for (const char* kernel : {"gemm_mfma32", "gemm_mfma16"}) {
    DslArtifacts a = MustCompile(Example("gemm_mfma.py"), kernel, "gfx942");
    auto text = DisassembleAmdgpu(a.code_object);
    REQUIRE(text.ok());
    INFO(kernel);
    CHECK(Has(*text, std::string("v_mfma_f32_") + (kernel[9] == '3' ? "32x32x8" : "16x16x16")));
    CHECK(Has(*text, "buffer_load"));
    CHECK(Has(*text, "ds_read"));
    CHECK(Has(*text, "ds_write"));
    CHECK_FALSE(Has(*text, "scratch_"));
    CHECK(a.metadata.resources.scratch_bytes == 0);
    CHECK(a.metadata.resources.vgpr_spills == 0);
    CHECK(a.metadata.resources.static_shared_bytes > 0);
  }
  DslArtifacts s = MustCompile(Example("gemm_smem.py"), "gemm_smem", "gfx942");
  auto text = DisassembleAmdgpu(s.code_object);
  REQUIRE(text.ok());
  CHECK(Has(*text, "ds_read_b128"));
  CHECK(s.metadata.resources.scratch_bytes == 0);
}

TEST_CASE("gfx942 hints lower to s_waitcnt / sched_group_barrier / s_setprio", "[lower]") {
  DslCompileOptions o;
  o.target = "gfx942";
  o.kernel = "gemm_mfma32";
  o.want_llvm = true;
  auto a = CompileDslFile(Example("gemm_mfma.py"), o);
  REQUIRE(a.ok());
  CHECK(Has(a->assembly, "s_waitcnt vmcnt(0)"));
  CHECK(Has(a->llvm_ir, "@llvm.amdgcn.sched.group.barrier(i32 8, i32 1, i32 0)"));
  DslArtifacts b = MustCompile(Example("gemm_mfma.py"), "gemm_mfma16", "gfx942");
  CHECK(Has(b.assembly, "s_setprio 1"));
  DslArtifacts v4 = MustCompile(Example("vector_add.py"), "vector_add", "gfx942", 4);
  auto ver = ReadCodeObjectVersion(v4.code_object);
  REQUIRE(ver.ok());
  CHECK(*ver == 4);
}

TEST_CASE("sm_90a flash attention keeps the softmax in registers between the MMAs", "[lower]") {
  bool ptxas = FindPtxas().has_value();
  for (const char* hd : {"64", "128"}) {
    for (const char* causal : {"False", "True"}) {
      DslCompileOptions o;
      o.target = "sm_90a";
      o.kernel = "flash_attention_mma";
      o.consts = {{"HD", hd}, {"CAUSAL", causal}};
      auto a = CompileDslFile(Example("flash_attention_mma.py"), o);
      INFO("HD=" << hd << " CAUSAL=" << causal << ": " << a.status().message());
      REQUIRE(a.ok());
      CHECK(Has(a->ptx, "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"));
      CHECK(Has(a->ptx, "ldmatrix.sync.aligned.m8n8.x4.trans"));   // V: B from row-major
      CHECK(Has(a->ptx, "ldmatrix.sync.aligned.m8n8.x4.shared"));  // K^T: B without .trans
      CHECK_FALSE(Has(a->ptx, "ld.shared.u16"));                   // no scalar fragment loads
      CHECK(Has(a->ptx, "cp.async"));
      CHECK(Has(a->ptx, "shfl.sync.bfly.b32"));  // row_max / row_sum: the quad
      CHECK(Has(a->ptx, "ex2.approx"));
      CHECK(Has(a->ptx, "cvt.rn.bf16x2.f32"));  // to_operand: registers, one cvt per pair
      CHECK_FALSE(Has(a->ptx, "ld.local"));
      CHECK_FALSE(Has(a->ptx, "st.local"));
      if (ptxas) CHECK(a->metadata.resources.registers > 0);
    }
  }
}

TEST_CASE("sm_90a FA3-style attention: wgmma with K-major B and register A", "[lower]") {
  bool ptxas = FindPtxas().has_value();
  for (const char* hd : {"64", "128"}) {
    for (const char* causal : {"False", "True"}) {
      DslCompileOptions o;
      o.target = "sm_90a";
      o.kernel = "flash_attention_wgmma";
      o.consts = {{"HD", hd}, {"CAUSAL", causal}};
      auto a = CompileDslFile(Example("../kb/templates/flash_attention_wgmma.py"), o);
      INFO("HD=" << hd << " CAUSAL=" << causal << ": " << a.status().message());
      REQUIRE(a.ok());
      // S = Q K^T: both descriptors, B K-major (transpose bit 0).
      CHECK(Has(a->ptx, "k16.f32.bf16.bf16 {"));
      CHECK(Has(a->ptx, ", argus_p, 1, 1, 0, 0;"));
      // O += P V: A from four registers, B N-major (transpose bit 1).
      CHECK(Has(a->ptx, "}, {%r"));
      CHECK(Has(a->ptx, ", argus_p, 1, 1, 1;"));
      CHECK(Has(a->ptx, "cp.async.bulk.tensor.2d"));
      CHECK(Has(a->ptx, "shfl.sync.bfly.b32"));  // row_max / row_sum: the quad
      CHECK(Has(a->ptx, "ex2.approx"));
      CHECK(Has(a->ptx, "cvt.rn.bf16x2.f32"));  // to_operand: one cvt per register
      // P stays packed (.b32 pairs) into the register-A wgmma: no 16-bit halves.
      CHECK_FALSE(Has(a->ptx, "cvt.u32.u16"));
      CHECK_FALSE(Has(a->ptx, "ld.local"));
      CHECK_FALSE(Has(a->ptx, "st.local"));
      if (ptxas) CHECK(a->metadata.resources.registers > 0);
    }
  }
}

TEST_CASE("sm_90a ping-pong attention: named barriers order the warp groups' wgmmas", "[lower]") {
  bool ptxas = FindPtxas().has_value();
  DslCompileOptions o;
  o.target = "sm_90a";
  o.kernel = "flash_attention_wgmma_pingpong";
  o.consts = {{"HD", "128"}};
  auto a = CompileDslFile(Example("../kb/templates/flash_attention_wgmma.py"), o);
  INFO(a.status().message());
  REQUIRE(a.ok());
  CHECK(Has(a->ptx, "bar.arrive %r"));  // the id is a register: 3 + warpgroup_id()
  // Fragment exp2 flushes subnormals: no FSETP/FMUL rescale around each MUFU.EX2.
  CHECK(Has(a->ptx, "ex2.approx.ftz.f32"));
  CHECK(Has(a->ptx, "bar.sync %r"));
  CHECK(Has(a->ptx, ", 256;"));
  // The register-A wgmmas of P V follow their fence with no register writes
  // between them: the operand pairs are read before the fence.
  size_t pv = a->ptx.find("}, {%r");
  REQUIRE(pv != std::string::npos);
  size_t fence = a->ptx.rfind("wgmma.fence.sync.aligned;", pv);
  REQUIRE(fence != std::string::npos);
  CHECK_FALSE(Has(a->ptx.substr(fence, pv - fence), "or.b32"));
  CHECK_FALSE(Has(a->ptx, "ld.local"));
  if (ptxas) CHECK(a->metadata.resources.registers > 0);
}

TEST_CASE("fragment math on gfx942 is a located error", "[lower]") {
  const char* text = R"(@kernel(threads=64, arch="gfx942")
def k(C: Tensor[f32, "M", "N"]):
    grid(1)
    s = fragment(f32, (32, 32), mma="mfma_f32_32x32x8_bf16", warps=(1, 1))
    store(exp2(s * 2.0), C.tile((32, 32), (0, 0)))
)";
  DslCompileOptions o;
  o.target = "gfx942";
  auto a = CompileDslSource("fm.py", text, o);
  REQUIRE_FALSE(a.ok());
  std::string msg(a.status().message());
  INFO(msg);
  CHECK(Has(msg, "fm.py:5:"));
  CHECK(Has(msg, "fragment math"));
}

TEST_CASE("sm_90a GEMM uses cp.async, ldmatrix, mma.sync and 16-byte accesses", "[lower]") {
  DslArtifacts a = MustCompile(Example("../kb/templates/gemm_mma.py"), "gemm_mma", "sm_90a");
  CHECK(Has(a.ptx, "cp.async.cg.shared.global"));
  CHECK(Has(a.ptx, "cp.async.commit_group"));
  CHECK(Has(a.ptx, "cp.async.wait_group"));
  CHECK(Has(a.ptx, "ldmatrix.sync.aligned.m8n8.x4.shared.b16"));
  CHECK(Has(a.ptx, "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16"));
  CHECK(Has(a.ptx, "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"));
  if (FindPtxas()) {
    CHECK(a.metadata.resources.spill_stores == 0);
    CHECK(a.metadata.resources.static_shared_bytes == 32768);
  }
  DslArtifacts s = MustCompile(Example("flash_attention.py"), "flash_attention", "sm_90a");
  CHECK(Has(s.ptx, "ld.global.v4.u32"));  // the copies' 16-byte vector path
  DslArtifacts r = MustCompile(Example("rmsnorm.py"), "rmsnorm", "sm_90a");
  CHECK(Has(r.ptx, "shfl.sync.idx.b32"));
}

TEST_CASE("Unsupported constructs are located errors", "[lower]") {
  const char* src = R"(
@kernel(threads=32)
def k(X: Tensor[f32, "N"], Y: Tensor[f32, "N"]):
    grid(1)
    t = e4m3(X[thread_id()])
    Y[thread_id()] = f32(t)
)";
  DslCompileOptions o;
  o.target = "sm_90a";
  auto a = CompileDslSource("fp8.py", src, o);
  REQUIRE_FALSE(a.ok());
  std::string msg(a.status().message());
  CHECK(Has(msg, "fp8"));
  CHECK(Has(msg, "fp8.py:5:"));
  o.target = "gfx950";
  CHECK_FALSE(CompileDslSource("fp8.py", src, o).ok());
}

TEST_CASE("Launch geometry and argus compile", "[lower]") {
  DslCompileOptions o;
  o.target = "sm_90a";
  o.dims = {{"M", 1000}, {"N", 300}, {"K", 64}};
  auto a = CompileDslFile(Example("../kb/templates/gemm_mma.py"), o);
  REQUIRE(a.ok());
  CHECK(a->metadata.grid == std::array<int, 3>{8, 3, 1});
  CHECK(a->metadata.block == std::array<int, 3>{256, 1, 1});
  REQUIRE(a->metadata.params.size() == 6);
  CHECK(a->metadata.params[0].kind == "ptr");
  CHECK(a->metadata.params[0].dtype == "bf16");
  CHECK(a->metadata.params[3].name == "M");
  std::ostringstream out;
  REQUIRE(
      CompileVerb({Example("vector_add.py"), "--target", "gfx942", "--emit", "llvm"}, out).ok());
  CHECK(Has(out.str(), "define amdgpu_kernel void @vector_add"));
  std::ostringstream bad;
  CHECK_FALSE(
      CompileVerb({Example("vector_add.py"), "--target", "sm_75", "-o", "/tmp/x"}, bad).ok());
}

}  // namespace
}  // namespace argus::codegen

namespace argus::codegen {
namespace {

TEST_CASE("Hopper GEMM: wgmma, TMA, mbarrier, setmaxnreg in the PTX; ptxas sm_90a", "[lower]") {
  for (const char* k : {"gemm_wgmma", "gemm_wgmma_persistent", "gemm_wgmma_pingpong"}) {
    const std::string dir = std::string(k) == "gemm_wgmma_persistent" ? "../kb/templates/" : "";
    DslArtifacts a = MustCompile(Example(dir + k + ".py"), k, "sm_90a");
    INFO(k);
    CHECK(Has(a.ptx, "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16"));
    CHECK(Has(a.ptx, "wgmma.fence.sync.aligned"));
    CHECK(Has(a.ptx, "wgmma.commit_group.sync.aligned"));
    CHECK(Has(a.ptx, "wgmma.wait_group.sync.aligned 1"));
    CHECK(
        Has(a.ptx, "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"));
    CHECK(Has(a.ptx, "mbarrier.try_wait.parity.shared::cta.b64"));
    CHECK(Has(a.ptx, "mbarrier.arrive.expect_tx.shared::cta.b64"));
    CHECK(Has(a.ptx, "setmaxnreg.dec.sync.aligned.u32 40"));
    CHECK(Has(a.ptx, "setmaxnreg.inc.sync.aligned.u32 232"));
    CHECK(Has(a.ptx, ".maxntid 384, 1, 1"));
    CHECK(Has(a.ptx, ".minnctapersm 1"));
    CHECK(Has(a.ptx, ".align 1024 .b8 argus_dynamic_shared"));
    CHECK(Has(a.ptx, "st.global.v2.f32"));  // the paired epilogue
    // Two tensor maps (A's 128x64 box, B's 64x64 box), both 128-byte swizzled.
    int maps = 0;
    for (const KernelParam& p : a.metadata.params) {
      if (p.kind != "tensormap") continue;
      ++maps;
      CHECK(p.swizzle == "128B");
      CHECK(p.box.size() == 2);
      int64_t bm = std::string(k) == "gemm_wgmma_pingpong" ? 64 : 128;
      CHECK((p.tensor == "A" ? p.box == std::vector<int64_t>{bm, 64}
                             : p.box == std::vector<int64_t>{64, 64}));
    }
    CHECK(maps == 2);
    CHECK(a.metadata.dynamic_shared_bytes >= 4 * (64 * 64 + 64 * 256) * 2);
    if (FindPtxas()) {
      CHECK(a.metadata.format == "cubin");
      CHECK(a.metadata.resources.registers == 168);  // the cap setmaxnreg starts from
      CHECK(a.metadata.resources.spill_stores == 0);
      CHECK(a.metadata.resources.spill_loads == 0);
    }
    auto amd = CompileDslFile(Example(std::string(k) + ".py"), [&] {
      DslCompileOptions o;
      o.target = "gfx942";
      o.kernel = k;
      return o;
    }());
    REQUIRE_FALSE(amd.ok());
    CHECK(Has(std::string(amd.status().message()), "sm_90a"));
  }
}

TEST_CASE("Hopper GEMM with the TMA-store epilogue: bulk stores, named barriers", "[lower]") {
  const char* k = "gemm_wgmma_tma_store";
  DslArtifacts a = MustCompile(Example("../kb/templates/" + std::string(k) + ".py"), k, "sm_90a");
  CHECK(Has(a.ptx, "cp.async.bulk.tensor.2d.global.shared::cta.bulk_group"));
  CHECK(Has(a.ptx, "cp.async.bulk.commit_group"));
  CHECK(Has(a.ptx, "cp.async.bulk.wait_group.read 1"));
  CHECK(Has(a.ptx, "cp.async.bulk.wait_group.read 0"));
  CHECK(Has(a.ptx, "fence.proxy.async.shared::cta"));
  CHECK(Has(a.ptx, ", 128;"));             // bar.sync id, 128: the warp group's barrier
  CHECK(Has(a.ptx, "st.shared.v2.f32"));   // pairs survive the 16-byte-chunk swizzle
  CHECK(!Has(a.ptx, "st.global.v2.f32"));  // no direct epilogue left
  int maps = 0;
  for (const KernelParam& p : a.metadata.params) {
    if (p.kind != "tensormap") continue;
    ++maps;
    CHECK(p.swizzle == "128B");
    if (p.tensor == "C") CHECK(p.box == std::vector<int64_t>{64, 32});
  }
  CHECK(maps == 3);
  CHECK(a.metadata.dynamic_shared_bytes <= 232448);
  if (FindPtxas()) {
    CHECK(a.metadata.resources.spill_stores == 0);
    CHECK(a.metadata.resources.spill_loads == 0);
  }
}

TEST_CASE("split-K tail GEMM: TMA reduce-add stores in the tail launch only", "[lower]") {
  const char* kAdd = "cp.reduce.async.bulk.tensor.2d.global.shared::cta.add.tile.bulk_group";
  DslArtifacts tail =
      MustCompile(Example("../kb/templates/gemm_wgmma_splitk.py"), "gemm_splitk_tail", "sm_90a");
  CHECK(Has(tail.ptx, kAdd));
  CHECK(!Has(tail.ptx, "cp.async.bulk.tensor.2d.global.shared::cta.bulk_group"));
  DslArtifacts dp =
      MustCompile(Example("../kb/templates/gemm_wgmma_splitk.py"), "gemm_splitk_dp", "sm_90a");
  CHECK(!Has(dp.ptx, kAdd));
  CHECK(Has(dp.ptx, "cp.async.bulk.tensor.2d.global.shared::cta.bulk_group"));
  CHECK((Has(dp.ptx, "st.global.f32") || Has(dp.ptx, "st.global.u32")));  // the tail zeros
  for (const DslArtifacts* a : {&tail, &dp}) {
    CHECK(a->metadata.dynamic_shared_bytes <= 232448);
    if (FindPtxas()) {  // ptxas assembled it (MustCompile): the reduce form is valid sm_90a
      CHECK(a->metadata.resources.spill_stores == 0);
      CHECK(a->metadata.resources.spill_loads == 0);
    }
  }
}

}  // namespace
}  // namespace argus::codegen
