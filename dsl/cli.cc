#include "dsl/cli.h"

#include <cmath>
#include <cstring>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "base/flags.h"
#include "base/status.h"
#include "dsl/check.h"
#include "dsl/interp.h"

namespace argus::dsl {
namespace {

struct Common {
  std::string kernel;
  std::vector<std::string> consts;
  std::string arch;
};

void Declare(FlagSet* fs, Common* c) {
  fs->String("kernel", &c->kernel, "kernel to select (default: the last one in the file)");
  fs->List("const", &c->consts, "NAME=V: override a const parameter (repeatable)");
  fs->String("arch", &c->arch, "target: sm_90a or gfx942 (default: the kernel's arch= or sm_90a)");
}

absl::StatusOr<std::map<std::string, std::string>> ParseAssignments(
    const std::vector<std::string>& items, const char* flag) {
  std::map<std::string, std::string> out;
  for (const std::string& item : items) {
    for (absl::string_view part : absl::StrSplit(item, ',', absl::SkipEmpty())) {
      std::vector<std::string> kv = absl::StrSplit(part, absl::MaxSplits('=', 1));
      if (kv.size() != 2 || kv[0].empty()) {
        return absl::InvalidArgumentError(
            absl::StrCat("--", flag, " expects NAME=VALUE, got '", part, "'"));
      }
      out[kv[0]] = kv[1];
    }
  }
  return out;
}

absl::StatusOr<ir::Module> Load(const std::string& path, const Common& c) {
  CheckOptions opt;
  ASSIGN_OR_RETURN(opt.consts, ParseAssignments(c.consts, "const"));
  opt.arch = c.arch;
  return CompileFile(path, opt);
}

absl::StatusOr<const ir::Function*> Select(const ir::Module& m, const std::string& name) {
  const ir::Function* k = nullptr;
  for (const ir::Function& f : m.functions) {
    if (f.is_kernel && (name.empty() || f.name == name)) k = &f;
  }
  if (!k) return absl::InvalidArgumentError(absl::StrCat("no kernel named '", name, "'"));
  return k;
}

uint64_t Fnv(const std::vector<double>& v) {
  uint64_t h = 1469598103934665603ull;
  for (double x : v) {
    uint64_t bits;
    double y = x == 0 ? 0.0 : x;  // -0 == 0
    std::memcpy(&bits, &y, 8);
    for (int i = 0; i < 8; ++i) {
      h ^= (bits >> (8 * i)) & 0xff;
      h *= 1099511628211ull;
    }
  }
  return h;
}

}  // namespace

absl::Status IrVerb(const std::vector<std::string>& args, std::ostream& out,
                    const std::string& program) {
  Common c;
  FlagSet fs(program, "FILE [--kernel K] [--const NAME=V]... [--arch A]");
  Declare(&fs, &c);
  ASSIGN_OR_RETURN(std::vector<std::string> pos, fs.Parse(args));
  if (fs.help_requested()) {
    out << fs.Help();
    return absl::OkStatus();
  }
  if (pos.size() != 1) return absl::InvalidArgumentError("usage: " + program + " FILE [flags]");
  ASSIGN_OR_RETURN(ir::Module m, Load(pos[0], c));
  if (c.kernel.empty()) {
    out << ir::Dump(m);
  } else {
    ASSIGN_OR_RETURN(const ir::Function* k, Select(m, c.kernel));
    out << ir::Dump(*k);
  }
  return absl::OkStatus();
}

absl::Status RunVerb(const std::vector<std::string>& args, std::ostream& out,
                     const std::string& program) {
  Common c;
  std::vector<std::string> dims, scalars;
  std::string inputs = "random";
  int64_t seed = 1;
  FlagSet fs(program, "FILE --dims M=..,N=.. [flags]");
  Declare(&fs, &c);
  fs.List("dims", &dims, "NAME=V,...: symbolic dims");
  fs.List("scalars", &scalars, "NAME=V,...: scalar arguments");
  fs.String("inputs", &inputs, "random | zeros");
  fs.Int("seed", &seed, "random seed");
  ASSIGN_OR_RETURN(std::vector<std::string> pos, fs.Parse(args));
  if (fs.help_requested()) {
    out << fs.Help();
    return absl::OkStatus();
  }
  if (pos.size() != 1)
    return absl::InvalidArgumentError("usage: " + program + " FILE --dims ... [flags]");
  ASSIGN_OR_RETURN(ir::Module m, Load(pos[0], c));
  ASSIGN_OR_RETURN(const ir::Function* k, Select(m, c.kernel));
  LaunchArgs la;
  ASSIGN_OR_RETURN(auto dm, ParseAssignments(dims, "dims"));
  for (const auto& [name, v] : dm) {
    int64_t x;
    if (!absl::SimpleAtoi(v, &x))
      return absl::InvalidArgumentError(absl::StrCat("--dims ", name, "=", v, ": not an integer"));
    la.dims[name] = x;
  }
  ASSIGN_OR_RETURN(auto sm, ParseAssignments(scalars, "scalars"));
  for (const auto& [name, v] : sm) {
    double x;
    if (!absl::SimpleAtod(v, &x))
      return absl::InvalidArgumentError(absl::StrCat("--scalars ", name, "=", v, ": not a number"));
    la.scalars[name] = x;
  }
  ASSIGN_OR_RETURN(std::vector<HostTensor> ts, MakeTensors(*k, la));
  if (inputs == "random")
    FillRandom(&ts, static_cast<uint64_t>(seed));
  else if (inputs != "zeros")
    return absl::InvalidArgumentError("--inputs must be random or zeros");
  RunStats st;
  RETURN_IF_ERROR(Run(m, *k, la, &ts, &st));
  out << absl::StrFormat("kernel %s: %d blocks x %d threads, %d instructions, %.3f s\n", k->name,
                         st.blocks, k->threads, st.instructions, st.seconds);
  for (const HostTensor& t : ts) {
    double sum = 0, asum = 0;
    int64_t nans = 0;
    for (double x : t.data) {
      if (std::isnan(x)) {
        ++nans;
        continue;
      }
      sum += x;
      asum += std::fabs(x);
    }
    out << absl::StrFormat("%s %s[%s]: sum=%.9g abs_sum=%.9g nan=%d fnv=%016x\n", t.name,
                           DTypeName(t.dtype), absl::StrJoin(t.shape, ","), sum, asum, nans,
                           Fnv(t.data));
  }
  return absl::OkStatus();
}

absl::Status DslMain(const std::vector<std::string>& args, std::ostream& out) {
  if (args.empty() || args[0] == "--help" || args[0] == "help") {
    out << "usage: argus-dsl ir|run FILE [flags]; argus-dsl VERB --help\n";
    return args.empty() ? absl::InvalidArgumentError("missing verb") : absl::OkStatus();
  }
  std::vector<std::string> rest(args.begin() + 1, args.end());
  if (args[0] == "ir") return IrVerb(rest, out);
  if (args[0] == "run") return RunVerb(rest, out);
  return absl::InvalidArgumentError(absl::StrCat("unknown verb '", args[0], "' (use ir or run)"));
}

}  // namespace argus::dsl
