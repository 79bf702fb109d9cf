#include "base/secret_file.h"

#include <sys/stat.h>

#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "spdlog/spdlog.h"

namespace argus {

absl::StatusOr<std::string> ReadSmallFile(const std::string& path, size_t max_bytes) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) {
    return absl::NotFoundError(absl::StrCat("cannot read ", path, ": no such file"));
  }
  if (!S_ISREG(st.st_mode)) return absl::InvalidArgumentError(path + ": not a regular file");
  if (static_cast<size_t>(st.st_size) > max_bytes) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": ", st.st_size, " bytes, more than the ", max_bytes, " allowed"));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::PermissionDeniedError(absl::StrCat("cannot open ", path));
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

absl::StatusOr<std::vector<std::string>> ReadSecretLines(const std::string& path) {
  auto text = ReadSmallFile(path, 64 << 10);
  if (!text.ok()) return text.status();
  struct stat st;
  if (stat(path.c_str(), &st) == 0 && (st.st_mode & 077) != 0) {
    spdlog::warn("secret file {} is readable by group or others (mode {:o}); chmod 600 it", path,
                 st.st_mode & 0777);
  }
  std::vector<std::string> lines;
  for (absl::string_view line : absl::StrSplit(*text, '\n')) {
    line = absl::StripAsciiWhitespace(line);
    if (line.empty() || line[0] == '#') continue;
    lines.emplace_back(line);
  }
  if (lines.empty()) return absl::InvalidArgumentError(path + ": holds no token (file is empty)");
  return lines;
}

absl::StatusOr<std::string> ReadSecretFile(const std::string& path) {
  auto lines = ReadSecretLines(path);
  if (!lines.ok()) return lines.status();
  return lines->front();
}

}  // namespace argus
