#include "codegen/target.h"

#include <mutex>
#include <optional>

#include "absl/strings/str_cat.h"
#include "llvm/Analysis/CGSCCPassManager.h"
#include "llvm/Analysis/LoopAnalysisManager.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/PassManager.h"
#include "llvm/IR/Verifier.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/CodeGen.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/Transforms/Utils/Cloning.h"

extern "C" {
void LLVMInitializeNVPTXTargetInfo();
void LLVMInitializeNVPTXTarget();
void LLVMInitializeNVPTXTargetMC();
void LLVMInitializeNVPTXAsmPrinter();
void LLVMInitializeAMDGPUTargetInfo();
void LLVMInitializeAMDGPUTarget();
void LLVMInitializeAMDGPUTargetMC();
void LLVMInitializeAMDGPUAsmPrinter();
void LLVMInitializeAMDGPUAsmParser();
}

namespace argus::codegen {

GpuTarget GpuTarget::Nvptx(std::string arch) {
  GpuTarget t;
  t.vendor = GpuVendor::kNvidia;
  t.arch = std::move(arch);
  return t;
}

GpuTarget GpuTarget::Amdgpu(std::string arch) {
  GpuTarget t;
  t.vendor = GpuVendor::kAmd;
  t.arch = std::move(arch);
  return t;
}

std::string GpuTarget::Triple() const {
  return vendor == GpuVendor::kNvidia ? "nvptx64-nvidia-cuda" : "amdgcn-amd-amdhsa";
}

void InitializeGpuTargets() {
  static std::once_flag once;
  std::call_once(once, [] {
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetMC();
    LLVMInitializeNVPTXAsmPrinter();
    LLVMInitializeAMDGPUTargetInfo();
    LLVMInitializeAMDGPUTarget();
    LLVMInitializeAMDGPUTargetMC();
    LLVMInitializeAMDGPUAsmPrinter();
    LLVMInitializeAMDGPUAsmParser();  // inline asm in AMDGPU kernels
  });
}

absl::Status ToStatus(llvm::Error error, std::string_view context) {
  if (!error) return absl::OkStatus();
  std::string msg = llvm::toString(std::move(error));
  return absl::InternalError(absl::StrCat(std::string(context), ": ", msg));
}

absl::StatusOr<std::unique_ptr<llvm::TargetMachine>> CreateTargetMachine(const GpuTarget& target) {
  InitializeGpuTargets();
  const std::string triple = target.Triple();
  std::string error;
  const llvm::Target* t = llvm::TargetRegistry::lookupTarget(triple, error);
  if (t == nullptr) {
    return absl::InternalError(absl::StrCat("no LLVM target for ", triple, ": ", error));
  }
  if (target.arch.empty()) return absl::InvalidArgumentError("empty GPU architecture");
  llvm::TargetOptions options;
  llvm::CodeGenOptLevel level = llvm::CodeGenOptLevel::Aggressive;
  switch (target.opt_level) {
    case 0:
      level = llvm::CodeGenOptLevel::None;
      break;
    case 1:
      level = llvm::CodeGenOptLevel::Less;
      break;
    case 2:
      level = llvm::CodeGenOptLevel::Default;
      break;
    default:
      break;
  }
  std::unique_ptr<llvm::TargetMachine> tm(t->createTargetMachine(
      triple, target.arch, target.features, options, llvm::Reloc::PIC_, std::nullopt, level));
  if (tm == nullptr) {
    return absl::InternalError(
        absl::StrCat("cannot create target machine for ", triple, " ", target.arch));
  }
  // LLVM silently accepts unknown CPUs (with a warning on stderr); refuse them.
  const llvm::MCSubtargetInfo* sti = tm->getMCSubtargetInfo();
  if (sti != nullptr && !sti->isCPUStringValid(target.arch)) {
    return absl::InvalidArgumentError(absl::StrCat("LLVM 19 does not know the GPU architecture '",
                                                   target.arch, "' for ", triple));
  }
  return tm;
}

void PrepareModule(llvm::Module& module, const llvm::TargetMachine& tm) {
  module.setTargetTriple(tm.getTargetTriple().str());
  module.setDataLayout(tm.createDataLayout());
}

absl::Status VerifyModule(const llvm::Module& module) {
  std::string msg;
  llvm::raw_string_ostream os(msg);
  if (llvm::verifyModule(module, &os)) {
    os.flush();
    return absl::InvalidArgumentError(absl::StrCat("invalid LLVM module: ", msg));
  }
  return absl::OkStatus();
}

absl::Status OptimizeModule(llvm::Module& module, llvm::TargetMachine& tm, int level) {
  if (level <= 0) return absl::OkStatus();
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder pb(&tm);
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::OptimizationLevel ol = llvm::OptimizationLevel::O3;
  if (level == 1) ol = llvm::OptimizationLevel::O1;
  if (level == 2) ol = llvm::OptimizationLevel::O2;
  llvm::ModulePassManager mpm = pb.buildPerModuleDefaultPipeline(ol);
  mpm.run(module, mam);
  return VerifyModule(module);
}

std::string EmitLlvmIr(const llvm::Module& module) {
  std::string text;
  llvm::raw_string_ostream os(text);
  module.print(os, nullptr);
  os.flush();
  return text;
}

namespace {

absl::StatusOr<std::string> RunCodegen(llvm::Module& module, llvm::TargetMachine& tm,
                                       llvm::CodeGenFileType type) {
  if (module.getTargetTriple() != tm.getTargetTriple().str()) {
    return absl::FailedPreconditionError(
        absl::StrCat("module triple '", module.getTargetTriple(), "' does not match target '",
                     tm.getTargetTriple().str(), "'; call PrepareModule first"));
  }
  llvm::SmallString<0> buffer;
  llvm::raw_svector_ostream os(buffer);
  llvm::legacy::PassManager pm;
  if (tm.addPassesToEmitFile(pm, os, nullptr, type)) {
    return absl::InternalError("the target cannot emit this file type");
  }
  // Codegen passes rewrite IR; run them on a copy so that the caller can emit
  // the same module again (IR text, assembly and object from one build).
  std::unique_ptr<llvm::Module> copy = llvm::CloneModule(module);
  pm.run(*copy);
  return std::string(buffer.data(), buffer.size());
}

}  // namespace

absl::StatusOr<std::string> EmitAssembly(llvm::Module& module, llvm::TargetMachine& tm) {
  return RunCodegen(module, tm, llvm::CodeGenFileType::AssemblyFile);
}

absl::StatusOr<std::string> EmitObject(llvm::Module& module, llvm::TargetMachine& tm) {
  return RunCodegen(module, tm, llvm::CodeGenFileType::ObjectFile);
}

}  // namespace argus::codegen
