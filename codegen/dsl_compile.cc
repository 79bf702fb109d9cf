#include "codegen/dsl_compile.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "base/status.h"
#include "codegen/amdgpu_backend.h"
#include "codegen/lower.h"
#include "codegen/nvptx_backend.h"
#include "dsl/check.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"

namespace argus::codegen {

namespace {

absl::StatusOr<const dsl::ir::Function*> SelectKernel(const dsl::ir::Module& m,
                                                      const std::string& name) {
  const dsl::ir::Function* k = nullptr;
  for (const dsl::ir::Function& f : m.functions) {
    if (f.is_kernel && (name.empty() || f.name == name)) k = &f;
  }
  if (!k) return absl::InvalidArgumentError(absl::StrCat("no kernel named '", name, "'"));
  return k;
}

GpuTarget TargetFor(const std::string& arch) {
  return arch == "gfx942" ? GpuTarget::Amdgpu(arch) : GpuTarget::Nvptx(arch);
}

void MergeResources(const KernelResources& r, KernelResources* into) {
  int static_shared = into->static_shared_bytes;
  *into = r;
  if (into->static_shared_bytes < 0) into->static_shared_bytes = static_shared;
}

}  // namespace

absl::StatusOr<DslArtifacts> CompileDslSource(const std::string& name, const std::string& text,
                                              const DslCompileOptions& o) {
  if (o.target != "sm_90a" && o.target != "gfx942")
    return absl::InvalidArgumentError(
        absl::StrCat("unknown target '", o.target, "' (use sm_90a or gfx942)"));
  dsl::CheckOptions co;
  co.consts = o.consts;
  co.arch = o.target;
  ASSIGN_OR_RETURN(dsl::ir::Module m,
                   dsl::Compile(std::make_shared<dsl::SourceFile>(name, text), co));
  ASSIGN_OR_RETURN(const dsl::ir::Function* k, SelectKernel(m, o.kernel));
  GpuTarget target = TargetFor(o.target);
  llvm::LLVMContext ctx;
  ASSIGN_OR_RETURN(LoweredKernel lk, LowerKernel(m, *k, target, ctx));
  DslArtifacts a;
  a.metadata = lk.metadata;
  a.notes = lk.notes;
  if (!o.dims.empty()) {
    ASSIGN_OR_RETURN(a.metadata.grid, EvalGrid(*k, o.dims));
  } else {
    a.metadata.grid = {-1, -1, -1};
  }
  if (target.vendor == GpuVendor::kAmd) {
    AmdgpuOptions ao;
    ao.arch = o.target;
    ao.code_object_version = o.code_object_version;
    ASSIGN_OR_RETURN(AmdgpuArtifacts aa, CompileAmdgpu(*lk.module, ao));
    a.code_object = std::move(aa.code_object);
    if (o.want_llvm) a.llvm_ir = std::move(aa.llvm_ir);
    a.assembly = std::move(aa.assembly);
    for (const KernelResources& r : aa.kernels) {
      if (r.symbol == k->name) MergeResources(r, &a.metadata.resources);
    }
    a.metadata.format = "hsaco";
    a.metadata.artifact = k->name + ".hsaco";
    return a;
  }
  if (o.want_llvm) {
    llvm::LLVMContext ctx2;
    ASSIGN_OR_RETURN(LoweredKernel again, LowerKernel(m, *k, target, ctx2));
    ASSIGN_OR_RETURN(a.llvm_ir, EmitNvptxLlvmIr(*again.module));
  }
  ASSIGN_OR_RETURN(a.ptx, EmitPtx(*lk.module, o.target));
  a.assembly = a.ptx;
  a.metadata.format = "ptx";
  a.metadata.artifact = k->name + ".ptx";
  if (o.assemble && FindPtxas()) {
    ASSIGN_OR_RETURN(PtxasResult pr, AssemblePtx(a.ptx, o.target));
    a.cubin = std::move(pr.cubin);
    a.ptxas_log = pr.log;
    for (const KernelResources& r : pr.kernels) {
      if (r.symbol == k->name || pr.kernels.size() == 1) MergeResources(r, &a.metadata.resources);
    }
    a.metadata.format = "cubin";
    a.metadata.artifact = k->name + ".cubin";
  }
  return a;
}

absl::StatusOr<DslArtifacts> CompileDslFile(const std::string& path, const DslCompileOptions& o) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read ", path));
  std::stringstream ss;
  ss << in.rdbuf();
  return CompileDslSource(path, ss.str(), o);
}

absl::Status WriteArtifacts(const DslArtifacts& a, const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return absl::InternalError(absl::StrCat("cannot create ", dir, ": ", ec.message()));
  auto put = [&](const std::string& file, const std::string& data) -> absl::Status {
    std::ofstream out(std::filesystem::path(dir) / file, std::ios::binary);
    out << data;
    if (!out) return absl::InternalError(absl::StrCat("cannot write ", dir, "/", file));
    return absl::OkStatus();
  };
  const std::string& sym = a.metadata.symbol;
  if (!a.ptx.empty()) RETURN_IF_ERROR(put(sym + ".ptx", a.ptx));
  if (!a.cubin.empty()) RETURN_IF_ERROR(put(sym + ".cubin", a.cubin));
  if (!a.code_object.empty()) RETURN_IF_ERROR(put(sym + ".hsaco", a.code_object));
  if (!a.llvm_ir.empty()) RETURN_IF_ERROR(put(sym + ".ll", a.llvm_ir));
  if (!a.assembly.empty() && a.ptx.empty()) RETURN_IF_ERROR(put(sym + ".s", a.assembly));
  return put(sym + ".json", KernelMetadataToJson(a.metadata));
}

}  // namespace argus::codegen
