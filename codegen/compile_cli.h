// codegen/compile_cli.h: the `argus compile` verb as a library function.
//
//   compile FILE --target gfx942|sm_90a [--kernel K] [--const NAME=V]...
//           [--dims M=..,N=..] [--code-object 4|5] [--emit llvm|asm] -o DIR
//
// Writes the artifact and `<kernel>.json` metadata into DIR (see
// dsl_compile.h); `--emit llvm|asm` also prints the optimized LLVM IR or the
// target assembly to `out` (without -o, it only prints).
//
// Thread safety: reentrant.
#ifndef ARGUS_CODEGEN_COMPILE_CLI_H_
#define ARGUS_CODEGEN_COMPILE_CLI_H_

#include <ostream>
#include <string>
#include <vector>

#include "absl/status/status.h"

namespace argus::codegen {

absl::Status CompileVerb(const std::vector<std::string>& args, std::ostream& out);

}  // namespace argus::codegen

#endif  // ARGUS_CODEGEN_COMPILE_CLI_H_
