#include "clients/batch/doc.h"

#include <cctype>
#include <cstring>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace argus::batch {

const Node* Node::Find(const std::string& key) const {
  for (const auto& [k, v] : map) {
    if (k == key) return &v;
  }
  return nullptr;
}

const char* Node::TypeName() const {
  switch (type) {
    case Type::kNull:
      return "nothing";
    case Type::kScalar:
      return "a scalar";
    case Type::kMap:
      return "a mapping";
    case Type::kList:
      return "a list";
  }
  return "?";
}

namespace {

constexpr int kMaxDepth = 64;

// Recursive descent over flow syntax: strict JSON, or YAML flow collections
// (which also allow plain unquoted scalars).
class FlowParser {
 public:
  FlowParser(const std::string& text, int line, bool yaml) : s_(text), line_(line), yaml_(yaml) {}

  absl::StatusOr<Node> ParseDocument() {
    auto n = Value(0);
    if (!n.ok()) return n;
    Skip();
    if (i_ != s_.size()) return Err("unexpected text after the value");
    return n;
  }

 private:
  absl::Status Err(const std::string& what) const {
    return absl::InvalidArgumentError(yaml_ ? absl::StrCat(line_, ": ", what)
                                            : absl::StrCat(line_, ":", col_, ": ", what));
  }
  void Advance() {
    if (s_[i_] == '\n') {
      ++line_;
      col_ = 1;
    } else {
      ++col_;
    }
    ++i_;
  }
  void Skip() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n' || s_[i_] == '\r'))
      Advance();
  }
  bool Eat(char c) {
    Skip();
    if (i_ < s_.size() && s_[i_] == c) {
      Advance();
      return true;
    }
    return false;
  }

  absl::StatusOr<Node> Value(int depth) {
    if (depth > kMaxDepth) return Err("nested too deeply");
    Skip();
    if (i_ >= s_.size()) return Err("unexpected end of input, expected a value");
    Node n;
    n.line = line_;
    char c = s_[i_];
    if (c == '{' || c == '[') {
      bool is_map = c == '{';
      char close = is_map ? '}' : ']';
      n.type = is_map ? Node::Type::kMap : Node::Type::kList;
      Advance();
      if (Eat(close)) return n;
      while (true) {
        if (is_map) {
          Skip();
          int key_line = line_;
          auto key = yaml_ ? Scalar(true) : String();
          if (!key.ok()) return key.status();
          if (!Eat(':')) return Err("expected ':' after a key");
          auto v = Value(depth + 1);
          if (!v.ok()) return v;
          if (n.Find(key->scalar)) {
            return absl::InvalidArgumentError(
                absl::StrCat(key_line, ": duplicate key '", key->scalar, "'"));
          }
          n.map.emplace_back(key->scalar, std::move(*v));
        } else {
          auto v = Value(depth + 1);
          if (!v.ok()) return v;
          n.list.push_back(std::move(*v));
        }
        if (Eat(close)) return n;
        if (!Eat(',')) return Err(absl::StrCat("expected ',' or '", std::string(1, close), "'"));
      }
    }
    if (c == '"' || (yaml_ && c == '\'')) return String();
    return Scalar(false);
  }

  absl::StatusOr<Node> String() {
    Skip();
    Node n;
    n.line = line_;
    n.type = Node::Type::kScalar;
    n.quoted = true;
    if (i_ >= s_.size() || (s_[i_] != '"' && !(yaml_ && s_[i_] == '\''))) {
      return Err("expected a quoted string");
    }
    char q = s_[i_];
    Advance();
    while (true) {
      if (i_ >= s_.size() || s_[i_] == '\n') return Err("unterminated string");
      char c = s_[i_];
      if (c == q) {
        if (q == '\'' && i_ + 1 < s_.size() && s_[i_ + 1] == '\'') {
          n.scalar += '\'';
          Advance();
          Advance();
          continue;
        }
        Advance();
        return n;
      }
      if (static_cast<unsigned char>(c) < 0x20) return Err("control character in a string");
      if (c == '\\' && q == '"') {
        Advance();
        if (i_ >= s_.size()) return Err("unterminated string");
        char e = s_[i_];
        const char* simple = "\"\\/bfnrt";
        const char* mapped = "\"\\/\b\f\n\r\t";
        if (const char* p = std::strchr(simple, e); p && e) {
          n.scalar += mapped[p - simple];
          Advance();
          continue;
        }
        if (e != 'u') return Err(absl::StrCat("bad escape '\\", std::string(1, e), "'"));
        Advance();
        if (i_ + 4 > s_.size()) return Err("bad \\u escape");
        unsigned v = 0;
        for (int k = 0; k < 4; ++k) {
          char h = s_[i_];
          if (!std::isxdigit(static_cast<unsigned char>(h))) return Err("bad \\u escape");
          v = v * 16 + static_cast<unsigned>(std::isdigit(static_cast<unsigned char>(h))
                                                 ? h - '0'
                                                 : std::tolower(h) - 'a' + 10);
          Advance();
        }
        // UTF-8 (surrogate pairs are kept as two code points: names are ASCII).
        if (v < 0x80) {
          n.scalar += static_cast<char>(v);
        } else if (v < 0x800) {
          n.scalar += static_cast<char>(0xC0 | (v >> 6));
          n.scalar += static_cast<char>(0x80 | (v & 0x3F));
        } else {
          n.scalar += static_cast<char>(0xE0 | (v >> 12));
          n.scalar += static_cast<char>(0x80 | ((v >> 6) & 0x3F));
          n.scalar += static_cast<char>(0x80 | (v & 0x3F));
        }
        continue;
      }
      n.scalar += c;
      Advance();
    }
  }

