// Tests of the NVPTX and AMDGPU backends on the hand-built kernels. No GPU is
// needed: PTX is assembled with ptxas (skipped, with a message, when absent)
// and AMDGPU code objects are disassembled with llvm-objdump-19.
#include <catch2/catch.hpp>
#include <string>

#include "base/subprocess.h"
#include "codegen/amdgpu_backend.h"
#include "codegen/nvptx_backend.h"
#include "codegen/target.h"
#include "codegen/tempdir.h"
#include "codegen/test_kernels.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"

namespace argus::codegen {
namespace {

bool Contains(const std::string& s, const std::string& what) {
  return s.find(what) != std::string::npos;
}

std::string Disassemble(const std::string& code_object) {
  auto text = DisassembleAmdgpu(code_object);
  REQUIRE(text.ok());
  return *text;
}

TEST_CASE("Unknown architectures are refused", "[codegen]") {
  llvm::LLVMContext ctx;
  TestKernel k = BuildVectorAddNvptx(ctx);
  auto ptx = EmitPtx(*k.module, "sm_9000");
  REQUIRE_FALSE(ptx.ok());
  CHECK(Contains(std::string(ptx.status().message()), "sm_9000"));
  auto co = EmitAmdgpuCodeObject(*k.module, "sm_90a");
  CHECK_FALSE(co.ok());
}

TEST_CASE("Invalid IR is reported, not crashed on", "[codegen]") {
  llvm::LLVMContext ctx;
  llvm::Module m("bad", ctx);
  auto* ft = llvm::FunctionType::get(llvm::Type::getVoidTy(ctx), false);
  auto* f = llvm::Function::Create(ft, llvm::GlobalValue::ExternalLinkage, "k", &m);
  llvm::BasicBlock::Create(ctx, "entry", f);  // no terminator
  auto ptx = EmitPtx(m, "sm_90a");
  REQUIRE_FALSE(ptx.ok());
  CHECK(absl::IsInvalidArgument(ptx.status()));
}

TEST_CASE("Vector add lowers to PTX with 16-byte loads and assembles", "[codegen][nvptx]") {
  llvm::LLVMContext ctx;
  TestKernel k = BuildVectorAddNvptx(ctx);
  auto ptx = EmitPtx(*k.module, "sm_90a");
  REQUIRE(ptx.ok());
  CHECK(Contains(*ptx, ".version 8.0"));
  CHECK(Contains(*ptx, ".target sm_90a"));
  CHECK(Contains(*ptx, ".entry vadd_f32"));
  CHECK(Contains(*ptx, ".v4.f32"));  // ld.global.nc.v4.f32: 16-byte loads
  CHECK(Contains(*ptx, ".maxntid 256"));
  auto as = AssemblePtx(*ptx, "sm_90a");
  if (absl::IsNotFound(as.status())) {
    WARN("SKIPPED ptxas: " << as.status().message());
    return;
  }
  REQUIRE(as.ok());
  REQUIRE(as->kernels.size() == 1);
  CHECK(as->kernels[0].symbol == "vadd_f32");
  CHECK(as->kernels[0].registers > 0);
  CHECK(as->kernels[0].spill_stores == 0);
  CHECK(as->cubin.substr(1, 3) == "ELF");
}

TEST_CASE("bf16 GEMM tile uses mma.sync, ldmatrix, cp.async and assembles", "[codegen][nvptx]") {
  llvm::LLVMContext ctx;
  TestKernel k = BuildGemmBf16Nvptx(ctx);
  auto ptx = EmitPtx(*k.module, "sm_90a");
  REQUIRE(ptx.ok());
  CHECK(Contains(*ptx, "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"));
  CHECK(Contains(*ptx, "ldmatrix.sync.aligned.m8n8.x4.shared.b16"));
  CHECK(Contains(*ptx, "cp.async.cg.shared.global"));
  CHECK(Contains(*ptx, "cp.async.commit_group"));
  CHECK(Contains(*ptx, "cp.async.wait_group 1"));
  CHECK(Contains(*ptx, ".shared .align 16 .b8 gemm_smem[20480]"));
  auto as = AssemblePtx(*ptx, "sm_90a");
  if (absl::IsNotFound(as.status())) {
    WARN("SKIPPED ptxas: " << as.status().message());
    return;
  }
  REQUIRE(as.ok());
  REQUIRE(as->kernels.size() == 1);
  const KernelResources& r = as->kernels[0];
  INFO(as->log);
  CHECK(r.symbol == "gemm_bf16_tn");
  CHECK(r.static_shared_bytes == 20480);
  CHECK(r.spill_stores == 0);
  CHECK(r.spill_loads == 0);
  CHECK(r.scratch_bytes == 0);
  CHECK(r.registers >= 32);
  CHECK(r.registers <= 255);
}

TEST_CASE("ptxas rejects broken PTX with its message", "[codegen][nvptx]") {
  if (!FindPtxas()) {
    WARN("SKIPPED: ptxas not found");
    return;
  }
  auto as = AssemblePtx(".version 8.0\n.target sm_90a\n.address_size 64\nbogus;\n", "sm_90a");
  REQUIRE_FALSE(as.ok());
  CHECK(absl::IsInvalidArgument(as.status()));
}

TEST_CASE("ptxas -v reports are parsed", "[codegen][nvptx]") {
  const char* log =
      "ptxas info    : 0 bytes gmem\n"
      "ptxas info    : Compiling entry function 'k1' for 'sm_90a'\n"
      "ptxas info    : Function properties for k1\n"
      "    16 bytes stack frame, 8 bytes spill stores, 4 bytes spill loads\n"
      "ptxas info    : Used 40 registers, used 1 barriers, 8192 bytes smem, 380 bytes cmem[0]\n"
      "ptxas info    : Compiling entry function 'k2' for 'sm_90a'\n"
      "ptxas info    : Function properties for k2\n"
      "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
      "ptxas info    : Used 8 registers, 360 bytes cmem[0]\n";
  auto ks = ParsePtxasLog(log);
  REQUIRE(ks.size() == 2);
  CHECK(ks[0].symbol == "k1");
  CHECK(ks[0].registers == 40);
  CHECK(ks[0].barriers == 1);
  CHECK(ks[0].static_shared_bytes == 8192);
  CHECK(ks[0].scratch_bytes == 16);
  CHECK(ks[0].spill_stores == 8);
  CHECK(ks[0].spill_loads == 4);
  CHECK(ks[1].registers == 8);
  CHECK(ks[1].static_shared_bytes == 0);
}

TEST_CASE("gfx942 GEMM code object shows MFMA, buffer loads, LDS, no scratch",
          "[codegen][amdgpu]") {
  llvm::LLVMContext ctx;
  TestKernel k = BuildGemmBf16Amdgpu(ctx);
  auto art = CompileAmdgpu(*k.module);
  REQUIRE(art.ok());
  CHECK(Contains(art->assembly, ".amdhsa_kernel gemm_bf16_tn_mfma"));
  CHECK(Contains(art->llvm_ir, "llvm.amdgcn.sched.group.barrier"));
  const std::string dis = Disassemble(art->code_object);
  INFO(dis);
  CHECK(Contains(dis, "v_mfma_f32_32x32x8_bf16"));
  CHECK(Contains(dis, "buffer_load_dwordx4"));
  CHECK(Contains(dis, "ds_write_b128"));
  CHECK(Contains(dis, "ds_read"));  // ds_read2_b64 or ds_read_b64
  CHECK(Contains(dis, "s_waitcnt"));
  CHECK(Contains(dis, "s_setprio 1"));
  CHECK_FALSE(Contains(dis, "scratch_"));
  CHECK_FALSE(Contains(dis, "buffer_store"));  // no spills through scratch buffers
  REQUIRE(art->kernels.size() == 1);
  const KernelResources& r = art->kernels[0];
  CHECK(r.symbol == "gemm_bf16_tn_mfma");
  CHECK(r.scratch_bytes == 0);
  CHECK(r.vgpr_spills == 0);
  CHECK(r.sgpr_spills == 0);
  CHECK(r.static_shared_bytes == 10240);
  CHECK(r.registers > 0);
  CHECK(r.agprs >= 0);
  CHECK(r.max_threads == 256);
  CHECK(r.wavefront_size == 64);
  auto cov = ReadCodeObjectVersion(art->code_object);
  REQUIRE(cov.ok());
  CHECK(*cov == 5);
}

TEST_CASE("Code object v4 on request", "[codegen][amdgpu]") {
  llvm::LLVMContext ctx;
  TestKernel k = BuildVectorAddAmdgpu(ctx);
  auto co = EmitAmdgpuCodeObject(*k.module, "gfx942", 4);
  REQUIRE(co.ok());
  auto cov = ReadCodeObjectVersion(*co);
  REQUIRE(cov.ok());
  CHECK(*cov == 4);
  auto meta = ReadAmdgpuMetadata(*co);
  REQUIRE(meta.ok());
  REQUIRE(meta->size() == 1);
  CHECK((*meta)[0].symbol == "vadd_f32");
  CHECK((*meta)[0].scratch_bytes == 0);
  CHECK(Contains(Disassemble(*co), "global_load_dwordx4"));
  CHECK_FALSE(EmitAmdgpuCodeObject(*k.module, "gfx942", 3).ok());
}

TEST_CASE("Reading metadata from a non-AMDGPU file fails cleanly", "[codegen][amdgpu]") {
  CHECK_FALSE(ReadAmdgpuMetadata("not an elf").ok());
}

}  // namespace
}  // namespace argus::codegen
