// argus-dsl: parse, check, dump and interpret DSL kernels. The verbs live in
// dsl/cli.h; this main only dispatches.
#include <iostream>

#include "dsl/cli.h"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  absl::Status st = argus::dsl::DslMain(args, std::cout);
  if (!st.ok()) {
    std::cerr << st.message() << "\n";
    return 1;
  }
  return 0;
}
