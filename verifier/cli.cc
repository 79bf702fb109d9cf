#include "verifier/cli.h"

#include <cstdint>
#include <functional>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "base/flags.h"
#include "base/status.h"
#include "dsl/check.h"
#include "verifier/verify.h"

namespace argus::verifier {
namespace {

absl::Status SplitKv(
    const std::vector<std::string>& items, const char* flag,
    const std::function<absl::Status(const std::string&, const std::string&)>& put) {
  for (const std::string& item : items) {
    for (absl::string_view part : absl::StrSplit(item, ',', absl::SkipEmpty())) {
      std::vector<std::string> kv = absl::StrSplit(part, absl::MaxSplits('=', 1));
      if (kv.size() != 2 || kv[0].empty()) {
        return absl::InvalidArgumentError(
            absl::StrCat("--", flag, " expects NAME=VALUE, got '", part, "'"));
      }
      RETURN_IF_ERROR(put(kv[0], kv[1]));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<bool> VerifyVerb(const std::vector<std::string>& args, std::ostream& out) {
  std::vector<std::string> consts, dims;
  std::string arch;
  bool json = false;
  int64_t timeout_ms = 60'000, deadline_ms = 0;
  int64_t rlimit = static_cast<int64_t>(Solver::kDefaultRlimit);
  FlagSet fs("argus verify",
             "FILE [--const NAME=V]... [--dims M=..,N=..] [--kernel NAME] [--json]");
  fs.List("const", &consts, "NAME=V: override a const parameter (repeatable)");
  fs.List("dims", &dims, "NAME=V,...: concrete tensor dims (others stay symbolic)");
  fs.String("arch", &arch, "target: sm_90a or gfx942");
  fs.Bool("json", &json, "print the report as JSON");
  fs.Int("rlimit", &rlimit,
         "Z3 steps per obligation (deterministic: exhausting them is reported as unknown)");
  fs.Int("timeout_ms", &timeout_ms,
         "wall-clock last resort per obligation (a timeout is reported as unknown)");
  std::string kernel;
  fs.String("kernel", &kernel, "verify only this kernel of the file (default: every kernel)");
  fs.Int("deadline_ms", &deadline_ms,
         "wall-clock budget of the whole verification (0: none); past it the result is unknown");
  ASSIGN_OR_RETURN(std::vector<std::string> pos, fs.Parse(args));
  if (fs.help_requested()) {
    out << fs.Help();
    return true;
  }
  if (pos.size() != 1) return absl::InvalidArgumentError("usage: argus verify FILE [flags]");
  if (timeout_ms <= 0 || timeout_ms > 600000) {
    return absl::InvalidArgumentError("--timeout_ms must be in (0, 600000]");
  }
  if (rlimit <= 0 || rlimit > UINT32_MAX) {
    return absl::InvalidArgumentError("--rlimit must be in (0, 4294967295]");
  }
  dsl::CheckOptions check;
  check.arch = arch;
  RETURN_IF_ERROR(SplitKv(consts, "const", [&](const std::string& k, const std::string& v) {
    check.consts[k] = v;
    return absl::OkStatus();
  }));
  if (deadline_ms < 0) return absl::InvalidArgumentError("--deadline_ms must be >= 0");
  VerifyOptions opt;
  opt.solver_timeout_ms = static_cast<unsigned>(timeout_ms);
  opt.solver_rlimit = static_cast<uint64_t>(rlimit);
  opt.deadline_ms = deadline_ms;
  opt.kernel = kernel;
  RETURN_IF_ERROR(SplitKv(dims, "dims", [&](const std::string& k, const std::string& v) {
    int64_t x;
    if (!absl::SimpleAtoi(v, &x) || x < 1 || x > (int64_t{1} << 30)) {
      return absl::InvalidArgumentError(
          absl::StrCat("--dims ", k, ": expected an integer in [1, 2^30], got '", v, "'"));
    }
    opt.dims[k] = x;
    return absl::OkStatus();
  }));
  ASSIGN_OR_RETURN(dsl::ir::Module m, dsl::CompileFile(pos[0], check));
  ASSIGN_OR_RETURN(Report r, Verify(m, opt));
  out << (json ? ToJson(r) + "\n" : ToText(r));
  return r.verified();
}

}  // namespace argus::verifier
