#include "planner/policy.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace argus::planner {
namespace {

const Step* FindStep(const std::vector<Step>& t, const std::string& candidate_id) {
  for (const auto& s : t) {
    if (s.candidate_id == candidate_id) return &s;
  }
  return nullptr;
}

// The knob a child changed relative to its parent (empty if none or several).
std::string ChangedKnob(const Config& parent, const Config& child) {
  std::string knob;
  for (const auto& [k, v] : child.knobs) {
    auto it = parent.knobs.find(k);
    if (it == parent.knobs.end() || it->second != v) {
      if (!knob.empty()) return "";
      knob = k;
    }
  }
  return knob;
}

// The value `steps` positions from `v` among `knob`'s values, if any.
std::optional<int64_t> StepValue(const kb::Knob& knob, int64_t v, int steps) {
  auto it = std::find(knob.values.begin(), knob.values.end(), v);
  if (it == knob.values.end()) return std::nullopt;
  int64_t i = (it - knob.values.begin()) + steps;
  if (i < 0 || i >= static_cast<int64_t>(knob.values.size())) return std::nullopt;
  return knob.values[i];
}

}  // namespace

BuiltinPolicy::BuiltinPolicy(const kb::Kb* kb, Problem problem,
                             std::vector<const kb::Template*> templates, std::vector<Config> warm)
    : kb_(kb),
      problem_(std::move(problem)),
      templates_(std::move(templates)),
      warm_(std::move(warm)) {}

bool BuiltinPolicy::Valid(const Config& c) const {
  for (const auto* t : templates_) {
    if (t->id == c.template_id) return Instantiate(*t, c, problem_).ok();
  }
  return false;
}

std::optional<Proposal> BuiltinPolicy::Repair(const std::vector<Step>& t,
                                              const std::set<std::string>& tried) {
  const Step& last = t.back();
  if (last.outcome == "ok" || last.technique.empty() || last.parent_id.empty()) return std::nullopt;
  const Step* parent = FindStep(t, last.parent_id);
  const kb::Technique* tech = kb_->FindTechnique(last.technique);
  if (!parent || !tech) return std::nullopt;
  std::string knob = ChangedKnob(parent->config, last.config);
  const kb::Template* tmpl = kb_->FindTemplate(last.config.template_id);
  if (knob.empty() || !tmpl || !tmpl->FindKnob(knob)) return std::nullopt;
  // The counterexample's signal selects the repair; unmatched failures revert.
  std::string repair = "revert", signal;
  std::string msg = absl::AsciiStrToLower(absl::StrCat(last.outcome, " ", last.message));
  for (const auto& r : tech->counterexamples) {
    if (absl::StrContains(msg, absl::AsciiStrToLower(r.signal))) {
      repair = r.repair;
      signal = r.signal;
      break;
    }
  }
  const kb::Knob* k = tmpl->FindKnob(knob);
  int64_t bad = last.config.knobs.at(knob), good = parent->config.knobs.at(knob);
  std::vector<Config> options;
  if (repair == "shrink" || repair == "grow") {
    int dir = repair == "shrink" ? -1 : 1;
    for (int s = 1; s < static_cast<int>(k->values.size()); ++s) {
      auto v = StepValue(*k, bad, dir * s);
      if (!v || *v == good) continue;
      Config c = last.config;
      c.knobs[knob] = *v;
      options.push_back(c);
    }
  }
  // revert (or nothing left to shrink/grow): back to the parent, move another knob.
  for (const auto& other : tech->knobs) {
    const kb::Knob* ok = tmpl->FindKnob(other);
    if (!ok || other == knob) continue;
    for (int dir : {1, -1}) {
      auto v = StepValue(*ok, parent->config.knobs.at(other), dir);
      if (!v) continue;
      Config c = parent->config;
      c.knobs[other] = *v;
      options.push_back(c);
    }
  }
  for (const auto& c : options) {
    if (tried.count(c.Key()) || !Valid(c)) continue;
    return Proposal{c, "repair", last.technique, parent->candidate_id,
                    absl::StrCat(repair, " after '", last.outcome, "' of ", knob, "=", bad,
                                 signal.empty() ? "" : absl::StrCat(" (signal '", signal, "')"))};
  }
  return std::nullopt;
}

