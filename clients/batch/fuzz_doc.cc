// libFuzzer target: the manifest document parsers (YAML subset and JSON)
// must reject or accept any bytes without crashing or hanging.
#include <cstddef>
#include <cstdint>
#include <string>

#include "clients/batch/doc.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  (void)argus::batch::ParseYaml(text);
  (void)argus::batch::ParseJson(text);
  return 0;
}
