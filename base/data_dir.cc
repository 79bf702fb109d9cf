#include "base/data_dir.h"

#include <cstdlib>
#include <filesystem>
#include <system_error>

namespace argus {
namespace {

namespace fs = std::filesystem;

std::string* FlagValue() {
  static std::string* value = new std::string;
  return value;
}

}  // namespace

void DeclareDataDirFlag(FlagSet& flags) {
  flags.String("data_dir", FlagValue(),
               "directory with kb/ and docs/dsl.md (default: $ARGUS_DATA_DIR, else "
               "../share/argus beside the executable, else the source tree)");
}

std::string DataDir() {
  if (!FlagValue()->empty()) return *FlagValue();
  if (const char* d = std::getenv("ARGUS_DATA_DIR"); d && *d) return d;
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    fs::path installed = exe.parent_path().parent_path() / "share" / "argus";
    if (fs::is_directory(installed, ec)) return installed.string();
  }
  return ARGUS_BUILD_SOURCE_DIR;
}

}  // namespace argus
