// codegen/tempdir.h: a private temporary directory removed on destruction.
//
// Used by the backends to hand files to ptxas and ld.lld. Thread safety: one
// object per thread; distinct objects are independent.
#ifndef ARGUS_CODEGEN_TEMPDIR_H_
#define ARGUS_CODEGEN_TEMPDIR_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace argus::codegen {

class TempDir {
 public:
  static absl::StatusOr<TempDir> Create(const std::string& prefix);
  TempDir(TempDir&& other) noexcept : path_(std::move(other.path_)) { other.path_.clear(); }
  TempDir& operator=(TempDir&&) = delete;
  TempDir(const TempDir&) = delete;
  ~TempDir();
  const std::string& path() const { return path_; }
  std::string File(const std::string& name) const { return path_ + "/" + name; }

 private:
  explicit TempDir(std::string path) : path_(std::move(path)) {}
  std::string path_;
};

absl::Status WriteFile(const std::string& path, const std::string& bytes);
absl::StatusOr<std::string> ReadFile(const std::string& path);
// First executable among: $env_var, `name` on $PATH, each of `fallbacks`.
std::string FindExecutable(const char* env_var, const std::string& name,
                           const std::vector<std::string>& fallbacks);

}  // namespace argus::codegen

#endif  // ARGUS_CODEGEN_TEMPDIR_H_
