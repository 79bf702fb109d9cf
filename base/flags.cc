#include "base/flags.h"

#include <cerrno>
#include <cstdlib>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "base/suggest.h"

namespace argus {

FlagSet::FlagSet(std::string program, std::string usage)
    : program_(std::move(program)), usage_(std::move(usage)) {}

void FlagSet::String(const std::string& name, std::string* target, const std::string& help) {
  flags_[name] = {Kind::kString, target, help, *target};
}
void FlagSet::Int(const std::string& name, int64_t* target, const std::string& help) {
  flags_[name] = {Kind::kInt, target, help, std::to_string(*target)};
}
void FlagSet::Double(const std::string& name, double* target, const std::string& help) {
  flags_[name] = {Kind::kDouble, target, help, std::to_string(*target)};
}
void FlagSet::Bool(const std::string& name, bool* target, const std::string& help) {
  flags_[name] = {Kind::kBool, target, help, *target ? "true" : "false"};
}
void FlagSet::List(const std::string& name, std::vector<std::string>* target,
                   const std::string& help) {
  flags_[name] = {Kind::kList, target, help, ""};
}

absl::Status FlagSet::Set(const std::string& name, Flag& flag, const std::string& value) {
  switch (flag.kind) {
    case Kind::kString:
      *static_cast<std::string*>(flag.target) = value;
      return absl::OkStatus();
    case Kind::kInt: {
      int64_t v;
      if (!absl::SimpleAtoi(value, &v)) {
        return absl::InvalidArgumentError(
            absl::StrCat("flag --", name, ": '", value, "' is not an integer"));
      }
      *static_cast<int64_t*>(flag.target) = v;
      return absl::OkStatus();
    }
    case Kind::kDouble: {
      double v;
      if (!absl::SimpleAtod(value, &v)) {
        return absl::InvalidArgumentError(
            absl::StrCat("flag --", name, ": '", value, "' is not a number"));
      }
      *static_cast<double*>(flag.target) = v;
      return absl::OkStatus();
    }
    case Kind::kBool: {
      bool v;
      if (!absl::SimpleAtob(value, &v)) {
        return absl::InvalidArgumentError(
            absl::StrCat("flag --", name, ": '", value, "' is not true/false"));
      }
      *static_cast<bool*>(flag.target) = v;
      return absl::OkStatus();
    }
    case Kind::kList:
      static_cast<std::vector<std::string>*>(flag.target)->push_back(value);
      return absl::OkStatus();
  }
  return absl::InternalError("unreachable flag kind");
}

absl::StatusOr<std::vector<std::string>> FlagSet::Parse(int argc, char** argv, int first) {
  std::vector<std::string> args;
  for (int i = first; i < argc; ++i) args.emplace_back(argv[i]);
  return Parse(args);
}

absl::StatusOr<std::vector<std::string>> FlagSet::Parse(const std::vector<std::string>& args) {
  std::vector<std::string> positional;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--") {
      positional.insert(positional.end(), args.begin() + i + 1, args.end());
      break;
    }
    if (arg.size() < 2 || arg[0] != '-' || arg == "-") {
      positional.push_back(arg);
      continue;
    }
    std::string body = arg.substr(arg[1] == '-' ? 2 : 1);
    if (body == "help" || body == "h") {
      help_requested_ = true;
      continue;
    }
    std::string name = body, value;
    bool has_value = false;
    if (auto eq = body.find('='); eq != std::string::npos) {
      name = body.substr(0, eq);
      value = body.substr(eq + 1);
      has_value = true;
    }
    // Accept both --log_level and --log-level.
    auto find = [&](const std::string& n) {
      auto it = flags_.find(n);
      if (it != flags_.end()) return it;
      std::string alt = n;
      for (char& c : alt) c = (c == '-') ? '_' : (c == '_' ? '-' : c);
      return flags_.find(alt);
    };
    auto it = find(name);
    if (it == flags_.end() && !has_value && name.rfind("no-", 0) == 0) {
      auto neg = find(name.substr(3));
      if (neg != flags_.end() && neg->second.kind == Kind::kBool) {
        *static_cast<bool*>(neg->second.target) = false;
        continue;
      }
    }
    if (it == flags_.end()) {
      std::vector<std::string> names;
      for (const auto& [known, flag] : flags_) names.push_back(known);
      std::string hint = DidYouMean(name, names, "--");
      return absl::InvalidArgumentError(
          absl::StrCat(program_, ": unknown flag --", name, hint.empty() ? " (see --help)" : hint));
    }
    if (!has_value) {
      if (it->second.kind == Kind::kBool) {
        value = "true";
      } else if (i + 1 < args.size()) {
        value = args[++i];
      } else {
        return absl::InvalidArgumentError(
            absl::StrCat(program_, ": flag --", name, " needs a value"));
      }
    }
    auto st = Set(it->first, it->second, value);
    if (!st.ok()) return absl::InvalidArgumentError(absl::StrCat(program_, ": ", st.message()));
  }
  return positional;
}

std::string FlagSet::Help() const {
  std::string out = absl::StrCat("usage: ", program_, " ", usage_, "\n");
  if (!flags_.empty()) out += "\nflags:\n";
  for (const auto& [name, flag] : flags_) {
    absl::StrAppend(&out, "  --", name);
    if (flag.kind != Kind::kBool) absl::StrAppend(&out, " VALUE");
    absl::StrAppend(&out, "\n      ", flag.help);
    if (!flag.default_text.empty()) absl::StrAppend(&out, " (default: ", flag.default_text, ")");
    out += "\n";
  }
  return out;
}

}  // namespace argus
