// base/secret_file.h: reading tokens and key material from files.
//
// Secrets reach Argus programs as files (a systemd credential, a Kubernetes
// Secret volume, a file in the Slurm user's home), never on the command line
// where `ps` shows them. ReadSecretFile returns the first non-comment line,
// trimmed; ReadSecretLines every non-comment line. Both refuse a missing,
// empty or oversized file with a message naming it, and warn (once per call)
// when the file is readable by group or others.
//
// Thread safety: pure functions (they only read the file).
#ifndef ARGUS_BASE_SECRET_FILE_H_
#define ARGUS_BASE_SECRET_FILE_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace argus {

// The whole file (for PEM certificates and keys), at most `max_bytes`.
absl::StatusOr<std::string> ReadSmallFile(const std::string& path, size_t max_bytes = 1 << 20);

// Every line that is neither blank nor a '#' comment, trimmed.
absl::StatusOr<std::vector<std::string>> ReadSecretLines(const std::string& path);

// The first such line.
absl::StatusOr<std::string> ReadSecretFile(const std::string& path);

}  // namespace argus

#endif  // ARGUS_BASE_SECRET_FILE_H_
