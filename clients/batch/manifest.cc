#include "clients/batch/manifest.h"

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string_view>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/status.h"
#include "clients/batch/doc.h"

namespace argus::batch {
namespace {

// The offset of the first byte that is not part of well-formed UTF-8
// (RFC 3629: no overlong forms, surrogates or code points past U+10FFFF);
// npos when all of `s` is.
size_t Utf8Error(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    int len = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xe ? 3 : (c >> 3) == 0x1e ? 4 : 0;
    if (len == 0 || i + len > s.size()) return i;
    uint32_t cp = len == 1 ? c : c & (0x7f >> len);
    for (int k = 1; k < len; ++k) {
      const auto d = static_cast<unsigned char>(s[i + k]);
      if ((d & 0xc0) != 0x80) return i;
      cp = (cp << 6) | (d & 0x3f);
    }
    static constexpr uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < kMin[len] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return i;
    i += len;
  }
  return std::string_view::npos;
}

using nlohmann::json;

const std::set<std::string> kTargets = {"auto", "sm_90a", "gfx942", "interp"};
const char* const kFields[] = {"name",      "kind",    "family",         "shape",  "dtype",
                               "target",    "targets", "max_candidates", "policy", "options",
                               "constants", "workers", "timeout_s"};

class Checker {
 public:
  explicit Checker(std::string file) : file_(std::move(file)) {}

  absl::Status Err(const Node& at, const std::string& field, const std::string& what) const {
    return absl::InvalidArgumentError(absl::StrCat(file_, ":", at.line, ": ", field, ": ", what));
  }
  absl::StatusOr<std::string> String(const Node& n, const std::string& field) const {
    if (n.type != Node::Type::kScalar)
      return Err(n, field, absl::StrCat("expected a string, got ", n.TypeName()));
    // Names become keys of the state file (JSON): refused here, before
    // anything is submitted, rather than when the state is saved.
    if (size_t bad = Utf8Error(n.scalar); bad != std::string::npos) {
      return Err(n, field,
                 absl::StrFormat("not valid UTF-8 (byte 0x%02x at offset %d)",
                                 static_cast<unsigned char>(n.scalar[bad]), bad));
    }
    return n.scalar;
  }
  absl::StatusOr<int64_t> Int(const Node& n, const std::string& field, int64_t min) const {
    int64_t v;
    if (n.type != Node::Type::kScalar || n.quoted || !absl::SimpleAtoi(n.scalar, &v)) {
      return Err(n, field,
                 n.type == Node::Type::kScalar
                     ? absl::StrCat("expected an integer, got '", n.scalar, "'")
                     : absl::StrCat("expected an integer, got ", n.TypeName()));
    }
    if (v < min) return Err(n, field, absl::StrCat("must be at least ", min, ", got ", v));
    return v;
  }
  absl::StatusOr<std::vector<std::string>> Strings(const Node& n, const std::string& field) const {
    std::vector<std::string> out;
    if (n.type == Node::Type::kScalar) return std::vector<std::string>{n.scalar};
    if (n.type != Node::Type::kList)
      return Err(n, field, absl::StrCat("expected a list, got ", n.TypeName()));
    for (size_t i = 0; i < n.list.size(); ++i) {
      ASSIGN_OR_RETURN(auto s, String(n.list[i], absl::StrCat(field, "[", i, "]")));
      out.push_back(s);
    }
    return out;
  }
  absl::Status Map(const Node& n, const std::string& field) const {
    if (n.type != Node::Type::kMap)
      return Err(n, field, absl::StrCat("expected a mapping, got ", n.TypeName()));
    return absl::OkStatus();
  }