std::optional<Proposal> BuiltinPolicy::Pull(const std::string& technique,
                                            const std::vector<Step>& t,
                                            const std::set<std::string>& tried) {
  const kb::Technique* tech = kb_->FindTechnique(technique);
  std::vector<const Step*> ok;
  for (const auto& s : t) {
    if (s.outcome == "ok") ok.push_back(&s);
  }
  // Successive halving: the top half (by ratio) of the measured configs are
  // the first parents; the lower half is only tried once the top is exhausted.
  std::stable_sort(ok.begin(), ok.end(),
                   [](const Step* a, const Step* b) { return a->ratio > b->ratio; });
  for (const Step* parent : ok) {
    const kb::Template* tmpl = kb_->FindTemplate(parent->config.template_id);
    if (!tmpl) continue;
    for (const auto& name : tech->knobs) {
      const kb::Knob* k = tmpl->FindKnob(name);
      if (!k) continue;
      for (int dir : {1, -1}) {
        auto v = StepValue(*k, parent->config.knobs.at(name), dir);
        if (!v) continue;
        Config c = parent->config;
        c.knobs[name] = *v;
        if (tried.count(c.Key()) || !Valid(c)) continue;
        return Proposal{
            c, "knob", technique, parent->candidate_id,
            absl::StrCat(technique, ": ", name, " ", parent->config.knobs.at(name), " -> ", *v,
                         " from a top-half parent (ratio ", parent->ratio, ")")};
      }
    }
  }
  return std::nullopt;
}

std::optional<Proposal> BuiltinPolicy::Next(const std::vector<Step>& t) {
  std::set<std::string> tried;
  for (const auto& s : t) tried.insert(s.config.Key());
  if (!t.empty()) {
    if (auto r = Repair(t, tried)) return r;
  }
  for (const auto& c : warm_) {
    if (!tried.count(c.Key()) && Valid(c)) {
      return Proposal{c, "retrieved", "", "", "best config of a similar past job"};
    }
  }
  for (const auto* tmpl : templates_) {
    Config c = DefaultConfig(*tmpl, problem_);
    if (!tried.count(c.Key()) && Valid(c)) {
      return Proposal{c, "new_kernel", "", "",
                      absl::StrCat("template ", tmpl->id, ": ", tmpl->summary)};
    }
  }
  // UCB1 over the techniques whose knobs some template has.
  std::map<std::string, std::pair<int, double>> arms;  // pulls, summed reward
  for (const auto* tmpl : templates_) {
    for (const auto& id : tmpl->techniques) {
      const kb::Technique* tech = kb_->FindTechnique(id);
      for (const auto& k : tech->knobs) {
        if (tmpl->FindKnob(k)) arms.emplace(id, std::make_pair(0, 0.0));
      }
    }
  }
  int total = 0;
  for (const auto& s : t) {
    auto it = arms.find(s.technique);
    if (it == arms.end() || (s.action != "knob" && s.action != "repair")) continue;
    const Step* parent = FindStep(t, s.parent_id);
    double r = 0;
    if (s.outcome == "ok" && parent && parent->ratio > 0)
      r = std::min(2.0, s.ratio / parent->ratio);
    it->second.first++;
    it->second.second += r;
    ++total;
  }
  std::vector<std::pair<double, std::string>> order;
  for (const auto& [id, arm] : arms) {
    double score = arm.first == 0 ? 1e9
                                  : arm.second / arm.first +
                                        std::sqrt(2.0 * std::log(std::max(1, total)) / arm.first);
    order.push_back({-score, id});
  }
  std::sort(order.begin(), order.end());
  for (const auto& [neg, id] : order) {
    if (auto p = Pull(id, t, tried)) {
      p->why =
          absl::StrCat(p->why, "; UCB ", neg < -1e8 ? std::string("unpulled") : absl::StrCat(-neg));
      return p;
    }
  }
  return std::nullopt;
}

}  // namespace argus::planner
