// clients/cli/server_strings.h: what the CLI accepts from a server before a
// string it sent reaches a file path or generated code.
//
// The server (or something posing as it) is not trusted with the user's
// files: a job id becomes part of a file name only when it is a plain name
// (no '/', no leading '.', no control bytes), and a kernel name, launch
// symbol or tensor name is written into C++ or Python only when it is an
// identifier. Refusals name the field and show the value escaped.
//
// Thread safety: pure functions.
#ifndef ARGUS_CLIENTS_CLI_SERVER_STRINGS_H_
#define ARGUS_CLIENTS_CLI_SERVER_STRINGS_H_

#include <string>

#include "absl/status/status.h"

namespace argus::cli {

// [A-Za-z0-9_.-], 1 to 128 bytes, not starting with '.': one path
// component that cannot climb out of its directory.
absl::Status CheckFileNamePart(const std::string& what, const std::string& value);

// [A-Za-z_][A-Za-z0-9_]*, at most 128 bytes: safe inside C++ and Python
// source, in names and in string literals alike.
absl::Status CheckIdentifier(const std::string& what, const std::string& value);

}  // namespace argus::cli

#endif  // ARGUS_CLIENTS_CLI_SERVER_STRINGS_H_
