// argus-emit-test-kernels: writes the hand-built test kernels' artifacts.
//
//   argus-emit-test-kernels --out DIR [--cov 5]
//
// For each NVPTX kernel: <sym>.sm_90a.ll (optimized IR), .ptx, .cubin and
// .ptxas.log (when ptxas is found), .json (metadata). For each AMDGPU kernel:
// <sym>.gfx942.ll, .s, .hsaco, .json. Exit code 0 when everything was written.
#include <cstdio>
#include <filesystem>
#include <string>

#include "absl/strings/str_cat.h"
#include "base/flags.h"
#include "base/status.h"
#include "codegen/amdgpu_backend.h"
#include "codegen/nvptx_backend.h"
#include "codegen/target.h"
#include "codegen/tempdir.h"
#include "codegen/test_kernels.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"

namespace argus::codegen {
namespace {

absl::Status EmitNvidia(const std::string& dir, TestKernel k) {
  const std::string base = absl::StrCat(dir, "/", k.metadata.symbol, ".sm_90a");
  ASSIGN_OR_RETURN(std::string ptx, EmitPtx(*k.module, "sm_90a"));
  RETURN_IF_ERROR(WriteFile(base + ".ll", EmitLlvmIr(*k.module)));
  RETURN_IF_ERROR(WriteFile(base + ".ptx", ptx));
  k.metadata.format = "ptx";
  k.metadata.artifact = k.metadata.symbol + ".sm_90a.ptx";
  absl::StatusOr<PtxasResult> as = AssemblePtx(ptx, "sm_90a");
  if (as.ok()) {
    RETURN_IF_ERROR(WriteFile(base + ".cubin", as->cubin));
    RETURN_IF_ERROR(WriteFile(base + ".ptxas.log", as->log));
    for (const KernelResources& r : as->kernels) {
      if (r.symbol == k.metadata.symbol) k.metadata.resources = r;
    }
  } else if (!absl::IsNotFound(as.status())) {
    return as.status();
  } else {
    std::fprintf(stderr, "note: %s\n", std::string(as.status().message()).c_str());
  }
  return WriteFile(base + ".json", KernelMetadataToJson(k.metadata));
}

absl::Status EmitAmd(const std::string& dir, TestKernel k, int cov) {
  const std::string base = absl::StrCat(dir, "/", k.metadata.symbol, ".gfx942");
  AmdgpuOptions options;
  options.code_object_version = cov;
  ASSIGN_OR_RETURN(AmdgpuArtifacts art, CompileAmdgpu(*k.module, options));
  RETURN_IF_ERROR(WriteFile(base + ".ll", art.llvm_ir));
  RETURN_IF_ERROR(WriteFile(base + ".s", art.assembly));
  RETURN_IF_ERROR(WriteFile(base + ".hsaco", art.code_object));
  for (const KernelResources& r : art.kernels) {
    if (r.symbol == k.metadata.symbol) k.metadata.resources = r;
  }
  k.metadata.format = "hsaco";
  k.metadata.artifact = k.metadata.symbol + ".gfx942.hsaco";
  return WriteFile(base + ".json", KernelMetadataToJson(k.metadata));
}

absl::Status Main(int argc, char** argv) {
  std::string out;
  int64_t cov = 5;
  FlagSet flags("argus-emit-test-kernels", "writes the hand-built test kernels' artifacts");
  flags.String("out", &out, "output directory");
  flags.Int("cov", &cov, "AMDGPU code object version (4 or 5)");
  ASSIGN_OR_RETURN(auto positional, flags.Parse(argc, argv));
  if (out.empty()) return absl::InvalidArgumentError("--out DIR is required");
  std::filesystem::create_directories(out);
  llvm::LLVMContext ctx;
  RETURN_IF_ERROR(EmitNvidia(out, BuildVectorAddNvptx(ctx)));
  RETURN_IF_ERROR(EmitNvidia(out, BuildGemmBf16Nvptx(ctx)));
  RETURN_IF_ERROR(EmitNvidia(out, BuildOobStoreNvptx(ctx)));
  RETURN_IF_ERROR(EmitAmd(out, BuildVectorAddAmdgpu(ctx), static_cast<int>(cov)));
  RETURN_IF_ERROR(EmitAmd(out, BuildGemmBf16Amdgpu(ctx), static_cast<int>(cov)));
  return absl::OkStatus();
}

}  // namespace
}  // namespace argus::codegen

int main(int argc, char** argv) {
  absl::Status s = argus::codegen::Main(argc, argv);
  if (!s.ok()) {
    std::fprintf(stderr, "argus-emit-test-kernels: %s\n", s.ToString().c_str());
    return 1;
  }
  return 0;
}
