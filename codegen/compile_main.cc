// argus-compile: `argus compile` as a stand-alone binary (for tests and the device bundle).
#include <iostream>

#include "codegen/compile_cli.h"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  absl::Status st = argus::codegen::CompileVerb(args, std::cout);
  if (st.ok()) return 0;
  std::cerr << "argus-compile: " << st.message() << "\n";
  return st.code() == absl::StatusCode::kInvalidArgument ? 2 : 1;
}