  // Applies the fields of `n` (a problem or the defaults) to `spec`.
  absl::Status Apply(const Node& n, const std::string& where, v1::JobSpec* spec,
                     std::vector<std::string>* targets, std::vector<int>* target_lines) const {
    RETURN_IF_ERROR(Map(n, where));
    for (const auto& [key, v] : n.map) {
      std::string field = where.empty() ? key : absl::StrCat(where, ".", key);
      bool known = false;
      for (const char* f : kFields) known |= key == f;
      if (!known) {
        return Err(v, field,
                   absl::StrCat("unknown field (known: ", absl::StrJoin(kFields, ", "), ")"));
      }
      if (key == "name") continue;
      if (key == "kind") {
        ASSIGN_OR_RETURN(auto s, String(v, field));
        if (s == "probe") {
          spec->set_kind(v1::JOB_KIND_PROBE);
        } else if (s == "tune") {
          spec->set_kind(v1::JOB_KIND_TUNE);
        } else {
          return Err(v, field, "expected probe or tune, got '" + s + "'");
        }
      } else if (key == "family") {
        ASSIGN_OR_RETURN(auto s, String(v, field));
        spec->mutable_problem()->set_family(s);
      } else if (key == "dtype") {
        ASSIGN_OR_RETURN(auto s, String(v, field));
        spec->mutable_problem()->set_dtype(s);
      } else if (key == "policy") {
        ASSIGN_OR_RETURN(auto s, String(v, field));
        if (s != "builtin" && s != "llm")
          return Err(v, field, "expected builtin or llm, got '" + s + "'");
        spec->set_policy(s);
      } else if (key == "shape" || key == "constants") {
        RETURN_IF_ERROR(Map(v, field));
        auto* m =
            key == "shape" ? spec->mutable_problem()->mutable_shape() : spec->mutable_constants();
        for (const auto& [dim, val] : v.map) {
          ASSIGN_OR_RETURN(int64_t x, Int(val, field + "." + dim, key == "shape" ? 1 : INT64_MIN));
          (*m)[dim] = x;
        }
      } else if (key == "options") {
        RETURN_IF_ERROR(Map(v, field));
        for (const auto& [opt, val] : v.map) {
          ASSIGN_OR_RETURN(auto s, String(val, field + "." + opt));
          (*spec->mutable_problem()->mutable_options())[opt] = s;
        }
      } else if (key == "target" || key == "targets") {
        ASSIGN_OR_RETURN(auto list, Strings(v, field));
        if (list.empty()) return Err(v, field, "needs at least one target");
        targets->clear();
        target_lines->clear();
        for (size_t i = 0; i < list.size(); ++i) {
          if (!kTargets.count(list[i])) {
            return Err(v.type == Node::Type::kList ? v.list[i] : v, field,
                       "unknown target '" + list[i] + "' (auto, sm_90a, gfx942, interp)");
          }
          targets->push_back(list[i]);
        }
      } else if (key == "max_candidates") {
        ASSIGN_OR_RETURN(int64_t x, Int(v, field, 1));
        spec->set_max_candidates(static_cast<int32_t>(std::min<int64_t>(x, 1'000'000)));
      } else if (key == "workers") {
        ASSIGN_OR_RETURN(int64_t x, Int(v, field, 0));
        spec->set_probe_workers(static_cast<int32_t>(std::min<int64_t>(x, 1'000'000)));
      } else if (key == "timeout_s") {
        ASSIGN_OR_RETURN(int64_t x, Int(v, field, 1));
        spec->set_deadline_ms(std::min<int64_t>(x, 365LL * 86400) * 1000);
      }
    }
    return absl::OkStatus();
  }

 private:
  std::string file_;
};

}  // namespace

absl::StatusOr<Manifest> ParseManifest(const std::string& text, const std::string& file) {
  std::string trimmed(absl::StripLeadingAsciiWhitespace(text));
  bool is_json = absl::EndsWith(file, ".json") || (!trimmed.empty() && trimmed[0] == '{');
  auto doc = is_json ? ParseJson(text) : ParseYaml(text);
  if (!doc.ok()) return absl::InvalidArgumentError(absl::StrCat(file, ":", doc.status().message()));
  Checker c(file);
  const Node& root = *doc;
  if (root.type != Node::Type::kMap) {
    return c.Err(root, "manifest",
                 absl::StrCat("expected a mapping with 'problems', got ", root.TypeName()));
  }
  for (const auto& [key, v] : root.map) {
    if (key != "name" && key != "defaults" && key != "problems") {
      return c.Err(v, key, "unknown field (known: name, defaults, problems)");
    }
  }
  Manifest m;
  if (const Node* n = root.Find("name")) {
    ASSIGN_OR_RETURN(m.name, c.String(*n, "name"));
  }
  v1::JobSpec defaults;
  defaults.set_kind(v1::JOB_KIND_TUNE);
  std::vector<std::string> default_targets = {"auto"};
  std::vector<int> lines;
  if (const Node* d = root.Find("defaults")) {
    RETURN_IF_ERROR(c.Apply(*d, "defaults", &defaults, &default_targets, &lines));
    if (d->Find("name"))
      return c.Err(*d->Find("name"), "defaults.name", "a default cannot have a name");
  }
  const Node* problems = root.Find("problems");
  if (!problems) return c.Err(root, "problems", "missing (a list of problems)");
  if (problems->type != Node::Type::kList) {
    return c.Err(*problems, "problems",
                 absl::StrCat("expected a list, got ", problems->TypeName()));
  }
  if (problems->list.empty()) return c.Err(*problems, "problems", "the list is empty");
  std::set<std::string> names;
  for (size_t i = 0; i < problems->list.size(); ++i) {
    const Node& p = problems->list[i];
    std::string where = absl::StrCat("problems[", i, "]");
    RETURN_IF_ERROR(c.Map(p, where));
    const Node* name_node = p.Find("name");
    if (!name_node) return c.Err(p, where + ".name", "missing (every problem needs a unique name)");
    ASSIGN_OR_RETURN(std::string name, c.String(*name_node, where + ".name"));
    if (name.empty() || name.find_first_of(",\"\n@") != std::string::npos) {
      return c.Err(*name_node, where + ".name", "must be non-empty without , \" @ or newlines");
    }
    if (!names.insert(name).second)
      return c.Err(*name_node, where + ".name", "duplicate name '" + name + "'");
    v1::JobSpec spec = defaults;
    std::vector<std::string> targets = default_targets;
    RETURN_IF_ERROR(c.Apply(p, where, &spec, &targets, &lines));
    if (spec.kind() == v1::JOB_KIND_TUNE && spec.problem().family().empty()) {
      return c.Err(p, where + ".family", "missing (a tune problem needs a family, e.g. gemm)");
    }
    if (spec.kind() == v1::JOB_KIND_PROBE) {
      spec.mutable_problem()->set_family("probe");
      targets = {""};
    }
    for (const auto& t : targets) {
      Entry e;
      e.name = name;
      e.target = t;
      e.key = t.empty() ? name : absl::StrCat(name, "@", t);
      e.line = p.line;
      e.spec = spec;
      e.spec.set_target(t);
      m.entries.push_back(std::move(e));
    }
  }
  return m;
}

