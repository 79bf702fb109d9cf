// tests/layers/layers.h: the part layering of the source tree, checked.
//
// The dependency table lives in docs/architecture.md, between the lines
// "<!-- layers:begin -->" and "<!-- layers:end -->": one Markdown row per
// part, whose first cell names the part's folder (`store/`) and whose last
// cell lists the parts its files may include (`base`, `proto`; `*` for any
// part, "—" for none). ReadLayerTable() parses it; CheckIncludes() reads every
// `#include "..."` of every .cc and .h file under each part's folder, maps the
// included path to the part that holds it, and reports each include that the
// table does not allow, and each top-level folder holding C++ files that the
// table does not name.
//
// An included path belongs to the part named by its first component; a header
// generated from proto/ (first component a folder of proto/, such as
// argus/v1/jobs.pb.h) belongs to proto; a path without a folder is a sibling
// of the including file; anything else (absl/, llvm/, ...) is outside the tree
// and not checked. A part may always include itself.
//
// Thread safety: free functions with no shared state.
#ifndef ARGUS_TESTS_LAYERS_LAYERS_H_
#define ARGUS_TESTS_LAYERS_LAYERS_H_

#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace argus::layers {

struct Part {
  bool any = false;                   // `*`: may include every part
  std::set<std::string> may_include;  // other parts it may include
};

struct LayerTable {
  std::map<std::string, Part> parts;  // by folder name, without the slash
};

// One include the table does not allow, or one folder it does not name.
struct Violation {
  std::string file;  // relative to the source root
  int line = 0;      // 0 for a folder
  std::string message;

  std::string ToString() const;  // "file:line: message"
};

// Parses the table in `markdown` (the text of docs/architecture.md). Fails
// when the markers or rows are missing, or a row names a part that has no row.
absl::StatusOr<LayerTable> ParseLayerTable(const std::string& markdown);

// Reads and parses `path`.
absl::StatusOr<LayerTable> ReadLayerTable(const std::string& path);

// Checks every part folder under `root`. Build trees (folders holding
// CMakeCache.txt) and hidden folders are skipped.
std::vector<Violation> CheckIncludes(const std::string& root, const LayerTable& table);

}  // namespace argus::layers

#endif  // ARGUS_TESTS_LAYERS_LAYERS_H_
