#include "verifier/report.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace argus::verifier {

bool Report::verified() const {
  for (const Finding& f : findings) {
    if (f.severity != Severity::kNote) return false;
  }
  return proved == obligations;
}

const char* SeverityName(Severity s) {
  switch (s) {
    case Severity::kViolation:
      return "violation";
    case Severity::kUnknown:
      return "unknown";
    case Severity::kNote:
      return "note";
  }
  return "?";
}

namespace {

std::string Iters(const std::map<std::string, int64_t>& it) {
  std::vector<std::string> parts;
  for (const auto& [k, v] : it) parts.push_back(absl::StrCat(k, "=", v));
  return absl::StrJoin(parts, ", ");
}

std::string Esc(const std::string& s) {
  std::string o;
  for (char c : s) {
    switch (c) {
      case '"':
        o += "\\\"";
        break;
      case '\\':
        o += "\\\\";
        break;
      case '\n':
        o += "\\n";
        break;
      case '\t':
        o += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          o += absl::StrFormat("\\u%04x", c);
        } else {
          o += c;
        }
    }
  }
  return o;
}

std::string Q(const std::string& s) { return absl::StrCat("\"", Esc(s), "\""); }

std::string Ints(const std::vector<int64_t>& v) {
  return absl::StrCat("[", absl::StrJoin(v, ","), "]");
}

}  // namespace

std::string ToText(const Report& r) {
  std::string o;
  for (const Finding& f : r.findings) {
    absl::StrAppend(&o, r.file, ":", f.loc.line, ":", f.loc.col, ": ", SeverityName(f.severity),
                    " [", f.check, "] ", f.message, "\n");
    if (!f.source_line.empty()) absl::StrAppend(&o, "    ", f.source_line, "\n");
    if (!f.has_cex) continue;
    const Counterexample& c = f.cex;
    absl::StrAppend(&o, "  thread ", c.thread, " (block ", absl::StrJoin(c.block, ","), ", warp ",
                    c.warp, ", lane ", c.lane, ")");
    if (c.element >= 0) absl::StrAppend(&o, ", element ", c.element);
    if (!c.coordinates.empty())
      absl::StrAppend(&o, " at (", absl::StrJoin(c.coordinates, ", "), ")");
    if (!c.iterations.empty()) absl::StrAppend(&o, ", iteration ", Iters(c.iterations));
    absl::StrAppend(&o, "\n");
    if (!c.expected.empty() || !c.actual.empty()) {
      absl::StrAppend(&o, "  expected ", c.expected, ", found ", c.actual, "\n");
    }
    if (c.written_at.line > 0) {
      absl::StrAppend(&o, "  written at ", r.file, ":", c.written_at.line, ":", c.written_at.col);
      if (!c.written_iteration.empty()) absl::StrAppend(&o, " in iteration ", c.written_iteration);
      absl::StrAppend(&o, "\n    ", c.written_source, "\n");
    }
    if (!c.other.empty()) absl::StrAppend(&o, "  ", c.other, "\n");
  }
  absl::StrAppend(&o, r.kernel.empty() ? r.file : r.kernel, ": ", r.proved, "/", r.obligations,
                  " obligations proved, ", r.findings.size(), " finding(s), ",
                  absl::StrFormat("%.3f", r.seconds), " s", r.cached ? " (cached)" : "", " -> ",
                  r.verified() ? "verified" : "NOT verified", "\n");
  return o;
}

std::string ToJson(const Report& r) {
  std::string o = absl::StrCat("{\"file\":", Q(r.file), ",\"kernel\":", Q(r.kernel),
                               ",\"verified\":", r.verified() ? "true" : "false",
                               ",\"obligations\":", r.obligations, ",\"proved\":", r.proved,
                               ",\"seconds\":", absl::StrFormat("%.4f", r.seconds),
                               ",\"max_solver_steps\":", r.max_steps,
                               ",\"cached\":", r.cached ? "true" : "false", ",\"findings\":[");
  for (size_t i = 0; i < r.findings.size(); ++i) {
    const Finding& f = r.findings[i];
    if (i) o += ",";
    absl::StrAppend(&o, "{\"severity\":", Q(SeverityName(f.severity)), ",\"check\":", Q(f.check),
                    ",\"message\":", Q(f.message), ",\"line\":", f.loc.line, ",\"col\":", f.loc.col,
                    ",\"source\":", Q(f.source_line));
    if (f.has_cex) {
      const Counterexample& c = f.cex;
      absl::StrAppend(&o, ",\"counterexample\":{\"block\":", Ints(c.block),
                      ",\"thread\":", c.thread, ",\"warp\":", c.warp, ",\"lane\":", c.lane,
                      ",\"element\":", c.element, ",\"coordinates\":", Ints(c.coordinates),
                      ",\"iterations\":{");
      bool first = true;
      for (const auto& [k, v] : c.iterations) {
        absl::StrAppend(&o, first ? "" : ",", Q(k), ":", v);
        first = false;
      }
      absl::StrAppend(&o, "},\"expected\":", Q(c.expected), ",\"actual\":", Q(c.actual),
                      ",\"written_at\":{\"line\":", c.written_at.line,
                      ",\"col\":", c.written_at.col, ",\"source\":", Q(c.written_source),
                      "},\"written_iteration\":", Q(c.written_iteration), ",\"other\":", Q(c.other),
                      "}");
    }
    o += "}";
  }
  o += "]}";
  return o;
}

}  // namespace argus::verifier
