// kb/kb.h: the knowledge base — technique entries and DSL kernel templates,
// loaded from data files.
//
// Layout of a KB directory (docs/kb.md is the schema):
//   techniques/ID.json   one technique: what it is, when it applies, the knobs
//                        it moves, the invariants it needs, its pitfalls and the
//                        counterexample signals with the repair each selects;
//   templates/ID.json    one kernel template: family, kernel name, source file
//                        (templates/*.py, with ${NAME} placeholders the problem
//                        fills), dtypes, targets, techniques, knobs with their
//                        valid values, launch dims, requirements, invariants.
// Load() validates every entry (types, required fields, references between
// entries, knob defaults among their values, expressions that parse, sources
// that name their kernel); adding an entry needs no C++.
//
// Thread safety: a loaded Kb is immutable and may be shared.
#ifndef ARGUS_KB_KB_H_
#define ARGUS_KB_KB_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace argus::kb {

struct Repair {
  std::string signal;  // a substring of a diagnostic or outcome that selects this repair
  std::string means;
  std::string repair;  // shrink | grow | revert
};

struct Technique {
  std::string id, title, what, changes;
  std::vector<std::string> applies_to;  // problem families
  std::vector<std::string> knobs;       // constants it moves
  std::vector<std::string> invariants, pitfalls;
  std::vector<Repair> counterexamples;
};

struct Knob {
  std::string name;
  std::vector<int64_t> values;  // ascending, distinct
  int64_t default_value = 0;
  bool Allows(int64_t v) const;  // one of `values`
};

// Knob values that replace the defaults for the problems where `when` (an
// expression over the problem's names, kb/expr.h) holds: expert knowledge of
// the best starting point by shape, e.g. three consumer warp groups at D=64.
struct Preset {
  std::string when;
  std::map<std::string, int64_t> knobs;
};

struct Template {
  std::string id, family, kernel, source_file, source, summary;
  bool baseline = false;  // the family's reference-speed template
  std::vector<std::string> dtypes, targets, techniques, requirements, invariants;
  std::vector<Knob> knobs;
  std::map<std::string, std::string> dims;              // kernel dim -> shape expression
  std::map<std::string, std::string> shape_constants;   // const -> shape expression
  std::map<std::string, std::string> option_constants;  // const -> option name
  // A pipeline of launches (kernels of the source, in order; `kernel` is the
  // last) over one set of tensors; `shapes` gives a tensor the problem's shape
  // (expressions per dim) where the kernels see it reshaped.
  std::vector<std::string> pipeline;
  std::map<std::string, std::vector<std::string>> shapes;
  std::vector<Preset> presets;  // the first that holds for a problem gives its defaults
  bool Supports(const std::string& dtype, const std::string& target) const;
  const Knob* FindKnob(const std::string& name) const;
};

class Kb {
 public:
  static absl::StatusOr<Kb> Load(const std::string& dir);

  const std::vector<Technique>& techniques() const { return techniques_; }
  const std::vector<Template>& templates() const { return templates_; }
  const Technique* FindTechnique(const std::string& id) const;
  const Template* FindTemplate(const std::string& id) const;
  std::vector<const Template*> ForFamily(const std::string& family) const;
  std::vector<const Technique*> TechniquesFor(const std::string& family) const;

 private:
  std::vector<Technique> techniques_;
  std::vector<Template> templates_;
};

// $ARGUS_KB_DIR, else kb/ of the data directory (base/data_dir.h).
std::string DefaultKbDir();

}  // namespace argus::kb

#endif  // ARGUS_KB_KB_H_