absl::StatusOr<Manifest> LoadManifest(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::InvalidArgumentError(absl::StrCat("cannot read manifest ", path));
  std::stringstream ss;
  ss << in.rdbuf();
  if (ss.str().size() > (8 << 20))
    return absl::InvalidArgumentError(path + ": manifest larger than 8 MiB");
  return ParseManifest(ss.str(), path);
}

bool Finished(const std::string& s) {
  return s == "succeeded" || s == "failed" || s == "cancelled" || s == "refused";
}

absl::StatusOr<BatchState> LoadState(const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat("no batch state file ", path));
  json j = json::parse(in, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("entries") || !j["entries"].is_array()) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": not a batch state file"));
  }
  BatchState s;
  s.manifest = j.value("manifest", "");
  s.server = j.value("server", "");
  for (const auto& e : j["entries"]) {
    if (!e.is_object()) continue;
    EntryState es;
    es.key = e.value("key", "");
    es.job_id = e.value("job_id", "");
    es.state = e.value("state", "");
    es.error = e.value("error", "");
    es.best_speedup = e.value("best_speedup", 0.0);
    es.best_candidate = e.value("best_candidate", "");
    es.artifact = e.value("artifact", "");
    es.submitted_unix_ms = e.value("submitted_unix_ms", int64_t{0});
    if (!es.key.empty()) s.entries[es.key] = es;
  }
  return s;
}

absl::Status SaveState(const std::string& path, const BatchState& s) {
  json entries = json::array();
  for (const auto& [key, e] : s.entries) {
    entries.push_back({{"key", key},
                       {"job_id", e.job_id},
                       {"state", e.state},
                       {"error", e.error},
                       {"best_speedup", e.best_speedup},
                       {"best_candidate", e.best_candidate},
                       {"artifact", e.artifact},
                       {"submitted_unix_ms", e.submitted_unix_ms}});
  }
  json j = {{"version", 1}, {"manifest", s.manifest}, {"server", s.server}, {"entries", entries}};
  std::string tmp = absl::StrCat(path, ".tmp.", getpid());
  {
    std::ofstream out(tmp, std::ios::trunc);
    // Strings from the server (errors) may hold any bytes: replaced, never
    // thrown on, so the state is always saved.
    out << j.dump(2, ' ', false, json::error_handler_t::replace) << "\n";
    out.flush();
    if (!out) return absl::InternalError(absl::StrCat("cannot write ", tmp));
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) return absl::InternalError(absl::StrCat("cannot write ", path, ": ", ec.message()));
  return absl::OkStatus();
}

