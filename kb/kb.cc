#include "kb/kb.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "base/data_dir.h"
#include "base/status.h"
#include "kb/expr.h"
#include "nlohmann/json.hpp"

namespace argus::kb {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const std::set<std::string> kDtypes = {"f32", "f16", "bf16", "e4m3", "e5m2"};
const std::set<std::string> kTargets = {"interp", "sm_90a", "gfx942"};
const std::set<std::string> kRepairs = {"shrink", "grow", "revert"};

absl::StatusOr<std::string> ReadText(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read ", p.string()));
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Field accessors that name the file and field in their errors.
class Fields {
 public:
  Fields(const json& j, std::string where) : j_(j), where_(std::move(where)) {}
  absl::Status Bad(const std::string& key, const std::string& what) const {
    return absl::InvalidArgumentError(absl::StrCat(where_, ": field '", key, "' ", what));
  }
  absl::StatusOr<std::string> Str(const std::string& key, bool required = true) const {
    if (!j_.contains(key)) {
      if (required) return Bad(key, "is required");
      return std::string();
    }
    if (!j_[key].is_string()) return Bad(key, "must be a string");
    if (required && j_[key].get<std::string>().empty()) return Bad(key, "must not be empty");
    return j_[key].get<std::string>();
  }
  absl::StatusOr<std::vector<std::string>> StrList(const std::string& key) const {
    std::vector<std::string> out;
    if (!j_.contains(key)) return Bad(key, "is required (a list of strings)");
    if (!j_[key].is_array()) return Bad(key, "must be a list of strings");
    for (const auto& e : j_[key]) {
      if (!e.is_string()) return Bad(key, "must be a list of strings");
      out.push_back(e.get<std::string>());
    }
    return out;
  }
  absl::StatusOr<std::map<std::string, std::string>> StrMap(const std::string& key) const {
    std::map<std::string, std::string> out;
    if (!j_.contains(key)) return out;
    if (!j_[key].is_object()) return Bad(key, "must be an object of strings");
    for (const auto& [k, v] : j_[key].items()) {
      if (!v.is_string()) return Bad(key, absl::StrCat("entry '", k, "' must be a string"));
      out[k] = v.get<std::string>();
    }
    return out;
  }
  const json& raw() const { return j_; }
  const std::string& where() const { return where_; }

 private:
  const json& j_;
  std::string where_;
};

absl::Status CheckKeys(const Fields& f, const std::set<std::string>& allowed) {
  for (const auto& [k, v] : f.raw().items()) {
    if (!allowed.count(k)) return f.Bad(k, "is not part of the schema (see docs/kb.md)");
  }
  return absl::OkStatus();
}

absl::StatusOr<json> ReadJson(const fs::path& p) {
  ASSIGN_OR_RETURN(std::string text, ReadText(p));
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded()) return absl::InvalidArgumentError(absl::StrCat(p.string(), ": not JSON"));
  if (!j.is_object())
    return absl::InvalidArgumentError(absl::StrCat(p.string(), ": not an object"));
  return j;
}

absl::StatusOr<Technique> ParseTechnique(const fs::path& p) {
  ASSIGN_OR_RETURN(json j, ReadJson(p));
  Fields f(j, p.filename().string());
  RETURN_IF_ERROR(CheckKeys(f, {"id", "title", "what", "changes", "applies_to", "knobs",
                                "invariants", "pitfalls", "counterexamples"}));
  Technique t;
  ASSIGN_OR_RETURN(t.id, f.Str("id"));
  ASSIGN_OR_RETURN(t.title, f.Str("title"));
  ASSIGN_OR_RETURN(t.what, f.Str("what"));
  ASSIGN_OR_RETURN(t.changes, f.Str("changes"));
  ASSIGN_OR_RETURN(t.applies_to, f.StrList("applies_to"));
  ASSIGN_OR_RETURN(t.knobs, f.StrList("knobs"));
  ASSIGN_OR_RETURN(t.invariants, f.StrList("invariants"));
  ASSIGN_OR_RETURN(t.pitfalls, f.StrList("pitfalls"));
  if (t.applies_to.empty()) return f.Bad("applies_to", "must name at least one family");
  if (!j.contains("counterexamples") || !j["counterexamples"].is_array()) {
    return f.Bad("counterexamples", "must be a list of {signal, means, repair}");
  }
  for (const auto& c : j["counterexamples"]) {
    if (!c.is_object()) return f.Bad("counterexamples", "entries must be objects");
    Fields cf(c, absl::StrCat(f.where(), " counterexamples"));
    RETURN_IF_ERROR(CheckKeys(cf, {"signal", "means", "repair"}));
    Repair r;
    ASSIGN_OR_RETURN(r.signal, cf.Str("signal"));
    ASSIGN_OR_RETURN(r.means, cf.Str("means"));
    ASSIGN_OR_RETURN(r.repair, cf.Str("repair"));
    if (!kRepairs.count(r.repair)) return cf.Bad("repair", "must be shrink, grow or revert");
    t.counterexamples.push_back(std::move(r));
  }
  if (p.stem().string() != t.id) {
    return f.Bad("id", absl::StrCat("'", t.id, "' must match the file name"));
  }
  return t;
}

absl::Status CheckExpr(const Fields& f, const std::string& key, const std::string& e) {
  auto names = ExprNames(e);
  if (!names.ok()) return f.Bad(key, std::string(names.status().message()));
  return absl::OkStatus();
}

absl::StatusOr<Template> ParseTemplate(const fs::path& p) {
  ASSIGN_OR_RETURN(json j, ReadJson(p));
  Fields f(j, p.filename().string());
  RETURN_IF_ERROR(
      CheckKeys(f, {"id", "family", "kernel", "source", "summary", "baseline", "dtypes", "targets",
                    "techniques", "knobs", "dims", "shape_constants", "option_constants",
                    "requires", "invariants", "pipeline", "shapes", "presets"}));
  Template t;
  ASSIGN_OR_RETURN(t.id, f.Str("id"));
  ASSIGN_OR_RETURN(t.family, f.Str("family"));
  ASSIGN_OR_RETURN(t.kernel, f.Str("kernel"));
  ASSIGN_OR_RETURN(t.source_file, f.Str("source"));
  ASSIGN_OR_RETURN(t.summary, f.Str("summary"));
  if (!j.contains("baseline") || !j["baseline"].is_boolean()) {
    return f.Bad("baseline", "must be true or false");
  }
  t.baseline = j["baseline"].get<bool>();
  ASSIGN_OR_RETURN(t.dtypes, f.StrList("dtypes"));
  ASSIGN_OR_RETURN(t.targets, f.StrList("targets"));
  ASSIGN_OR_RETURN(t.techniques, f.StrList("techniques"));
  ASSIGN_OR_RETURN(t.requirements, f.StrList("requires"));
  ASSIGN_OR_RETURN(t.invariants, f.StrList("invariants"));
  ASSIGN_OR_RETURN(t.dims, f.StrMap("dims"));
  ASSIGN_OR_RETURN(t.shape_constants, f.StrMap("shape_constants"));
  ASSIGN_OR_RETURN(t.option_constants, f.StrMap("option_constants"));
  if (p.stem().string() != t.id) {
    return f.Bad("id", absl::StrCat("'", t.id, "' must match the file name"));
  }
  for (const auto& d : t.dtypes) {
    if (!kDtypes.count(d)) return f.Bad("dtypes", absl::StrCat("has unknown dtype '", d, "'"));
  }
  for (const auto& d : t.targets) {
    if (!kTargets.count(d)) return f.Bad("targets", absl::StrCat("has unknown target '", d, "'"));
  }
  if (t.dtypes.empty() || t.targets.empty())
    return f.Bad("dtypes", "and targets must not be empty");
  if (t.dims.empty()) return f.Bad("dims", "must map every kernel dim to a shape expression");
  for (const auto& [k, e] : t.dims) RETURN_IF_ERROR(CheckExpr(f, "dims", e));
  for (const auto& [k, e] : t.shape_constants) RETURN_IF_ERROR(CheckExpr(f, "shape_constants", e));
  for (const auto& e : t.requirements) RETURN_IF_ERROR(CheckExpr(f, "requires", e));
  if (!j.contains("knobs") || !j["knobs"].is_object()) {
    return f.Bad("knobs", "must be an object NAME -> {values, default}");
  }
  for (const auto& [name, k] : j["knobs"].items()) {
    std::string where = absl::StrCat("knob ", name);
    if (!k.is_object() || !k.contains("values") || !k["values"].is_array() ||
        !k.contains("default") || !k["default"].is_number_integer() || k.size() != 2) {
      return f.Bad("knobs", absl::StrCat(where, " must be {\"values\": [ints], \"default\": int}"));
    }
    Knob knob;
    knob.name = name;
    for (const auto& v : k["values"]) {
      if (!v.is_number_integer())
        return f.Bad("knobs", absl::StrCat(where, ": values must be ints"));
      knob.values.push_back(v.get<int64_t>());
    }
    if (knob.values.empty() || !std::is_sorted(knob.values.begin(), knob.values.end()) ||
        std::adjacent_find(knob.values.begin(), knob.values.end()) != knob.values.end()) {
      return f.Bad("knobs", absl::StrCat(where, ": values must be ascending and distinct"));
    }
    knob.default_value = k["default"].get<int64_t>();
    if (!knob.Allows(knob.default_value)) {
      return f.Bad("knobs", absl::StrCat(where, ": default ", knob.default_value,
                                         " is not among its values"));
    }
    t.knobs.push_back(std::move(knob));
  }
  ASSIGN_OR_RETURN(t.source, ReadText(p.parent_path() / t.source_file));
  if (!absl::StrContains(t.source, absl::StrCat("def ", t.kernel, "("))) {
    return f.Bad("kernel", absl::StrCat("'", t.kernel, "' is not defined in ", t.source_file));
  }
  if (j.contains("pipeline")) {
    ASSIGN_OR_RETURN(t.pipeline, f.StrList("pipeline"));
    if (t.pipeline.empty() || t.pipeline.back() != t.kernel)
      return f.Bad("pipeline", absl::StrCat("must end with the kernel '", t.kernel, "'"));
    for (const std::string& k : t.pipeline) {
      if (!absl::StrContains(t.source, absl::StrCat("def ", k, "(")))
        return f.Bad("pipeline", absl::StrCat("'", k, "' is not defined in ", t.source_file));
    }
  }
  if (j.contains("shapes")) {
    if (!j["shapes"].is_object()) return f.Bad("shapes", "must be an object NAME -> [exprs]");
    for (const auto& [name, dims] : j["shapes"].items()) {
      if (!dims.is_array() || dims.empty())
        return f.Bad("shapes", absl::StrCat("entry '", name, "' must be a list of expressions"));
      for (const auto& e : dims) {
        if (!e.is_string())
          return f.Bad("shapes", absl::StrCat("entry '", name, "' must be a list of expressions"));
        RETURN_IF_ERROR(CheckExpr(f, "shapes", e.get<std::string>()));
        t.shapes[name].push_back(e.get<std::string>());
      }
    }
    if (t.pipeline.empty()) return f.Bad("shapes", "is for pipelines only");
  }
  if (j.contains("presets")) {
    if (!j["presets"].is_array())
      return f.Bad("presets", "must be a list of {\"when\": expr, \"knobs\": {NAME: int}}");
    for (size_t i = 0; i < j["presets"].size(); ++i) {
      const json& e = j["presets"][i];
      std::string where = absl::StrCat("entry ", i);
      if (!e.is_object() || e.size() != 2 || !e.contains("when") || !e["when"].is_string() ||
          !e.contains("knobs") || !e["knobs"].is_object() || e["knobs"].empty()) {
        return f.Bad("presets",
                     absl::StrCat(where, " must be {\"when\": expr, \"knobs\": {NAME: int}}"));
      }
      Preset preset;
      preset.when = e["when"].get<std::string>();
      RETURN_IF_ERROR(CheckExpr(f, "presets", preset.when));
      for (const auto& [name, v] : e["knobs"].items()) {
        const Knob* knob = t.FindKnob(name);
        if (!knob) return f.Bad("presets", absl::StrCat(where, ": no knob ", name));
        if (!v.is_number_integer() || !knob->Allows(v.get<int64_t>())) {
          return f.Bad("presets", absl::StrCat(where, ": ", name, " must be one of its values"));
        }
        preset.knobs[name] = v.get<int64_t>();
      }
      t.presets.push_back(std::move(preset));
    }
  }
  for (const Knob& k : t.knobs) {
    if (!absl::StrContains(t.source, absl::StrCat(k.name, ": const"))) {
      return f.Bad("knobs", absl::StrCat(k.name, " is not a const parameter of ", t.kernel));
    }
  }
  return t;
}

template <typename T>
absl::StatusOr<std::vector<T>> LoadAll(const fs::path& dir,
                                       absl::StatusOr<T> (*parse)(const fs::path&)) {
  std::vector<fs::path> files;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (e.path().extension() == ".json") files.push_back(e.path());
  }
  if (ec)
    return absl::NotFoundError(absl::StrCat("cannot list ", dir.string(), ": ", ec.message()));
  std::sort(files.begin(), files.end());
  std::vector<T> out;
  for (const auto& p : files) {
    ASSIGN_OR_RETURN(T t, parse(p));
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace

bool Knob::Allows(int64_t v) const {
  return std::find(values.begin(), values.end(), v) != values.end();
}

bool Template::Supports(const std::string& dtype, const std::string& target) const {
  return std::find(dtypes.begin(), dtypes.end(), dtype) != dtypes.end() &&
         std::find(targets.begin(), targets.end(), target) != targets.end();
}

const Knob* Template::FindKnob(const std::string& name) const {
  for (const Knob& k : knobs) {
    if (k.name == name) return &k;
  }
  return nullptr;
}

absl::StatusOr<Kb> Kb::Load(const std::string& dir) {
  Kb kb;
  ASSIGN_OR_RETURN(kb.techniques_,
                   LoadAll<Technique>(fs::path(dir) / "techniques", ParseTechnique));
  ASSIGN_OR_RETURN(kb.templates_, LoadAll<Template>(fs::path(dir) / "templates", ParseTemplate));
  std::set<std::string> ids;
  for (const auto& t : kb.techniques_) {
    if (!ids.insert(t.id).second) return absl::InvalidArgumentError("duplicate technique " + t.id);
  }
  std::set<std::string> families_with_baseline;
  for (const auto& t : kb.templates_) {
    for (const auto& tech : t.techniques) {
      if (!kb.FindTechnique(tech)) {
        return absl::InvalidArgumentError(
            absl::StrCat(t.id, ".json: technique '", tech, "' has no techniques/", tech, ".json"));
      }
    }
    if (t.baseline) {
      if (!families_with_baseline.insert(t.family).second) {
        return absl::InvalidArgumentError(
            absl::StrCat(t.id, ".json: family ", t.family, " already has a baseline template"));
      }
    }
  }
  for (const auto& t : kb.templates_) {
    if (!families_with_baseline.count(t.family)) {
      return absl::InvalidArgumentError(
          absl::StrCat("family ", t.family, " has no template with \"baseline\": true"));
    }
  }
  return kb;
}

const Technique* Kb::FindTechnique(const std::string& id) const {
  for (const auto& t : techniques_) {
    if (t.id == id) return &t;
  }
  return nullptr;
}

const Template* Kb::FindTemplate(const std::string& id) const {
  for (const auto& t : templates_) {
    if (t.id == id) return &t;
  }
  return nullptr;
}

std::vector<const Template*> Kb::ForFamily(const std::string& family) const {
  std::vector<const Template*> out;
  for (const auto& t : templates_) {
    if (t.family == family) out.push_back(&t);
  }
  return out;
}

std::vector<const Technique*> Kb::TechniquesFor(const std::string& family) const {
  std::vector<const Technique*> out;
  for (const auto& t : techniques_) {
    if (std::find(t.applies_to.begin(), t.applies_to.end(), family) != t.applies_to.end()) {
      out.push_back(&t);
    }
  }
  return out;
}

std::string DefaultKbDir() {
  if (const char* d = std::getenv("ARGUS_KB_DIR"); d && *d) return d;
  return DataDir() + "/kb";
}

}  // namespace argus::kb
