#include "clients/cli/server_strings.h"

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"

namespace argus::cli {
namespace {

constexpr size_t kMaxLength = 128;

absl::Status Refuse(const std::string& what, const std::string& value, const std::string& rule) {
  std::string shown = absl::CHexEscape(value.substr(0, kMaxLength));
  if (value.size() > kMaxLength) absl::StrAppend(&shown, "... (", value.size(), " bytes)");
  return absl::InvalidArgumentError(absl::StrCat("the server sent ", what, " \"", shown,
                                                 "\", which is not ", rule, "; refusing it"));
}

}  // namespace

absl::Status CheckFileNamePart(const std::string& what, const std::string& value) {
  bool ok = !value.empty() && value.size() <= kMaxLength && value[0] != '.';
  for (char c : value) ok = ok && (absl::ascii_isalnum(c) || c == '_' || c == '-' || c == '.');
  if (ok) return absl::OkStatus();
  return Refuse(what, value, "a plain name ([A-Za-z0-9_.-], not starting with '.')");
}

absl::Status CheckIdentifier(const std::string& what, const std::string& value) {
  bool ok = !value.empty() && value.size() <= kMaxLength && !absl::ascii_isdigit(value[0]);
  for (char c : value) ok = ok && (absl::ascii_isalnum(c) || c == '_');
  if (ok) return absl::OkStatus();
  return Refuse(what, value, "an identifier ([A-Za-z_][A-Za-z0-9_]*)");
}

}  // namespace argus::cli
