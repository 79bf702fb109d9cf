// clients/batch/doc.h: a located document tree parsed from JSON or a YAML
// subset, so that a bad manifest names the line and field that is wrong.
//
// The YAML subset: block mappings and sequences by indentation (spaces),
// `#` comments, plain, 'single' and "double" quoted scalars, and one-line
// flow collections ([a, b], {M: 1, N: 2}). Anchors, tags, multi-document
// files and block scalars (| >) are refused with a located error. JSON is
// parsed strictly (RFC 8259). Every node remembers its line.
//
// Thread safety: plain values; the parsers are reentrant.
#ifndef ARGUS_CLIENTS_BATCH_DOC_H_
#define ARGUS_CLIENTS_BATCH_DOC_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"

namespace argus::batch {

struct KeyValue;

struct Node {
  enum class Type { kNull, kScalar, kMap, kList };
  Type type = Type::kNull;
  int line = 0;
  std::string scalar;         // kScalar: the text (unquoted)
  bool quoted = false;        // kScalar: was written as a string
  std::vector<KeyValue> map;  // kMap, in file order
  std::vector<Node> list;     // kList

  const Node* Find(const std::string& key) const;
  const char* TypeName() const;
};

struct KeyValue {
  std::string key;
  Node value;
};

// Parses JSON; errors read "LINE:COL: what".
absl::StatusOr<Node> ParseJson(const std::string& text);
// Parses the YAML subset; errors read "LINE: what".
absl::StatusOr<Node> ParseYaml(const std::string& text);

}  // namespace argus::batch

#endif  // ARGUS_CLIENTS_BATCH_DOC_H_
