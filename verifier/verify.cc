#include "verifier/verify.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status.h"
#include "verifier/analysis/barrier_divergence.h"
#include "verifier/analysis/bounds.h"
#include "verifier/analysis/epilogue.h"
#include "verifier/analysis/fragment_layout.h"
#include "verifier/analysis/fragment_tags.h"
#include "verifier/analysis/mbarrier_phases.h"
#include "verifier/analysis/named_barriers.h"
#include "verifier/analysis/races.h"
#include "verifier/analysis/shared_reads.h"
#include "verifier/analysis/tag_asserts.h"
#include "verifier/analysis/tag_flow.h"
#include "verifier/analysis/tma_reads.h"
#include "verifier/analysis/wgmma.h"
#include "verifier/walker.h"

namespace argus::verifier {

namespace {

using engine::Analysis;
using engine::BarrierDivergence;
using engine::Bounds;
using engine::Epilogue;
using engine::FragmentLayout;
using engine::FragmentTags;
using engine::MbarrierPhases;
using engine::NamedBarriers;
using engine::Races;
using engine::SharedReads;
using engine::TagAsserts;
using engine::TagFlow;
using engine::TmaReads;
using engine::Walker;
using engine::Wgmma;

// One walk of kernel `f` with every analysis, in the order their findings
// are reported (deadline_at: the request's absolute deadline, 0: none).
absl::Status VerifyKernel(const dsl::ir::Module& module, const dsl::ir::Function& f,
                          const VerifyOptions& o, int64_t deadline_at, Report* report,
                          bool* needs_window) {
  Walker w(module, f, o, report);
  if (deadline_at > 0) w.set_deadline_at(deadline_at);
  BarrierDivergence divergence(w);
  Wgmma wgmma(w);
  MbarrierPhases phases(w, wgmma);
  TagFlow tag_flow(w);
  Epilogue epilogue(w, tag_flow);
  NamedBarriers named(w);
  FragmentTags fragment_tags(w);
  FragmentLayout fragment_layout(w);
  Bounds bounds(w);
  TagAsserts tag_asserts(w, tag_flow);
  TmaReads tma_reads(w, phases);
  SharedReads shared_reads(w);
  Races races(w, wgmma);
  for (Analysis* a : std::initializer_list<Analysis*>{
           &divergence, &wgmma, &phases, &epilogue, &named, &fragment_tags, &fragment_layout,
           &bounds, &tag_flow, &tag_asserts, &tma_reads, &shared_reads, &races})
    w.Add(a);
  w.set_fill_resolver(&tma_reads);
  RETURN_IF_ERROR(w.Run());
  *needs_window = w.needs_window();
  return absl::OkStatus();
}

using dsl::ir::Function;

std::mutex cache_mu;
std::map<std::string, Report>& Cache() {
  static auto* c = new std::map<std::string, Report>();
  return *c;
}

}  // namespace

absl::StatusOr<Report> Verify(const dsl::ir::Module& module, const VerifyOptions& options) {
  auto start = std::chrono::steady_clock::now();
  std::string key =
      absl::StrCat(std::hash<std::string>()(dsl::ir::Dump(module)), "|", options.max_dim, "|",
                   options.solver_timeout_ms, "|", options.solver_rlimit, "|", options.window);
  for (const auto& [k, v] : options.dims) absl::StrAppend(&key, "|", k, "=", v);
  absl::StrAppend(&key, "|kernel=", options.kernel);
  if (options.use_cache) {
    std::lock_guard<std::mutex> l(cache_mu);
    auto it = Cache().find(key);
    if (it != Cache().end()) {
      Report r = it->second;
      r.cached = true;
      return r;
    }
  }
  // One deadline for the whole request: every kernel, every rerun.
  const int64_t deadline_at = Walker::NowMs() + options.deadline_ms;
  Report rep;
  rep.file = module.source ? module.source->name() : "";
  std::vector<std::string> names;
  for (const Function& f : module.functions) {
    if (!f.is_kernel || (!options.kernel.empty() && f.name != options.kernel)) continue;
    names.push_back(f.name);
    try {
      // Widen the exact window while a refutation rests on older values.
      VerifyOptions o = options;
      for (;;) {
        Report kr;
        bool needs_window = false;
        RETURN_IF_ERROR(VerifyKernel(module, f, o, options.deadline_ms > 0 ? deadline_at : 0, &kr,
                                     &needs_window));
        if (needs_window && o.window < 16) {
          o.window = std::max(1, o.window) * 2;
          continue;
        }
        rep.obligations += kr.obligations;
        rep.proved += kr.proved;
        rep.max_steps = std::max(rep.max_steps, kr.max_steps);
        rep.findings.insert(rep.findings.end(), kr.findings.begin(), kr.findings.end());
        break;
      }
    } catch (const z3::exception& ex) {
      Finding fd;
      fd.severity = Severity::kUnknown;
      fd.check = "solver";
      fd.message = absl::StrCat("unknown: z3 error: ", ex.msg());
      fd.loc = f.loc;
      rep.findings.push_back(fd);
    }
  }
  if (names.empty() && !options.kernel.empty())
    return absl::InvalidArgumentError(
        absl::StrCat("no kernel named '", options.kernel, "' in ", rep.file));
  rep.kernel = absl::StrJoin(names, ",");
  rep.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  bool complete = true;
  for (const Finding& f : rep.findings) complete &= f.check != "deadline";
  if (options.use_cache && complete) {
    std::lock_guard<std::mutex> l(cache_mu);
    Cache()[key] = rep;
  }
  return rep;
}

absl::StatusOr<Report> VerifySource(const std::string& file_name, const std::string& text,
                                    const dsl::CheckOptions& check, const VerifyOptions& options) {
  auto src = std::make_shared<const dsl::SourceFile>(file_name, text);
  ASSIGN_OR_RETURN(dsl::ir::Module m, dsl::Compile(src, check));
  return Verify(m, options);
}

}  // namespace argus::verifier
