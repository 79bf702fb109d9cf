#include "kb/expr.h"

#include <cctype>

#include "absl/strings/str_cat.h"
#include "base/status.h"

namespace argus::kb {
namespace {

// Recursive descent over: or > and > comparison > additive > multiplicative > unary > primary.
// With `env` null it only collects names.
class Parser {
 public:
  Parser(const std::string& s, const std::map<std::string, int64_t>* env,
         std::set<std::string>* names)
      : s_(s), env_(env), names_(names) {}

  absl::StatusOr<int64_t> Parse() {
    ASSIGN_OR_RETURN(int64_t v, Or());
    Skip();
    if (pos_ != s_.size()) return Error("unexpected text");
    return v;
  }

 private:
  absl::Status Error(const std::string& what) const {
    return absl::InvalidArgumentError(
        absl::StrCat("expression '", s_, "' at column ", pos_ + 1, ": ", what));
  }
  void Skip() {
    while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
  }
  bool Eat(const std::string& tok) {
    Skip();
    if (s_.compare(pos_, tok.size(), tok) != 0) return false;
    // Word operators must end at a word boundary.
    if (std::isalpha(static_cast<unsigned char>(tok[0])) && pos_ + tok.size() < s_.size() &&
        (std::isalnum(static_cast<unsigned char>(s_[pos_ + tok.size()])) ||
         s_[pos_ + tok.size()] == '_')) {
      return false;
    }
    pos_ += tok.size();
    return true;
  }
  absl::StatusOr<int64_t> Or() {
    ASSIGN_OR_RETURN(int64_t v, And());
    while (Eat("or")) {
      ASSIGN_OR_RETURN(int64_t r, And());
      v = (v != 0 || r != 0) ? 1 : 0;
    }
    return v;
  }
  absl::StatusOr<int64_t> And() {
    ASSIGN_OR_RETURN(int64_t v, Compare());
    while (Eat("and")) {
      ASSIGN_OR_RETURN(int64_t r, Compare());
      v = (v != 0 && r != 0) ? 1 : 0;
    }
    return v;
  }
  absl::StatusOr<int64_t> Compare() {
    ASSIGN_OR_RETURN(int64_t v, Add());
    static const char* const kOps[] = {"==", "!=", "<=", ">=", "<", ">"};
    for (const char* op : kOps) {
      if (Eat(op)) {
        ASSIGN_OR_RETURN(int64_t r, Add());
        std::string o = op;
        if (o == "==") return int64_t{v == r};
        if (o == "!=") return int64_t{v != r};
        if (o == "<=") return int64_t{v <= r};
        if (o == ">=") return int64_t{v >= r};
        if (o == "<") return int64_t{v < r};
        return int64_t{v > r};
      }
    }
    return v;
  }
  absl::StatusOr<int64_t> Add() {
    ASSIGN_OR_RETURN(int64_t v, Mul());
    while (true) {
      if (Eat("+")) {
        ASSIGN_OR_RETURN(int64_t r, Mul());
        v += r;
      } else if (Eat("-")) {
        ASSIGN_OR_RETURN(int64_t r, Mul());
        v -= r;
      } else {
        return v;
      }
    }
  }
  absl::StatusOr<int64_t> Mul() {
    ASSIGN_OR_RETURN(int64_t v, Unary());
    while (true) {
      char op = 0;
      if (Eat("*"))
        op = '*';
      else if (Eat("/"))
        op = '/';
      else if (Eat("%"))
        op = '%';
      else
        return v;
      ASSIGN_OR_RETURN(int64_t r, Unary());
      if (op == '*') {
        v *= r;
      } else if (env_ != nullptr) {
        if (r == 0) return Error("division by zero");
        v = op == '/' ? v / r : v % r;
      }
    }
  }
  absl::StatusOr<int64_t> Unary() {
    if (Eat("-")) {
      ASSIGN_OR_RETURN(int64_t v, Unary());
      return -v;
    }
    if (Eat("not")) {
      ASSIGN_OR_RETURN(int64_t v, Unary());
      return int64_t{v == 0};
    }
    return Primary();
  }
  absl::StatusOr<int64_t> Primary() {
    Skip();
    if (Eat("(")) {
      ASSIGN_OR_RETURN(int64_t v, Or());
      if (!Eat(")")) return Error("expected ')'");
      return v;
    }
    if (pos_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_]))) {
      int64_t v = 0;
      while (pos_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_]))) {
        if (v > (int64_t{1} << 58)) return Error("literal too large");
        v = v * 10 + (s_[pos_++] - '0');
      }
      return v;
    }
    if (pos_ < s_.size() &&
        (std::isalpha(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '_')) {
      size_t start = pos_;
      while (pos_ < s_.size() &&
             (std::isalnum(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '_')) {
        ++pos_;
      }
      std::string name = s_.substr(start, pos_ - start);
      if (names_ != nullptr) names_->insert(name);
      if (env_ == nullptr) return 1;
      auto it = env_->find(name);
      if (it == env_->end()) return Error(absl::StrCat("unknown name '", name, "'"));
      return it->second;
    }
    return Error(pos_ < s_.size() ? "expected a number, a name or '('" : "unexpected end");
  }

  const std::string& s_;
  const std::map<std::string, int64_t>* env_;
  std::set<std::string>* names_;
  size_t pos_ = 0;
};

}  // namespace

absl::StatusOr<int64_t> EvalExpr(const std::string& expr,
                                 const std::map<std::string, int64_t>& env) {
  return Parser(expr, &env, nullptr).Parse();
}

absl::StatusOr<std::set<std::string>> ExprNames(const std::string& expr) {
  std::set<std::string> names;
  RETURN_IF_ERROR(Parser(expr, nullptr, &names).Parse().status());
  return names;
}

std::set<std::string> Placeholders(const std::string& text) {
  std::set<std::string> out;
  for (size_t p = text.find("${"); p != std::string::npos; p = text.find("${", p + 2)) {
    size_t e = text.find('}', p);
    if (e == std::string::npos) break;
    out.insert(text.substr(p + 2, e - p - 2));
  }
  return out;
}

absl::StatusOr<std::string> Substitute(const std::string& text,
                                       const std::map<std::string, std::string>& vars) {
  std::string out;
  size_t pos = 0;
  while (true) {
    size_t p = text.find("${", pos);
    if (p == std::string::npos) break;
    size_t e = text.find('}', p);
    if (e == std::string::npos) return absl::InvalidArgumentError("unterminated ${ in template");
    std::string name = text.substr(p + 2, e - p - 2);
    auto it = vars.find(name);
    if (it == vars.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat("template placeholder ${", name, "} has no value for this problem"));
    }
    out.append(text, pos, p - pos);
    out += it->second;
    pos = e + 1;
  }
  out.append(text, pos, std::string::npos);
  return out;
}

}  // namespace argus::kb
