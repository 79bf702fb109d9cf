// base/status.h: the one error currency of Argus.
//
// Every fallible function returns absl::Status or absl::StatusOr<T>. Debian's
// Abseil (20220623) ships no status macros, so these are ours. LLVM Error /
// Expected and Z3 exceptions are converted to Status at module boundaries.
//
// Thread safety: macros only; no state.
#ifndef ARGUS_BASE_STATUS_H_
#define ARGUS_BASE_STATUS_H_

#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define ARGUS_STATUS_CONCAT_INNER(a, b) a##b
#define ARGUS_STATUS_CONCAT(a, b) ARGUS_STATUS_CONCAT_INNER(a, b)

// RETURN_IF_ERROR(expr): evaluates expr (a Status) and returns it if not ok.
#define RETURN_IF_ERROR(expr)                              \
  do {                                                     \
    ::absl::Status argus_status_tmp_ = (expr);             \
    if (!argus_status_tmp_.ok()) return argus_status_tmp_; \
  } while (0)

// ASSIGN_OR_RETURN(lhs, expr): evaluates expr (a StatusOr<T>); on error
// returns its status, otherwise moves the value into lhs (which may be a
// declaration such as `auto x`).
#define ASSIGN_OR_RETURN(lhs, expr) \
  ARGUS_ASSIGN_OR_RETURN_IMPL(ARGUS_STATUS_CONCAT(argus_statusor_, __LINE__), lhs, expr)

#define ARGUS_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                                \
  if (!tmp.ok()) return std::move(tmp).status();    \
  lhs = std::move(tmp).value()

#endif  // ARGUS_BASE_STATUS_H_
