#include "codegen/amdgpu_backend.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status.h"
#include "base/subprocess.h"
#include "codegen/target.h"
#include "codegen/tempdir.h"
#include "llvm/BinaryFormat/ELF.h"
#include "llvm/BinaryFormat/MsgPackDocument.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/Module.h"
#include "llvm/Object/ELF.h"
#include "llvm/Object/ELFTypes.h"
#include "llvm/Target/TargetMachine.h"

namespace argus::codegen {

void MarkAmdgpuKernel(llvm::Function& fn, int max_threads) {
  fn.setCallingConv(llvm::CallingConv::AMDGPU_KERNEL);
  if (max_threads > 0) {
    fn.addFnAttr("amdgpu-flat-work-group-size", absl::StrCat("1,", max_threads));
  }
}

namespace {

absl::StatusOr<std::unique_ptr<llvm::TargetMachine>> PrepareForAmdgpu(llvm::Module& module,
                                                                      const AmdgpuOptions& o) {
  if (o.arch.rfind("gfx", 0) != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("not an AMD architecture: '", o.arch, "' (want e.g. gfx942)"));
  }
  if (o.code_object_version != 4 && o.code_object_version != 5) {
    return absl::InvalidArgumentError(
        absl::StrCat("code object version ", o.code_object_version, " (want 4 or 5)"));
  }
  GpuTarget target = GpuTarget::Amdgpu(o.arch);
  target.features = o.features;
  target.opt_level = o.opt_level;
  ASSIGN_OR_RETURN(std::unique_ptr<llvm::TargetMachine> tm, CreateTargetMachine(target));
  PrepareModule(module, *tm);
  module.setModuleFlag(llvm::Module::Error, "amdhsa_code_object_version",
                       static_cast<uint32_t>(o.code_object_version * 100));
  if (o.verify) RETURN_IF_ERROR(VerifyModule(module));
  RETURN_IF_ERROR(OptimizeModule(module, *tm, o.opt_level));
  return tm;
}

std::string FindLld() {
  return FindExecutable("ARGUS_LLD", "ld.lld-19",
                        {"/usr/lib/llvm-19/bin/ld.lld", "/usr/bin/ld.lld"});
}

}  // namespace

absl::StatusOr<std::string> EmitAmdgpuObject(llvm::Module& module, const AmdgpuOptions& options) {
  ASSIGN_OR_RETURN(std::unique_ptr<llvm::TargetMachine> tm, PrepareForAmdgpu(module, options));
  return EmitObject(module, *tm);
}

absl::StatusOr<std::string> EmitAmdgpuAssembly(llvm::Module& module, const AmdgpuOptions& options) {
  ASSIGN_OR_RETURN(std::unique_ptr<llvm::TargetMachine> tm, PrepareForAmdgpu(module, options));
  return EmitAssembly(module, *tm);
}

absl::StatusOr<std::string> EmitAmdgpuLlvmIr(llvm::Module& module, const AmdgpuOptions& options) {
  ASSIGN_OR_RETURN(std::unique_ptr<llvm::TargetMachine> tm, PrepareForAmdgpu(module, options));
  return EmitLlvmIr(module);
}