  // JSON: numbers, true, false, null. YAML flow: any plain word.
  absl::StatusOr<Node> Scalar(bool is_key) {
    Skip();
    Node n;
    n.line = line_;
    if (yaml_ && i_ < s_.size() && (s_[i_] == '"' || s_[i_] == '\'')) return String();
    size_t start = i_;
    while (i_ < s_.size()) {
      char c = s_[i_];
      if (c == ',' || c == ']' || c == '}' || c == '\n' || c == '[' || c == '{') break;
      if (c == ':' && (is_key || !yaml_)) break;
      if (!yaml_ && (c == ' ' || c == '\t' || c == '\r')) break;
      Advance();
    }
    std::string word(absl::StripAsciiWhitespace(s_.substr(start, i_ - start)));
    if (word.empty()) return Err("expected a value");
    if (yaml_) {
      if (word == "null" || word == "~") return n;
      n.type = Node::Type::kScalar;
      n.scalar = word;
      return n;
    }
    if (word == "null") return n;
    n.type = Node::Type::kScalar;
    n.scalar = word;
    if (word == "true" || word == "false") return n;
    // A JSON number.
    size_t k = 0;
    auto digits = [&] {
      size_t b = k;
      while (k < word.size() && std::isdigit(static_cast<unsigned char>(word[k]))) ++k;
      return k > b;
    };
    if (k < word.size() && word[k] == '-') ++k;
    bool ok = digits();
    if (ok && k < word.size() && word[k] == '.') {
      ++k;
      ok = digits();
    }
    if (ok && k < word.size() && (word[k] == 'e' || word[k] == 'E')) {
      ++k;
      if (k < word.size() && (word[k] == '+' || word[k] == '-')) ++k;
      ok = digits();
    }
    if (!ok || k != word.size()) return Err(absl::StrCat("unexpected '", word, "'"));
    return n;
  }

  const std::string& s_;
  size_t i_ = 0;
  int line_;
  int col_ = 1;
  bool yaml_;
};

struct Line {
  int number;
  int indent;
  std::string text;  // without indentation and comment
};

// Strips a comment: '#' at the start or after whitespace, outside quotes.
std::string StripComment(const std::string& s) {
  char quote = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (quote) {
      if (c == quote) quote = 0;
    } else if (c == '"' || c == '\'') {
      quote = c;
    } else if (c == '#' && (i == 0 || s[i - 1] == ' ' || s[i - 1] == '\t')) {
      return s.substr(0, i);
    }
  }
  return s;
}

// Position of the ':' that ends a mapping key ("key: v" or "key:"), or npos.
size_t KeyColon(const std::string& s) {
  char quote = 0;
  if (!s.empty() && (s[0] == '[' || s[0] == '{')) return std::string::npos;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (quote) {
      if (c == quote) quote = 0;
    } else if ((c == '"' || c == '\'') && i == 0) {
      quote = c;
    } else if (c == ':' && (i + 1 == s.size() || s[i + 1] == ' ')) {
      return i;
    }
  }
  return std::string::npos;
}

class YamlParser {
 public:
  explicit YamlParser(std::vector<Line> lines) : lines_(std::move(lines)) {}

  absl::StatusOr<Node> Parse() {
    if (lines_.empty()) return Node{};
    auto n = Block(lines_[0].indent, 0);
    if (!n.ok()) return n;
    if (pos_ < lines_.size()) return Err(lines_[pos_], "unexpected indentation");
    return n;
  }

 private:
  static absl::Status Err(const Line& l, const std::string& what) {
    return absl::InvalidArgumentError(absl::StrCat(l.number, ": ", what));
  }

  absl::StatusOr<Node> Inline(const Line& l, const std::string& text) {
    if (text.empty()) return Node{};
    if (text[0] == '|' || text[0] == '>')
      return Err(l, "block scalars (| and >) are not supported");
    if (text[0] == '&' || text[0] == '*' || text[0] == '!')
      return Err(l, "anchors, aliases and tags are not supported");
    FlowParser p(text, l.number, true);
    return p.ParseDocument();
  }

