// `argus tune PROBLEM --shape ... --dtype ... --target ...`: the main job.
//
// Without --server it starts the embedded default for tuning: an in-process
// argus-server (with its planner) and a local worker. When the local
// inventory (argus-runner --inventory) finds a GPU of the target's arch, the
// worker runs candidates on it (backend gpu, the full shape); otherwise its
// "candidate" handler runs the reference interpreter, and such runs are
// labelled interp and use a small shape. With --server it submits the job and watches it. Either
// way it streams the planner's progress and ends with the best kernel's
// source, its invariants, the artifact path and the measured speed-up
// (baseline time / ours).
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "base/flags.h"
#include "base/suggest.h"
#include "clients/cli/commands.h"
#include "clients/cli/connection.h"
#include "clients/cli/embedded.h"
#include "clients/cli/exit_codes.h"
#include "clients/cli/progress.h"
#include "clients/cli/server_strings.h"
#include "clients/cli/verb_flags.h"
#include "gpu_worker/daemon.h"
#include "gpu_worker/host_inventory.h"
#include "nlohmann/json.hpp"
#include "planner/interp_backend.h"
#include "planner/llm_endpoints.h"
#include "planner/problems.h"
#include "server/clock.h"
#include "server/server.h"
#include "spdlog/spdlog.h"

