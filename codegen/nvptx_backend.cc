#include "codegen/nvptx_backend.h"

#include <regex>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "base/status.h"
#include "base/subprocess.h"
#include "codegen/target.h"
#include "codegen/tempdir.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/Metadata.h"
#include "llvm/IR/Module.h"
#include "llvm/Target/TargetMachine.h"

namespace argus::codegen {

void MarkNvptxKernel(llvm::Function& fn, int max_threads, int min_blocks) {
  llvm::Module& m = *fn.getParent();
  llvm::LLVMContext& ctx = m.getContext();
  llvm::NamedMDNode* annotations = m.getOrInsertNamedMetadata("nvvm.annotations");
  auto add = [&](const char* key, int value) {
    llvm::Metadata* ops[] = {
        llvm::ValueAsMetadata::get(&fn), llvm::MDString::get(ctx, key),
        llvm::ConstantAsMetadata::get(llvm::ConstantInt::get(llvm::Type::getInt32Ty(ctx), value))};
    annotations->addOperand(llvm::MDNode::get(ctx, ops));
  };
  add("kernel", 1);
  if (max_threads > 0) add("maxntidx", max_threads);
  if (min_blocks > 0) add("minctasm", min_blocks);
}

namespace {

absl::StatusOr<std::unique_ptr<llvm::TargetMachine>> PrepareForNvptx(llvm::Module& module,
                                                                     const PtxOptions& options) {
  if (options.arch.rfind("sm_", 0) != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("not an NVIDIA architecture: '", options.arch, "' (want e.g. sm_90a)"));
  }
  GpuTarget target = GpuTarget::Nvptx(options.arch);
  target.features = absl::StrCat("+ptx", options.ptx_version);
  target.opt_level = options.opt_level;
  ASSIGN_OR_RETURN(std::unique_ptr<llvm::TargetMachine> tm, CreateTargetMachine(target));
  PrepareModule(module, *tm);
  if (options.verify) RETURN_IF_ERROR(VerifyModule(module));
  RETURN_IF_ERROR(OptimizeModule(module, *tm, options.opt_level));
  return tm;
}

}  // namespace

absl::StatusOr<std::string> EmitPtx(llvm::Module& module, std::string_view arch) {
  PtxOptions options;
  options.arch = std::string(arch);
  return EmitPtx(module, options);
}

absl::StatusOr<std::string> EmitPtx(llvm::Module& module, const PtxOptions& options) {
  ASSIGN_OR_RETURN(std::unique_ptr<llvm::TargetMachine> tm, PrepareForNvptx(module, options));
  return EmitAssembly(module, *tm);
}

absl::StatusOr<std::string> EmitNvptxLlvmIr(llvm::Module& module, const PtxOptions& options) {
  ASSIGN_OR_RETURN(std::unique_ptr<llvm::TargetMachine> tm, PrepareForNvptx(module, options));
  return EmitLlvmIr(module);
}

std::optional<std::string> FindPtxas() {
  std::string p = FindExecutable("ARGUS_PTXAS", "ptxas", {"/usr/local/cuda/bin/ptxas"});
  if (p.empty()) return std::nullopt;
  return p;
}

std::vector<KernelResources> ParsePtxasLog(std::string_view log) {
  static const std::regex kEntry(R"(Compiling entry function '([^']+)')");
  static const std::regex kProps(R"(Function properties for ([^\s]+))");
  static const std::regex kFrame(
      R"((\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads)");
  static const std::regex kRegs(R"(Used (\d+) registers)");
  static const std::regex kBarriers(R"(used (\d+) barriers)");
  static const std::regex kSmem(R"((\d+) bytes smem)");
  std::vector<KernelResources> out;
  auto find = [&](const std::string& name) -> KernelResources& {
    for (KernelResources& k : out) {
      if (k.symbol == name) return k;
    }
    KernelResources k;
    k.symbol = name;
    out.push_back(k);
    return out.back();
  };
  std::string current;
  for (absl::string_view line_view :
       absl::StrSplit(absl::string_view(log.data(), log.size()), '\n')) {
    const std::string line(line_view);
    std::smatch m;
    if (std::regex_search(line, m, kEntry)) {
      current = m[1];
      find(current);
      continue;
    }
    if (std::regex_search(line, m, kProps)) {
      // Properties of a non-entry function are reported too; follow only entries.
      bool is_entry = false;
      for (const KernelResources& k : out) is_entry |= (k.symbol == m[1].str());
      current = is_entry ? m[1].str() : "";
      continue;
    }
    if (current.empty()) continue;
    KernelResources& k = find(current);
    if (std::regex_search(line, m, kFrame)) {
      k.scratch_bytes = std::stoi(m[1]);
      k.spill_stores = std::stoi(m[2]);
      k.spill_loads = std::stoi(m[3]);
    }
    if (std::regex_search(line, m, kRegs)) {
      k.registers = std::stoi(m[1]);
      k.barriers = 0;
      k.static_shared_bytes = 0;
      if (std::regex_search(line, m, kBarriers)) k.barriers = std::stoi(m[1]);
      if (std::regex_search(line, m, kSmem)) k.static_shared_bytes = std::stoi(m[1]);
    }
  }
  return out;
}

absl::StatusOr<PtxasResult> AssemblePtx(const std::string& ptx, std::string_view arch,
                                        const std::vector<std::string>& extra_flags) {
  std::optional<std::string> ptxas = FindPtxas();
  if (!ptxas) {
    return absl::NotFoundError(
        "ptxas not found (set ARGUS_PTXAS, put it on PATH, or install CUDA in /usr/local/cuda)");
  }
  ASSIGN_OR_RETURN(TempDir dir, TempDir::Create("argus-ptxas-"));
  const std::string in = dir.File("kernel.ptx");
  const std::string out = dir.File("kernel.cubin");
  RETURN_IF_ERROR(WriteFile(in, ptx));
  ProcessOptions opt;
  opt.argv = {*ptxas, "-arch=" + std::string(arch), "-v"};
  opt.argv.insert(opt.argv.end(), extra_flags.begin(), extra_flags.end());
  opt.argv.insert(opt.argv.end(), {in, "-o", out});
  opt.timeout = std::chrono::milliseconds(120'000);
  ASSIGN_OR_RETURN(ProcessResult r, RunWithTimeout(opt));
  const std::string log = r.stderr_text + r.stdout_text;
  if (r.end != ProcessResult::End::kExited || r.exit_code != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("ptxas (", absl::StrJoin(opt.argv, " "), ") failed: ", log));
  }
  PtxasResult result;
  ASSIGN_OR_RETURN(result.cubin, ReadFile(out));
  result.kernels = ParsePtxasLog(log);
  result.log = log;
  result.ptxas_path = *ptxas;
  return result;
}

}  // namespace argus::codegen
