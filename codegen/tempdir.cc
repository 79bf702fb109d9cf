#include "codegen/tempdir.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace argus::codegen {

absl::StatusOr<TempDir> TempDir::Create(const std::string& prefix) {
  const char* base = std::getenv("TMPDIR");
  std::string tmpl = absl::StrCat(base != nullptr && *base ? base : "/tmp", "/", prefix, "XXXXXX");
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  if (mkdtemp(buf.data()) == nullptr) {
    return absl::InternalError(absl::StrCat("mkdtemp ", tmpl, " failed"));
  }
  return TempDir(std::string(buf.data()));
}

TempDir::~TempDir() {
  if (path_.empty()) return;
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

absl::Status WriteFile(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out) return absl::InternalError(absl::StrCat("cannot write ", path));
  return absl::OkStatus();
}

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read ", path));
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string FindExecutable(const char* env_var, const std::string& name,
                           const std::vector<std::string>& fallbacks) {
  if (env_var != nullptr) {
    const char* v = std::getenv(env_var);
    if (v != nullptr && *v && access(v, X_OK) == 0) return v;
  }
  if (const char* path = std::getenv("PATH"); path != nullptr) {
    for (absl::string_view dir : absl::StrSplit(path, ':')) {
      if (dir.empty()) continue;
      std::string candidate = absl::StrCat(dir, "/", name);
      if (access(candidate.c_str(), X_OK) == 0) return candidate;
    }
  }
  for (const std::string& f : fallbacks) {
    if (access(f.c_str(), X_OK) == 0) return f;
  }
  return "";
}

}  // namespace argus::codegen