  absl::StatusOr<Node> Block(int indent, int depth) {
    if (depth > kMaxDepth) return Err(lines_[pos_], "nested too deeply");
    Line& first = lines_[pos_];
    bool is_list = first.text == "-" || first.text.rfind("- ", 0) == 0;
    Node n;
    n.line = first.number;
    n.type = is_list ? Node::Type::kList : Node::Type::kMap;
    if (!is_list && KeyColon(first.text) == std::string::npos) {
      ++pos_;
      auto v = Inline(first, first.text);
      if (v.ok() && pos_ < lines_.size() && lines_[pos_].indent >= indent)
        return Err(lines_[pos_], "expected 'key: value' or '- item'");
      return v;
    }
    while (pos_ < lines_.size() && lines_[pos_].indent == indent) {
      Line& l = lines_[pos_];
      bool item = l.text == "-" || l.text.rfind("- ", 0) == 0;
      if (item != is_list) {
        return Err(l, is_list ? "expected '- item' in this list" : "expected 'key: value' here");
      }
      if (is_list) {
        std::string rest = l.text.size() > 1 ? l.text.substr(2) : "";
        size_t lead = rest.find_first_not_of(' ');
        if (lead == std::string::npos) {
          ++pos_;
          if (pos_ < lines_.size() && lines_[pos_].indent > indent) {
            auto v = Block(lines_[pos_].indent, depth + 1);
            if (!v.ok()) return v;
            n.list.push_back(std::move(*v));
          } else {
            n.list.push_back(Node{Node::Type::kNull, l.number});
          }
          continue;
        }
        // "- key: v" opens a mapping whose keys align with "key".
        l.indent += 2 + static_cast<int>(lead);
        l.text = rest.substr(lead);
        auto v = Block(l.indent, depth + 1);
        if (!v.ok()) return v;
        n.list.push_back(std::move(*v));
        continue;
      }
      size_t colon = KeyColon(l.text);
      if (colon == std::string::npos) return Err(l, "expected 'key: value'");
      std::string key(absl::StripAsciiWhitespace(l.text.substr(0, colon)));
      if (key.size() >= 2 && (key[0] == '"' || key[0] == '\'') && key.back() == key[0])
        key = key.substr(1, key.size() - 2);
      if (key.empty()) return Err(l, "empty key");
      if (n.Find(key)) return Err(l, "duplicate key '" + key + "'");
      std::string value(absl::StripAsciiWhitespace(l.text.substr(colon + 1)));
      ++pos_;
      if (value.empty()) {
        if (pos_ < lines_.size() &&
            (lines_[pos_].indent > indent ||
             (lines_[pos_].indent == indent &&
              (lines_[pos_].text == "-" || lines_[pos_].text.rfind("- ", 0) == 0)))) {
          auto v = Block(lines_[pos_].indent, depth + 1);
          if (!v.ok()) return v;
          n.map.emplace_back(key, std::move(*v));
        } else {
          n.map.emplace_back(key, Node{Node::Type::kNull, l.number});
        }
        continue;
      }
      auto v = Inline(l, value);
      if (!v.ok()) return v;
      n.map.emplace_back(key, std::move(*v));
      if (pos_ < lines_.size() && lines_[pos_].indent > indent) {
        return Err(lines_[pos_], "unexpected indentation (a value was already given on line " +
                                     std::to_string(l.number) + ")");
      }
    }
    if (pos_ < lines_.size() && lines_[pos_].indent > indent) {
      return Err(lines_[pos_], "unexpected indentation");
    }
    return n;
  }

  std::vector<Line> lines_;
  size_t pos_ = 0;
};

}  // namespace

absl::StatusOr<Node> ParseJson(const std::string& text) {
  FlowParser p(text, 1, false);
  return p.ParseDocument();
}

absl::StatusOr<Node> ParseYaml(const std::string& text) {
  std::vector<Line> lines;
  int number = 0;
  for (absl::string_view raw : absl::StrSplit(text, '\n')) {
    ++number;
    std::string s(raw);
    if (!s.empty() && s.back() == '\r') s.pop_back();
    if (number == 1 && s.rfind("\xEF\xBB\xBF", 0) == 0) s = s.substr(3);
    s = StripComment(s);
    size_t ind = s.find_first_not_of(' ');
    if (ind == std::string::npos) continue;
    if (s[ind] == '\t') {
      return absl::InvalidArgumentError(
          absl::StrCat(number, ": tabs are not allowed for indentation"));
    }
    std::string body(absl::StripTrailingAsciiWhitespace(s.substr(ind)));
    if (body.empty()) continue;
    if (ind == 0 && (body == "---" || body == "...")) {
      if (!lines.empty()) {
        return absl::InvalidArgumentError(absl::StrCat(number, ": only one document per file"));
      }
      continue;
    }
    lines.push_back({number, static_cast<int>(ind), body});
  }
  YamlParser p(std::move(lines));
  return p.Parse();
}

}  // namespace argus::batch
