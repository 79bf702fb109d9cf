// dsl/fuzz_check.cc: libFuzzer target for the front end (lexer, parser,
// checker, IR dump). Any input must yield a Module or a located error, never a
// crash, hang or sanitizer report. Built by tests/dsl/run_fuzz.sh with
// clang-19 (-fsanitize=fuzzer,address), or the dsl_fuzz CMake target when the
// compiler is clang.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "dsl/check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 64 * 1024) return 0;
  std::string text(reinterpret_cast<const char*>(data), size);
  auto src = std::make_shared<argus::dsl::SourceFile>("fuzz.py", text);
  argus::dsl::CheckOptions opt;
  auto m = argus::dsl::Compile(src, opt);
  if (m.ok()) {
    std::string dump = argus::dsl::ir::Dump(*m);
    (void)dump;
  } else if (m.status().message().empty()) {
    __builtin_trap();  // every error must say something
  }
  return 0;
}
