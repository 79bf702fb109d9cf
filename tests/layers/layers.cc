#include "tests/layers/layers.h"

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace argus::layers {
namespace {

namespace fs = std::filesystem;

constexpr char kBegin[] = "<!-- layers:begin -->";
constexpr char kEnd[] = "<!-- layers:end -->";

// The backquoted words of a table cell: "`base`, `proto`" -> {base, proto}.
std::vector<std::string> Quoted(const std::string& cell) {
  std::vector<std::string> out;
  static const std::regex re("`([^`]+)`");
  for (auto it = std::sregex_iterator(cell.begin(), cell.end(), re); it != std::sregex_iterator();
       ++it) {
    out.push_back(std::string(absl::StripSuffix((*it)[1].str(), "/")));
  }
  return out;
}

bool IsCpp(const fs::path& p) { return p.extension() == ".cc" || p.extension() == ".h"; }

bool Skipped(const fs::path& dir) {
  std::string name = dir.filename().string();
  return name.empty() || name[0] == '.' || fs::exists(dir / "CMakeCache.txt");
}

bool HoldsCpp(const fs::path& dir) {
  for (auto it = fs::recursive_directory_iterator(dir); it != fs::recursive_directory_iterator();
       ++it) {
    if (it->is_directory() && Skipped(it->path())) {
      it.disable_recursion_pending();
    } else if (it->is_regular_file() && IsCpp(it->path())) {
      return true;
    }
  }
  return false;
}

}  // namespace

std::string Violation::ToString() const {
  return line > 0 ? absl::StrCat(file, ":", line, ": ", message)
                  : absl::StrCat(file, ": ", message);
}

absl::StatusOr<LayerTable> ParseLayerTable(const std::string& markdown) {
  size_t begin = markdown.find(kBegin), end = markdown.find(kEnd);
  if (begin == std::string::npos || end == std::string::npos || end < begin) {
    return absl::InvalidArgumentError(
        absl::StrCat("the layer table needs the markers ", kBegin, " and ", kEnd));
  }
  LayerTable table;
  std::string body = markdown.substr(begin, end - begin);
  for (absl::string_view row : absl::StrSplit(body, '\n')) {
    if (!absl::StartsWith(row, "| `")) continue;
    std::vector<std::string> cells = absl::StrSplit(row, '|');
    // "| a | b | c |" splits into "", " a ", " b ", " c ", "".
    if (cells.size() < 4) return absl::InvalidArgumentError(absl::StrCat("bad row: ", row));
    std::vector<std::string> name = Quoted(cells[1]);
    if (name.size() != 1) {
      return absl::InvalidArgumentError(absl::StrCat("a row names one part: ", row));
    }
    Part part;
    for (const std::string& p : Quoted(cells[cells.size() - 2])) {
      if (p == "*") {
        part.any = true;
      } else {
        part.may_include.insert(p);
      }
    }
    if (!table.parts.emplace(name[0], std::move(part)).second) {
      return absl::InvalidArgumentError(absl::StrCat("part ", name[0], " has two rows"));
    }
  }
  if (table.parts.empty()) return absl::InvalidArgumentError("the layer table has no rows");
  for (const auto& [name, part] : table.parts) {
    for (const std::string& p : part.may_include) {
      if (!table.parts.count(p)) {
        return absl::InvalidArgumentError(
            absl::StrCat("part ", name, " may include ", p, ", which has no row"));
      }
    }
  }
  return table;
}

absl::StatusOr<LayerTable> ReadLayerTable(const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read ", path));
  std::stringstream ss;
  ss << in.rdbuf();
  return ParseLayerTable(ss.str());
}

std::vector<Violation> CheckIncludes(const std::string& root_dir, const LayerTable& table) {
  std::vector<Violation> out;
  const fs::path root(root_dir);
  for (const auto& entry : fs::directory_iterator(root)) {
    if (!entry.is_directory() || Skipped(entry.path())) continue;
    std::string name = entry.path().filename().string();
    if (!table.parts.count(name) && HoldsCpp(entry.path())) {
      out.push_back({name + "/", 0, "holds C++ files but is not a part of the layer table"});
    }
  }
  static const std::regex include_re(R"re(^\s*#\s*include\s*"([^"]+)")re");
  for (const auto& [name, part] : table.parts) {
    fs::path dir = root / name;
    if (part.any || !fs::is_directory(dir)) continue;
    std::vector<fs::path> files;
    for (auto it = fs::recursive_directory_iterator(dir); it != fs::recursive_directory_iterator();
         ++it) {
      if (it->is_directory() && Skipped(it->path())) {
        it.disable_recursion_pending();
      } else if (it->is_regular_file() && IsCpp(it->path())) {
        files.push_back(it->path());
      }
    }
    std::sort(files.begin(), files.end());
    for (const fs::path& file : files) {
      std::ifstream in(file);
      std::string text;
      for (int line = 1; std::getline(in, text); ++line) {
        std::smatch m;
        if (!std::regex_search(text, m, include_re)) continue;
        std::string included = m[1].str();
        size_t slash = included.find('/');
        if (slash == std::string::npos) continue;  // a sibling header
        std::string first = included.substr(0, slash);
        std::string to;
        if (table.parts.count(first)) {
          to = first;
        } else if (fs::is_directory(root / "proto" / first)) {
          to = "proto";  // generated from proto/
        } else {
          continue;  // outside the tree
        }
        if (to == name || part.may_include.count(to)) continue;
        out.push_back(
            {fs::relative(file, root).string(), line,
             absl::StrCat(name, " may not include ", to, " (#include \"", included, "\"); ", name,
                          " may include: ",
                          part.may_include.empty() ? std::string("no other part")
                                                   : absl::StrJoin(part.may_include, ", "))});
      }
    }
  }
  return out;
}

}  // namespace argus::layers