namespace argus::cli {
namespace {

using nlohmann::json;

// The arch of the first local GPU that can run `target` (auto: any we
// generate code for), or "" when there is none.
std::string LocalGpuArch(const std::string& target) {
  if (target == "interp") return "";
  v1::Inventory inv = worker::CollectInventory({});
  for (const v1::Device& d : inv.devices()) {
    if (d.backend() == "interp") continue;
    const std::string& arch = d.arch();
    if (target == "auto" ? (arch == "sm_90a" || arch == "gfx942") : arch == target) return arch;
  }
  return "";
}

// The embedded default for tune jobs: long leases (a full-size GPU candidate
// can run for a minute); a GPU worker keeps the daemon's own candidate
// handler (backend gpu, the runner beside this binary) with the catalog's
// references, an interpreter worker takes the planner's handler.
EmbeddedOptions TuneEmbeddedOptions(bool gpu) {
  EmbeddedOptions o;
  o.lease_ms = 60'000;
  o.lease_wait_ms = 200;
  if (gpu) {
    o.candidate = planner::InterpCandidateOptions();
    o.candidate.default_backend = "gpu";
  } else {
    o.candidate_handler = planner::InterpCandidateHandler();
  }
  return o;
}

int TuneFail(const std::string& verb, const absl::Status& st) { return VerbFail(verb, st); }

// A step's speed-up over the baseline (baseline time / ours; > 1 is faster).
double Speedup(const json& j) { return j.value("speedup", j.value("ratio", 0.0)); }

// The steps of the progress summary `r` after step `*printed`, one line each.
std::string StepLines(const json& r, int* printed) {
  std::string out;
  if (!r.contains("recent")) return out;
  double best = r.contains("best") ? Speedup(r["best"]) : 0.0;
  for (const json& l : r["recent"]) {
    int step = l.value("step", 0);
    if (step <= *printed) continue;
    *printed = step;
    std::string what = l.value("outcome", "");
    if (what == "ok") {
      what = absl::StrFormat("ok, speed-up %.3fx", Speedup(l));
    } else if (!l.value("message", "").empty()) {
      std::string m = l.value("message", "");
      what = absl::StrCat(what, ": ", m.substr(0, m.find('\n')));
    }
    absl::StrAppend(&out, absl::StrFormat("[%d] %-10s %-40s %s\n", step, l.value("action", ""),
                                          l.value("config", ""), what));
  }
  if (out.empty()) return out;
  absl::StrAppend(
      &out, absl::StrFormat("    best %.3fx (tried %d, verified %d, rejected %d)\n", best,
                            r.value("tried", 0), r.value("verified", 0), r.value("rejected", 0)));
  return out;
}

// The flags a typo in would otherwise mean something else: an unknown target
// would read as "no GPU of that arch", --max_candidates 0 as the default.
absl::Status CheckTuneFlags(const std::string& target, int64_t max_candidates) {
  static const std::vector<std::string> kTargets = {"auto", "sm_90a", "gfx942", "interp"};
  if (std::find(kTargets.begin(), kTargets.end(), target) == kTargets.end()) {
    return absl::InvalidArgumentError(absl::StrCat("unknown --target '", target, "'",
                                                   DidYouMean(target, kTargets),
                                                   "; one of auto, sm_90a, gfx942, interp"));
  }
  if (max_candidates < 1 || max_candidates > 10000) {
    return absl::InvalidArgumentError(absl::StrCat("--max_candidates ", max_candidates,
                                                   ": give a number of candidates from 1 to "
                                                   "10000 (default 16)"));
  }
  return absl::OkStatus();
}

int Tune(const std::string& verb, const std::vector<std::string>& args) {
  std::string server_flag, shape, dtype, target = "auto", db, policy = "builtin",
                                         log_level = "warn";
  std::string llm_endpoint, llm_model;
  std::vector<std::string> options;
  int64_t max_candidates = 16;
  bool as_json = false;
  FlagSet fs("argus tune",
             "PROBLEM [--shape 4096x4096x4096 | M=..,N=..] [--dtype bf16] "
             "[--target auto|sm_90a|gfx942|interp] [--option causal=1] [--max_candidates N] "
             "[--server HOST:PORT]\n\n"
             "Tunes a kernel for a catalog problem (gemm, batched_gemm, attention, moe,\n"
             "elementwise, reduction, softmax, rmsnorm, layernorm). Without --server the\n"
             "embedded default runs it on the reference interpreter (small shape).\n\n"
             "example: argus tune gemm --shape 64x64x64 --dtype f32");
  fs.String("server", &server_flag,
            "argus-server address (default: $ARGUS_SERVER; none: embedded)");
  fs.String("shape", &shape, "the problem's dims, AxBxC in the family's order or NAME=V,...");
  fs.String("dtype", &dtype, "f32, f16, bf16, fp8 (default: bf16 for gemm, else f32)");
  fs.String("target", &target, "auto, sm_90a, gfx942 or interp");
  fs.List("option", &options, "NAME=V problem options (trans_a, trans_b, causal, op)");
  fs.Int("max_candidates", &max_candidates, "candidates to try");
  fs.String("policy", &policy, "builtin or llm (default: llm when --llm_endpoint is given)");
  fs.String("llm_endpoint", &llm_endpoint,
            "with --server: the name of one of the server's LLM endpoints (its "
            "--llm_endpoints; URLs and keys are the operator's); embedded: your OpenAI-compatible "
            "base URL, e.g. http://127.0.0.1:8000/v1 (key: $ARGUS_LLM_API_KEY)");
  fs.String("llm_model", &llm_model, "model name for the LLM policy");
  fs.String("db", &db, "store of the embedded server");
  fs.Bool("json", &as_json, "print the final result as JSON");
  fs.String("log_level", &log_level, "trace, debug, info, warn, error, off");
  auto pos = fs.Parse(args);
  if (!pos.ok()) return TuneFail(verb, pos.status());
  if (fs.help_requested()) {
    std::cout << fs.Help();
    return kExitOk;
  }
  spdlog::set_level(spdlog::level::from_str(log_level));
  if (pos->size() != 1) {
    std::cerr << "argus tune: name one problem (see argus tune --help)\n";
    return kExitUsage;
  }
  const std::string family = (*pos)[0];
  if (auto st = CheckTuneFlags(target, max_candidates); !st.ok()) return TuneFail(verb, st);
  std::map<std::string, std::string> opts;
  for (const auto& o : options) {
    std::vector<std::string> kv = absl::StrSplit(o, absl::MaxSplits('=', 1));
    if (kv.size() != 2) {
      std::cerr << "argus tune: --option " << o << ": expected NAME=V\n";
      return kExitUsage;
    }
    opts[kv[0]] = kv[1];
  }
  auto dims = planner::ParseShape(family, shape);
  if (!dims.ok()) return TuneFail(verb, dims.status());
  auto problem = planner::MakeProblem(family, *dims, dtype, opts);
  if (!problem.ok()) return TuneFail(verb, problem.status());

  std::string address = ResolveServerAddress(server_flag);
  std::unique_ptr<Embedded> embedded;
  std::string gpu_arch;
  if (address.empty()) gpu_arch = LocalGpuArch(target);
  if (address.empty() && gpu_arch.empty()) {
    // No GPU here: the embedded worker runs candidates on the interpreter;
    // label it so and keep the shape small.
    if (target != "auto" && target != "interp") {
      std::cerr << "argus tune: --target " << target
                << " needs a GPU of that arch: none was found here (argus-worker --inventory "
                   "shows what was probed); pass --server, or --target interp\n";
      return kExitUsage;
    }
    target = "interp";
    if (planner::Flops(*problem) > 5e7 || shape.empty()) {
      const planner::Family* f = planner::FindFamily(family);
      auto small = planner::MakeProblem(family, f->interp_shape, problem->dtype, problem->options);
      if (!small.ok()) return TuneFail(verb, small.status());
      if (!shape.empty()) {
        std::cout << "interp: " << planner::Describe(*problem)
                  << " is too large for the interpreter; tuning " << planner::Describe(*small)
                  << " instead\n";
      } else {
        std::cout << "interp: no --shape given; tuning the family's small shape "
                  << planner::Describe(*small) << "\n";
      }
      problem = small;
    }
  }
  if (address.empty()) {
    if (!gpu_arch.empty()) target = gpu_arch;
    if (db.empty()) {
      auto path = EmbeddedStorePath();
      if (!path.ok()) return TuneFail(verb, path.status());
      db = *path;
    }
    embedded = std::make_unique<Embedded>();
    EmbeddedOptions eo = TuneEmbeddedOptions(!gpu_arch.empty());
    if (!llm_endpoint.empty()) {  // the user's own endpoint and key, for this process only
      if (auto st = planner::ValidateLlmUrl(llm_endpoint, "--llm_endpoint"); !st.ok()) {
        return TuneFail(verb, st);
      }
      const char* key = std::getenv("ARGUS_LLM_API_KEY");
      eo.llm_endpoints.push_back({"local", llm_endpoint, llm_model, key ? key : ""});
      llm_endpoint = "local";
    }
    auto a = embedded->Start(db, eo);
    if (!a.ok()) return TuneFail(verb, a.status());
    address = *a;
    std::cout << "embedded server " << address << " with "
              << (gpu_arch.empty() ? "an interpreter worker" : "a GPU worker") << " (target "
              << target << ")\n";
  }
  v1::JobSpec spec;
  spec.set_kind(v1::JOB_KIND_TUNE);
  *spec.mutable_problem() = planner::ToProto(*problem);
  spec.set_target(target);
  if (!llm_endpoint.empty() && policy == "builtin") policy = "llm";
  spec.set_policy(policy);
  spec.set_llm_endpoint(llm_endpoint);
  spec.set_llm_model(llm_model);
  spec.set_max_candidates(static_cast<int32_t>(max_candidates));
  spec.set_client("argus-cli");
  worker::DialOptions dial;  // $ARGUS_TOKEN for a real server
  if (!embedded) {
    auto resolved = ResolveDialOptions({});
    if (!resolved.ok()) return TuneFail(verb, resolved.status());
    dial = *resolved;
  }
  Connection conn(address, dial);
  auto job = conn.Submit(spec);
  if (!job.ok()) return TuneFail(verb, job.status());
  std::cout << "job " << job->id() << ": tuning " << planner::Describe(*problem) << " on " << target
            << "\n"
            << std::flush;  // a script may watch the job meanwhile
  int printed = -1;
  Progress progress(/*quiet=*/false);  // stderr: a bar on a terminal, else plain lines
  auto done = conn.Watch(
      job->id(),
      [&](const v1::JobEvent& ev) {
        json r = json::parse(ev.job().result_json(), nullptr, false);
        if (!as_json && r.is_object()) {
          std::string steps = StepLines(r, &printed);
          if (!steps.empty()) progress.Above(steps);
        }
        progress.Update(ev);
      },
      std::chrono::minutes(10));
  progress.Done();
  if (!done.ok()) return TuneFail(verb, done.status());
  json r = json::parse(done->result_json(), nullptr, false);
  if (r.is_discarded()) r = json::object();
  std::string artifact;
  if (r.contains("best")) {
    // The file's name is made of the server's strings: plain names only, so
    // that it stays inside the state directory.
    const std::string kernel = r["best"].value("kernel", "kernel");
    absl::Status names = CheckFileNamePart("the job id", done->id());
    if (names.ok()) names = CheckIdentifier("the kernel name", kernel);
    if (!names.ok()) return TuneFail(verb, names);
    auto dir = EmbeddedStateDir();
    if (dir.ok()) {
      std::filesystem::path p = std::filesystem::path(*dir) / "artifacts";
      std::filesystem::create_directories(p);
      p /= absl::StrCat(done->id(), "-", kernel, ".py");
      std::ofstream out(p);
      out << "# argus tune " << planner::Describe(*problem) << " on " << r.value("target", "")
          << "\n# constants: " << r["best"]["constants"].dump()
          << "\n# dims: " << r["best"]["dims"].dump() << "\n"
          << r["best"].value("source", "");
      artifact = p.string();
      r["artifact"] = artifact;
    }
  }
  if (as_json) {
    std::cout << r.dump(2) << "\n";
  } else if (r.contains("best")) {
    const json& b = r["best"];
    std::cout << "\nbest kernel (" << b["config"]["template"].get<std::string>() << ", step "
              << b.value("step", 0) << "), constants " << b["constants"].dump() << ":\n"
              << b.value("source", "") << "\ninvariants:\n";
    for (const auto& inv : b["invariants"]) std::cout << "  - " << inv.get<std::string>() << "\n";
    std::cout << absl::StrFormat(
        "speed-up over the baseline (%s%s; baseline time / ours): %.3fx%s\nartifact: %s\n",
        r.value("baseline_name", ""),
        r.value("target", "") == "interp" ? ", interp instruction count" : "", Speedup(b),
        r.value("target", "") == "interp" ? " (interp)" : "", artifact);
  }
  if (done->state() != v1::JOB_STATE_SUCCEEDED) {
    std::cerr << "argus tune: job " << done->id() << " " << v1::JobState_Name(done->state()) << ": "
              << done->error() << "\n";
    return kExitJobFailed;
  }
  return kExitOk;
}

const bool kRegistered = [] {
  RegisterVerb(
      {"tune", "tune a kernel for a catalog problem (argus tune gemm --shape MxNxK)", Tune});
  return true;
}();

}  // namespace
}  // namespace argus::cli
