#include "codegen/compile_cli.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "base/flags.h"
#include "base/status.h"
#include "codegen/dsl_compile.h"

namespace argus::codegen {

namespace {

absl::StatusOr<std::map<std::string, std::string>> Assignments(
    const std::vector<std::string>& items, const char* flag) {
  std::map<std::string, std::string> out;
  for (const std::string& item : items) {
    for (absl::string_view part : absl::StrSplit(item, ',', absl::SkipEmpty())) {
      std::vector<std::string> kv = absl::StrSplit(part, absl::MaxSplits('=', 1));
      if (kv.size() != 2 || kv[0].empty())
        return absl::InvalidArgumentError(
            absl::StrCat("--", flag, " expects NAME=VALUE, got '", part, "'"));
      out[kv[0]] = kv[1];
    }
  }
  return out;
}

}  // namespace

absl::Status CompileVerb(const std::vector<std::string>& raw, std::ostream& out) {
  std::vector<std::string> args;
  for (const std::string& a : raw) args.push_back(a == "-o" ? "--out" : a);
  std::string target, kernel, dir, emit;
  std::vector<std::string> consts, dims;
  int64_t cov = 5;
  FlagSet fs("argus compile",
             "FILE --target gfx942|sm_90a [--const NAME=V]... [--dims M=..] -o DIR");
  fs.String("target", &target, "sm_90a or gfx942 (required)");
  fs.String("kernel", &kernel, "kernel to compile (default: the last one in the file)");
  fs.List("const", &consts, "NAME=V: override a const parameter (repeatable)");
  fs.List("dims", &dims, "NAME=V,...: dims for the launch geometry in the metadata");
  fs.Int("code_object", &cov, "gfx942 code object version: 4 or 5");
  fs.String("emit", &emit, "also print: llvm (optimized LLVM IR) or asm (PTX / AMDGPU asm)");
  fs.String("out", &dir, "output directory (-o)");
  ASSIGN_OR_RETURN(std::vector<std::string> pos, fs.Parse(args));
  if (fs.help_requested()) {
    out << fs.Help();
    return absl::OkStatus();
  }
  if (pos.size() != 1)
    return absl::InvalidArgumentError("usage: argus compile FILE --target T -o DIR");
  if (target.empty()) return absl::InvalidArgumentError("--target is required (sm_90a or gfx942)");
  if (!emit.empty() && emit != "llvm" && emit != "asm")
    return absl::InvalidArgumentError("--emit takes llvm or asm");
  if (dir.empty() && emit.empty()) return absl::InvalidArgumentError("-o DIR is required");
  DslCompileOptions o;
  o.target = target;
  o.kernel = kernel;
  o.code_object_version = static_cast<int>(cov);
  o.want_llvm = emit == "llvm";
  ASSIGN_OR_RETURN(o.consts, Assignments(consts, "const"));
  ASSIGN_OR_RETURN(auto dm, Assignments(dims, "dims"));
  for (const auto& [name, v] : dm) {
    int64_t x;
    if (!absl::SimpleAtoi(v, &x))
      return absl::InvalidArgumentError(absl::StrCat("--dims ", name, "=", v, ": not an integer"));
    o.dims[name] = x;
  }
  ASSIGN_OR_RETURN(DslArtifacts a, CompileDslFile(pos[0], o));
  if (emit == "llvm") out << a.llvm_ir;
  if (emit == "asm") out << a.assembly;
  if (!dir.empty()) {
    RETURN_IF_ERROR(WriteArtifacts(a, dir));
    if (emit.empty()) {
      out << "wrote " << dir << "/" << a.metadata.artifact << " and " << dir << "/"
          << a.metadata.symbol << ".json\n";
      for (const std::string& n : a.notes) out << "note: " << n << "\n";
    }
  }
  return absl::OkStatus();
}

}  // namespace argus::codegen