void UpdateFromJob(const v1::Job& job, EntryState* es) {
  es->state = absl::AsciiStrToLower(v1::JobState_Name(job.state()).substr(10));
  es->error = job.error();
  json r = json::parse(job.result_json(), nullptr, false);
  if (r.is_object() && r.contains("tried") && r["tried"].is_number_integer()) {
    es->tried = r["tried"].get<int>();
  }
  if (r.is_object() && r.contains("best") && r["best"].is_object()) {
    const json& b = r["best"];
    // The planner writes "ratio" (docs/planner.md); "speedup" is the older name.
    for (const char* key : {"speedup", "ratio"}) {
      if (b.contains(key) && b[key].is_number()) es->best_speedup = b[key].get<double>();
    }
    if (b.contains("candidate_id") && b["candidate_id"].is_string())
      es->best_candidate = b["candidate_id"];
    if (b.contains("artifact") && b["artifact"].is_string()) es->artifact = b["artifact"];
  }
}

std::string ShapeText(const v1::Problem& p) {
  std::vector<std::string> parts;
  for (const char* d : {"M", "N", "K"}) {
    if (auto it = p.shape().find(d); it != p.shape().end())
      parts.push_back(absl::StrCat(d, "=", it->second));
  }
  std::map<std::string, int64_t> rest(p.shape().begin(), p.shape().end());
  for (const auto& [k, v] : rest) {
    if (k != "M" && k != "N" && k != "K") parts.push_back(absl::StrCat(k, "=", v));
  }
  return absl::StrJoin(parts, " ");
}

namespace {
const EntryState& StateOf(const BatchState& s, const std::string& key) {
  static const EntryState kNone{};
  auto it = s.entries.find(key);
  return it == s.entries.end() ? kNone : it->second;
}

std::string Csv(const std::string& v) {
  if (v.find_first_of(",\"\n") == std::string::npos) return v;
  std::string out = "\"";
  for (char c : v) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}
}  // namespace

std::string ResultsCsv(const Manifest& m, const BatchState& s) {
  std::string out =
      "name,target,kind,family,shape,dtype,job_id,state,best_speedup,best_candidate,artifact,"
      "error\n";
  for (const auto& e : m.entries) {
    const EntryState& es = StateOf(s, e.key);
    std::string kind = absl::AsciiStrToLower(v1::JobKind_Name(e.spec.kind()).substr(9));
    std::vector<std::string> row = {e.name,
                                    e.target,
                                    kind,
                                    e.spec.problem().family(),
                                    ShapeText(e.spec.problem()),
                                    e.spec.problem().dtype(),
                                    es.job_id,
                                    es.state.empty() ? "pending" : es.state,
                                    es.best_speedup > 0 ? absl::StrCat(es.best_speedup) : "",
                                    es.best_candidate,
                                    es.artifact,
                                    es.error};
    for (size_t i = 0; i < row.size(); ++i) absl::StrAppend(&out, i ? "," : "", Csv(row[i]));
    out += "\n";
  }
  return out;
}

json ResultsJson(const Manifest& m, const BatchState& s) {
  json rows = json::array();
  for (const auto& e : m.entries) {
    const EntryState& es = StateOf(s, e.key);
    json shape = json::object();
    for (const auto& [k, v] : e.spec.problem().shape()) shape[k] = v;
    rows.push_back({{"name", e.name},
                    {"target", e.target},
                    {"kind", absl::AsciiStrToLower(v1::JobKind_Name(e.spec.kind()).substr(9))},
                    {"family", e.spec.problem().family()},
                    {"shape", shape},
                    {"dtype", e.spec.problem().dtype()},
                    {"job_id", es.job_id},
                    {"state", es.state.empty() ? "pending" : es.state},
                    {"best_speedup", es.best_speedup > 0 ? json(es.best_speedup) : json()},
                    {"best_candidate", es.best_candidate},
                    {"artifact", es.artifact},
                    {"error", es.error}});
  }
  return {{"manifest", m.name}, {"results", rows}};
}

json DispatchTable(const Manifest& m, const BatchState& s) {
  json entries = json::array();
  for (const auto& e : m.entries) {
    const EntryState& es = StateOf(s, e.key);
    if (es.state != "succeeded" || e.spec.kind() != v1::JOB_KIND_TUNE || es.best_candidate.empty())
      continue;
    json shape = json::object();
    for (const auto& [k, v] : e.spec.problem().shape()) shape[k] = v;
    entries.push_back({{"family", e.spec.problem().family()},
                       {"shape", shape},
                       {"dtype", e.spec.problem().dtype()},
                       {"target", e.target},
                       {"kernel", es.best_candidate},
                       {"artifact", es.artifact},
                       {"speedup", es.best_speedup},
                       {"job_id", es.job_id}});
  }
  return {{"version", 1}, {"manifest", m.name}, {"entries", entries}};
}

}  // namespace argus::batch