absl::StatusOr<std::string> LinkAmdgpuCodeObject(const std::string& object) {
  const std::string lld = FindLld();
  if (lld.empty()) {
    return absl::NotFoundError("ld.lld-19 not found (Debian package lld-19; or set ARGUS_LLD)");
  }
  ASSIGN_OR_RETURN(TempDir dir, TempDir::Create("argus-lld-"));
  const std::string in = dir.File("kernel.o");
  const std::string out = dir.File("kernel.hsaco");
  RETURN_IF_ERROR(WriteFile(in, object));
  ProcessOptions opt;
  opt.argv = {lld, "-shared", "--no-undefined", in, "-o", out};
  opt.timeout = std::chrono::milliseconds(60'000);
  ASSIGN_OR_RETURN(ProcessResult r, RunWithTimeout(opt));
  if (r.end != ProcessResult::End::kExited || r.exit_code != 0) {
    return absl::InternalError(absl::StrCat("ld.lld (", absl::StrJoin(opt.argv, " "),
                                            ") failed: ", r.stderr_text, r.stdout_text));
  }
  return ReadFile(out);
}

absl::StatusOr<std::string> DisassembleAmdgpu(const std::string& code_object,
                                              std::string_view arch) {
  std::string objdump =
      FindExecutable("ARGUS_OBJDUMP", "llvm-objdump-19", {"/usr/lib/llvm-19/bin/llvm-objdump"});
  if (objdump.empty()) return absl::NotFoundError("llvm-objdump-19 not found (package llvm-19)");
  ASSIGN_OR_RETURN(TempDir dir, TempDir::Create("argus-objdump-"));
  const std::string path = dir.File("kernel.hsaco");
  RETURN_IF_ERROR(WriteFile(path, code_object));
  ProcessOptions opt;
  opt.argv = {objdump, "-d", "--mcpu=" + std::string(arch), path};
  opt.timeout = std::chrono::milliseconds(60'000);
  ASSIGN_OR_RETURN(ProcessResult r, RunWithTimeout(opt));
  if (r.end != ProcessResult::End::kExited || r.exit_code != 0)
    return absl::InternalError(absl::StrCat("llvm-objdump failed: ", r.stderr_text));
  return r.stdout_text;
}

absl::StatusOr<std::string> EmitAmdgpuCodeObject(llvm::Module& module, std::string_view arch,
                                                 int code_object_version) {
  AmdgpuOptions options;
  options.arch = std::string(arch);
  options.code_object_version = code_object_version;
  return EmitAmdgpuCodeObject(module, options);
}

absl::StatusOr<std::string> EmitAmdgpuCodeObject(llvm::Module& module,
                                                 const AmdgpuOptions& options) {
  ASSIGN_OR_RETURN(std::string object, EmitAmdgpuObject(module, options));
  return LinkAmdgpuCodeObject(object);
}

absl::StatusOr<AmdgpuArtifacts> CompileAmdgpu(llvm::Module& module, const AmdgpuOptions& options) {
  ASSIGN_OR_RETURN(std::unique_ptr<llvm::TargetMachine> tm, PrepareForAmdgpu(module, options));
  AmdgpuArtifacts out;
  out.llvm_ir = EmitLlvmIr(module);
  ASSIGN_OR_RETURN(out.assembly, EmitAssembly(module, *tm));
  ASSIGN_OR_RETURN(out.object, EmitObject(module, *tm));
  ASSIGN_OR_RETURN(out.code_object, LinkAmdgpuCodeObject(out.object));
  ASSIGN_OR_RETURN(out.kernels, ReadAmdgpuMetadata(out.code_object));
  return out;
}

namespace {

using Elf = llvm::object::ELF64LEFile;

absl::StatusOr<Elf> OpenElf(std::string_view bytes) {
  llvm::Expected<Elf> elf = Elf::create(llvm::StringRef(bytes.data(), bytes.size()));
  if (!elf) return ToStatus(elf.takeError(), "not an ELF64 little-endian file");
  if (elf->getHeader().e_machine != llvm::ELF::EM_AMDGPU) {
    return absl::InvalidArgumentError("ELF file is not an AMDGPU object");
  }
  return std::move(*elf);
}

int NodeInt(llvm::msgpack::MapDocNode& map, const char* key) {
  auto it = map.find(llvm::StringRef(key));
  if (it == map.end()) return -1;
  const llvm::msgpack::DocNode& n = it->second;
  if (n.getKind() == llvm::msgpack::Type::UInt) return static_cast<int>(n.getUInt());
  if (n.getKind() == llvm::msgpack::Type::Int) return static_cast<int>(n.getInt());
  return -1;
}

std::string NodeString(llvm::msgpack::MapDocNode& map, const char* key) {
  auto it = map.find(llvm::StringRef(key));
  if (it == map.end() || it->second.getKind() != llvm::msgpack::Type::String) return "";
  return it->second.getString().str();
}

}  // namespace

absl::StatusOr<int> ReadCodeObjectVersion(std::string_view code_object) {
  ASSIGN_OR_RETURN(Elf elf, OpenElf(code_object));
  const int abi = elf.getHeader().e_ident[llvm::ELF::EI_ABIVERSION];
  switch (abi) {
    case llvm::ELF::ELFABIVERSION_AMDGPU_HSA_V4:
      return 4;
    case llvm::ELF::ELFABIVERSION_AMDGPU_HSA_V5:
      return 5;
    case llvm::ELF::ELFABIVERSION_AMDGPU_HSA_V6:
      return 6;
    default:
      return absl::InvalidArgumentError(absl::StrCat("unknown AMDGPU ABI version ", abi));
  }
}

absl::StatusOr<std::vector<KernelResources>> ReadAmdgpuMetadata(std::string_view code_object) {
  ASSIGN_OR_RETURN(Elf elf, OpenElf(code_object));
  auto sections = elf.sections();
  if (!sections) return ToStatus(sections.takeError(), "reading ELF sections");
  for (const auto& sh : *sections) {
    if (sh.sh_type != llvm::ELF::SHT_NOTE) continue;
    llvm::Error err = llvm::Error::success();
    for (const auto& note : elf.notes(sh, err)) {
      if (note.getName() != "AMDGPU" || note.getType() != llvm::ELF::NT_AMDGPU_METADATA) continue;
      llvm::StringRef desc = note.getDescAsStringRef(sh.sh_addralign);
      llvm::msgpack::Document doc;
      if (!doc.readFromBlob(desc, /*Multi=*/false)) {
        llvm::consumeError(std::move(err));
        return absl::InvalidArgumentError("AMDGPU metadata note is not valid msgpack");
      }
      std::vector<KernelResources> out;
      llvm::msgpack::MapDocNode root = doc.getRoot().getMap();
      auto kernels = root.find(llvm::StringRef("amdhsa.kernels"));
      if (kernels != root.end() && kernels->second.isArray()) {
        for (llvm::msgpack::DocNode& k : kernels->second.getArray()) {
          if (!k.isMap()) continue;
          llvm::msgpack::MapDocNode km = k.getMap();
          KernelResources r;
          r.symbol = NodeString(km, ".name");
          r.registers = NodeInt(km, ".vgpr_count");
          r.sgprs = NodeInt(km, ".sgpr_count");
          r.agprs = NodeInt(km, ".agpr_count");
          r.vgpr_spills = NodeInt(km, ".vgpr_spill_count");
          r.sgpr_spills = NodeInt(km, ".sgpr_spill_count");
          r.static_shared_bytes = NodeInt(km, ".group_segment_fixed_size");
          r.scratch_bytes = NodeInt(km, ".private_segment_fixed_size");
          r.max_threads = NodeInt(km, ".max_flat_workgroup_size");
          r.kernarg_bytes = NodeInt(km, ".kernarg_segment_size");
          r.wavefront_size = NodeInt(km, ".wavefront_size");
          out.push_back(r);
        }
      }
      llvm::consumeError(std::move(err));
      return out;
    }
    if (err) return ToStatus(std::move(err), "reading ELF notes");
  }
  return absl::NotFoundError("no AMDGPU metadata note in the code object");
}

}  // namespace argus::codegen
