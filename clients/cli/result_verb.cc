// `argus result JOB` and `argus export JOB -o DIR`: what a finished job
// produced, for people and for programs.
//
// Both read the job's result_json. A tune job's result carries the best
// kernel under "best" (see docs/api.md, "Job results"): candidate_id,
// ratio (speed-up), source, invariants, artifact, metadata. export takes the
// compiled kernel from the store's artifacts table (ListArtifacts of the best
// candidate), else from the result's ptx / code_object_b64, else compiles
// the source; the launchers (export_text.h) are written from the runner spec
// of the worker's own PrepareGpuRun — tensors, grid, block, arguments, TMA
// tensor maps — so they launch what was measured. A best kernel that is a
// pipeline (its "pipeline" lists several kernels of the source launched in
// order over one set of tensors) is listed launch by launch, and exported as
// one image per launch, with a launcher that allocates the scratch tensors;
// one kernel is a pipeline of one launch.
// A probe job's result lists each worker's inventory.
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <optional>
#include <sstream>

#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "base/flags.h"
#include "base/logging.h"
#include "base/status.h"
#include "clients/cli/commands.h"
#include "clients/cli/connection.h"
#include "clients/cli/embedded.h"
#include "clients/cli/exit_codes.h"
#include "clients/cli/export_text.h"
#include "clients/cli/server_strings.h"
#include "clients/cli/verb_flags.h"
#include "gpu_worker/candidate.h"
#include "nlohmann/json.hpp"
#include "planner/problems.h"
#include "verifier/cli.h"

namespace argus::cli {
namespace {

using nlohmann::json;

int ResultFail(const std::string& verb, const absl::Status& st) { return VerbFail(verb, st); }

// Parses the verb's flags and fetches JOB; returns -1 and fills *job (and
// *conn, the connection it used) to go on.
int FetchJob(const std::string& verb, FlagSet& flags, const std::vector<std::string>& args,
             const VerbFlags& g, v1::Job* job, std::unique_ptr<Connection>* conn) {
  std::string id;
  if (int rc = ParseOneArg(verb, flags, args, g, "job id", &id); rc >= 0) return rc;
  auto connected = ConnectOrOpenEmbeddedStore(g.server, {});  // $ARGUS_TOKEN for a server
  if (!connected.ok()) return ResultFail(verb, connected.status());
  *conn = std::move(*connected);
  auto got = (*conn)->Get(id);
  if (!got.ok()) return ResultFail(verb, got.status());
  *job = *got;
  return -1;
}

// The best kernel's speed-up: "ratio" as the planner writes it ("speedup" in
// results written before it).
std::optional<double> Speedup(const json& best) {
  for (const char* key : {"ratio", "speedup"}) {
    if (best.contains(key) && best[key].is_number()) return best[key].get<double>();
  }
  return std::nullopt;
}

std::string StateText(const v1::Job& job) {
  std::string n = v1::JobState_Name(job.state());
  return n.substr(std::string("JOB_STATE_").size());
}

json ResultOf(const v1::Job& job) {
  json r = json::parse(job.result_json(), nullptr, false);
  return r.is_object() ? r : json::object();
}

// The launches of a pipeline best kernel (a KB template with "pipeline":
// several kernels of one source run in order over one set of tensors), empty
// for one kernel.
std::vector<std::string> PipelineOf(const json& best) {
  std::vector<std::string> out;
  if (!best.contains("pipeline") || !best["pipeline"].is_array()) return out;
  for (const json& k : best["pipeline"]) out.push_back(k.is_string() ? k.get<std::string>() : "?");
  return out;
}

// "BM=128 BN=64" of a JSON object.
std::string Assignments(const json& obj) {
  std::vector<std::string> parts;
  if (obj.is_object())
    for (const auto& [k, v] : obj.items())
      parts.push_back(k + "=" + (v.is_string() ? v.get<std::string>() : v.dump()));
  return parts.empty() ? "(none)" : absl::StrJoin(parts, " ");
}

// What the best kernel was tuned for and with: the problem and target, the
// template and its constants and dims (a pipeline prints them per launch
// below), and the source file `argus tune` wrote, where it is on this machine.
void PrintBestContext(const v1::Job& job, const json& r) {
  const json& b = r["best"];
  auto problem = planner::FromJson(r.value("problem", json::object()));
  if (problem.ok()) {
    std::printf("  problem: %s on %s\n", planner::Describe(*problem).c_str(),
                r.value("target", job.spec().target()).c_str());
  }
  if (PipelineOf(b).empty()) {
    std::string tmpl = b.contains("config") ? b["config"].value("template", "") : "";
    std::printf("  template %s, constants: %s; dims: %s\n", tmpl.empty() ? "?" : tmpl.c_str(),
                Assignments(b.value("constants", json::object())).c_str(),
                Assignments(b.value("dims", json::object())).c_str());
  }
  auto dir = EmbeddedStateDir();
  if (!b.contains("artifact") && dir.ok()) {
    std::filesystem::path p = std::filesystem::path(*dir) / "artifacts" /
                              absl::StrCat(job.id(), "-", b.value("kernel", "kernel"), ".py");
    std::error_code ec;
    if (std::filesystem::exists(p, ec)) std::printf("  artifact: %s\n", p.c_str());
  }
}

int Result(const std::string& verb, const std::vector<std::string>& args) {
  VerbFlags g;
  FlagSet flags("argus result",
                "JOB\n\nPrints what a job produced: for a tune job the best kernel, its verified\n"
                "invariants, its measured speed-up over the vendor library and where its\n"
                "artifact is (a pipeline: each launch in order); for a probe job each\n"
                "worker's devices.\n\n"
                "example: argus result j-0123456789abcdef --json");
  g.Declare(flags);
  v1::Job job;
  std::unique_ptr<Connection> conn;
  if (int rc = FetchJob(verb, flags, args, g, &job, &conn); rc >= 0) return rc;
  const bool as_json = g.json;
  json r = ResultOf(job);
  json out = {{"id", job.id()}, {"state", StateText(job)}, {"error", job.error()}};
  if (r.contains("best")) out["best"] = r["best"];
  const std::vector<std::string> pipeline =
      r.contains("best") ? PipelineOf(r["best"]) : std::vector<std::string>{};
  if (!pipeline.empty()) {
    // Every launch runs with the best kernel's constants and dims.
    json launches = json::array();
    for (size_t i = 0; i < pipeline.size(); ++i)
      launches.push_back({{"index", i}, {"kernel", pipeline[i]}});
    out["best"]["launches"] = launches;
  }
  if (r.contains("tasks")) out["tasks"] = r["tasks"];
  if (as_json) {
    std::cout << out.dump(2) << "\n";
  } else {
    std::printf("job %s  %s\n", job.id().c_str(), StateText(job).c_str());
    if (!job.error().empty()) std::printf("  error: %s\n", job.error().c_str());
    if (r.contains("best") && r["best"].is_object()) {
      const json& b = r["best"];
      std::printf("best kernel: %s%s\n", b.value("candidate_id", "?").c_str(),
                  pipeline.empty()
                      ? ""
                      : absl::StrCat("  (a pipeline of ", pipeline.size(), " launches)").c_str());
      PrintBestContext(job, r);
      if (auto x = Speedup(b)) {
        std::printf("  speed-up over the %s: %.3fx\n",
                    r.value("baseline_name", std::string("vendor library")).c_str(), *x);
      }
      if (b.contains("artifact")) std::printf("  artifact: %s\n", b["artifact"].dump().c_str());
      if (!pipeline.empty()) {
        std::printf("  launches, in order, over one set of tensors:\n");
        for (size_t i = 0; i < pipeline.size(); ++i)
          std::printf("    %zu  %s\n", i, pipeline[i].c_str());
        std::printf("  every launch runs with constants: %s\n",
                    Assignments(b.value("constants", json::object())).c_str());
        std::printf("  and dims: %s\n", Assignments(b.value("dims", json::object())).c_str());
      }
      if (b.contains("invariants") && b["invariants"].is_array()) {
        std::printf("  verified invariants:\n");
        for (const auto& inv : b["invariants"]) {
          if (inv.is_string()) {  // the planner's: the template's invariants as text
            std::printf("    %s\n", inv.get<std::string>().c_str());
          } else if (inv.is_object()) {
            std::printf("    line %s: %s\n",
                        inv.contains("line") ? inv["line"].dump().c_str() : "?",
                        inv.value("text", "").c_str());
          }
        }
      }
      if (b.contains("source") && b["source"].is_string()) {
        std::printf("\n%s\n", b["source"].get<std::string>().c_str());
      }
    } else if (r.contains("tasks") && r["tasks"].is_array()) {
      for (const auto& t : r["tasks"]) {
        std::printf("worker %s: %s\n", t.value("worker_id", "?").c_str(),
                    t.value("state", "").c_str());
        if (!t.contains("result") || !t["result"].is_object()) continue;
        for (const auto& d : t["result"].value("devices", json::array())) {
          std::printf("  %s #%d %s %s\n", d.value("backend", "").c_str(), d.value("index", 0),
                      d.value("arch", "").c_str(), d.value("name", "").c_str());
        }
      }
    } else {
      std::printf("  no result yet\n");
    }
  }
  if (job.state() == v1::JOB_STATE_FAILED || job.state() == v1::JOB_STATE_CANCELLED)
    return kExitJobFailed;
  return kExitOk;
}

// Merges an artifact's metadata (codegen/kernel_metadata.h's JSON: symbol,
// dynamic_shared_bytes, params, ...) into the export's: the artifact's own
// keys win, and the launcher's kernel_name / shared_bytes are filled from it.
void AdoptKernelMetadata(const json& km, json* meta) {
  if (!km.is_object()) return;
  for (auto& [k, v] : km.items()) (*meta)[k] = v;
  if (!meta->contains("kernel_name") && km.contains("symbol"))
    (*meta)["kernel_name"] = km["symbol"];
  if (!meta->contains("shared_bytes") && km.contains("dynamic_shared_bytes"))
    (*meta)["shared_bytes"] = km["dynamic_shared_bytes"];
}

// The GPU target export compiles for: sm_90a unless `target` is gfx942.
std::string ExportTarget(const std::string& target) {
  return target == "gfx942" ? target : "sm_90a";
}

// Writes `files` into `out` (created); the paths written.
absl::StatusOr<std::vector<std::string>> WriteFiles(
    const std::string& out, const std::vector<std::pair<std::string, std::string>>& files) {
  std::error_code ec;
  std::filesystem::create_directories(out, ec);
  if (ec) return absl::InternalError("cannot create " + out + ": " + ec.message());
  std::vector<std::string> written;
  for (const auto& [name, text] : files) {
    std::ofstream f(out + "/" + name, std::ios::binary | std::ios::trunc);
    f << text;
    if (!f) return absl::InternalError("cannot write " + out + "/" + name);
    written.push_back(out + "/" + name);
  }
  return written;
}

std::string ReadAll(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

// The best kernel compiled for `target` by the worker's own PrepareGpuRun
// (what a GPU worker measured), in a scratch directory: the runner spec with
// its launches (one kernel is a pipeline of one launch: its "kernel" and
// "args" become launches[0]), each launch's image and codegen metadata.
struct CompiledLaunches {
  json spec;
  std::vector<std::string> images;
  std::vector<json> metadata;
  std::string ext;  // ".ptx" | ".hsaco"
};

absl::StatusOr<CompiledLaunches> CompileLaunches(const json& b, const v1::Job& job,
                                                 const std::string& target) {
  // The runner check names the problem's tensors (a pipeline's others are
  // scratch); a result written before the planner recorded it gets the job
  // problem's.
  json check = b.value("check", json());
  if (check.is_null()) {
    auto problem = planner::FromProto(job.spec().problem());
    check = problem.ok() ? planner::RunnerCheck(*problem) : json{{"op", "none"}};
  }
  json payload = {{"source", b.value("source", "")},
                  {"kernel", b.value("kernel", "")},
                  {"constants", b.value("constants", json::object())},
                  {"dims", b.value("dims", json::object())},
                  {"target", target},
                  {"check", check}};
  const bool pipeline = !PipelineOf(b).empty();
  if (pipeline) payload["pipeline"] = b["pipeline"];
  if (b.contains("shapes")) payload["shapes"] = b["shapes"];
  auto req = worker::ParseCandidate(payload.dump());
  if (!req.ok()) {
    return absl::Status(req.status().code(), absl::StrCat(pipeline ? "the best kernel's pipeline: "
                                                                   : "the best kernel: ",
                                                          req.status().message()));
  }
  std::string tmpl = (std::filesystem::temp_directory_path() / "argus-export-XXXXXX").string();
  if (mkdtemp(tmpl.data()) == nullptr)
    return absl::InternalError("cannot create a scratch directory for the compile");
  struct Cleanup {
    std::string dir;
    ~Cleanup() {
      std::error_code ec;
      std::filesystem::remove_all(dir, ec);
    }
  } cleanup{tmpl};
  auto spec = worker::PrepareGpuRun(*req, tmpl);
  if (!spec.ok()) {
    return absl::Status(spec.status().code(), absl::StrCat("compiling the best kernel for ", target,
                                                           ": ", spec.status().message()));
  }
  CompiledLaunches c;
  c.spec = *spec;
  if (!pipeline) {
    c.spec["launches"] = json::array({{{"kernel", c.spec["kernel"]}, {"args", c.spec["args"]}}});
    c.spec.erase("kernel");
    c.spec.erase("args");
  }
  c.ext = target == "sm_90a" ? ".ptx" : ".hsaco";
  for (size_t i = 0; i < c.spec["launches"].size(); ++i) {
    const std::string sym = c.spec["launches"][i]["kernel"].value("symbol", "");
    const std::filesystem::path dir =
        pipeline ? std::filesystem::path(tmpl) / absl::StrCat("k", i) : std::filesystem::path(tmpl);
    c.images.push_back(ReadAll(dir / (sym + c.ext)));
    if (c.images.back().empty()) {
      return absl::InternalError(absl::StrCat("launch ", i, " (", sym, "): no ", c.ext,
                                              " image was compiled for ", target));
    }
    json km = json::parse(ReadAll(dir / (sym + ".json")), nullptr, false);
    c.metadata.push_back(km.is_object() ? km : json::object());
  }
  return c;
}

// The launch plan of `c` with images[i] as launch i's file; "launches",
// "tensors" and "scratch" for metadata.json into *full.
absl::StatusOr<LaunchPlan> PlanLaunches(const CompiledLaunches& c,
                                        const std::vector<std::string>& images, json* full) {
  std::vector<int> params;
  for (const json& km : c.metadata)
    params.push_back(static_cast<int>(km.value("params", json::array()).size()));
  ASSIGN_OR_RETURN(LaunchPlan plan, MakeLaunchPlan(c.spec, images, params));
  json launches = json::array();
  for (size_t i = 0; i < images.size(); ++i) {
    const json& l = c.spec["launches"][i];
    json launch = {{"index", i},
                   {"kernel", l["kernel"]["symbol"]},
                   {"image", images[i]},
                   {"grid", l["kernel"]["grid"]},
                   {"block", l["kernel"]["block"]},
                   {"shared_bytes", l["kernel"]["shared_bytes"]},
                   {"args", l["args"]},
                   {"params", c.metadata[i].value("params", json::array())}};
    if (c.metadata[i].contains("resources")) launch["resources"] = c.metadata[i]["resources"];
    launches.push_back(launch);
  }
  json tensors = json::array();
  for (const json& t : c.spec["tensors"]) {
    tensors.push_back({{"name", t["name"]},
                       {"dtype", t["dtype"]},
                       {"shape", t["shape"]},
                       {"scratch", t.value("scratch", false)}});
  }
  (*full)["launches"] = launches;
  (*full)["tensors"] = tensors;
  (*full)["scratch"] = ScratchTensors(plan);
  return plan;
}

// A pipeline best kernel: one image per launch, k<i>_<kernel>.<ext>, and the
// launchers; fills `full` (the metadata.json).
absl::StatusOr<std::vector<std::pair<std::string, std::string>>> PipelineFiles(
    const json& b, const v1::Job& job, const std::string& target, json* full) {
  ASSIGN_OR_RETURN(CompiledLaunches c, CompileLaunches(b, job, target));
  std::vector<std::pair<std::string, std::string>> files;
  std::vector<std::string> names;
  for (size_t i = 0; i < c.images.size(); ++i) {
    names.push_back(absl::StrCat("k", i, "_", c.metadata[i].value("symbol", ""), c.ext));
    files.push_back({names.back(), c.images[i]});
  }
  auto plan = PlanLaunches(c, names, full);
  if (!plan.ok()) {
    return absl::Status(plan.status().code(), absl::StrCat("pipeline ", plan.status().message()));
  }
  (*full)["pipeline"] = true;
  (*full)["target"] = target;
  (*full)["constants"] = b.value("constants", json::object());
  (*full)["dims"] = b.value("dims", json::object());
  (*full)["compiled_by"] = "argus export";
  files.push_back({"argus_kernel.h", LauncherHeader(*plan)});
  files.push_back({"launch_torch.py", TorchSnippet(*plan)});
  return files;
}

// Why the stored image's metadata `meta` (AdoptKernelMetadata's) does not
// describe the kernel compiled from the source (`km`, codegen's): "" when it
// does — same symbol, parameters, shared memory and, where stored, geometry.
std::string Disagreement(const json& meta, const json& km) {
  if (meta.value("kernel_name", "") != km.value("symbol", ""))
    return absl::StrCat("the stored image's kernel is ", meta.value("kernel_name", "?"),
                        ", the source's ", km.value("symbol", "?"));
  if (meta.value("params", json::array()).size() != km.value("params", json::array()).size())
    return "the stored image's kernel has other parameters than the source's";
  if (meta.value("shared_bytes", 0) != km.value("dynamic_shared_bytes", 0))
    return "the stored image's kernel uses other shared memory than the source's";
  for (const char* k : {"grid", "block"}) {
    if (meta.contains(k) && meta[k] != km.value(k, json()))
      return absl::StrCat("the stored image's ", k, " is not the source's");
  }
  return "";
}

// The tensor-map parameters of a kernel's metadata, "A, B".
std::string TensorMapParams(const json& meta) {
  std::vector<std::string> names;
  for (const json& p : meta.value("params", json::array()))
    if (p.is_object() && p.value("kind", "") == "tensormap") names.push_back(p.value("name", "?"));
  return absl::StrJoin(names, ", ");
}

// NAME=V items (from --dims / --const lists) into obj, as integers.
absl::Status Assign(const std::vector<std::string>& items, const std::string& flag, json* obj) {
  std::vector<std::string> flat;
  for (const auto& item : items) {
    for (absl::string_view part : absl::StrSplit(item, ',', absl::SkipEmpty()))
      flat.emplace_back(part);
  }
  for (const auto& item : flat) {
    std::vector<std::string> kv = absl::StrSplit(item, absl::MaxSplits('=', 1));
    int64_t v;
    if (kv.size() != 2 || kv[0].empty() || !absl::SimpleAtoi(kv[1], &v)) {
      return absl::InvalidArgumentError(absl::StrCat("--", flag, " ", item, ": expected NAME=INT"));
    }
    (*obj)[kv[0]] = v;
  }
  return absl::OkStatus();
}

// --dims / --const: the best kernel at another shape or knob setting. Its
// image is compiled from the source (nothing stored was made for it), and
// the verifier proves it at the new dims and constants before anything is
// written: an exported kernel is always a verified one.
absl::StatusOr<json> Retarget(json best, const std::vector<std::string>& dims,
                              const std::vector<std::string>& consts) {
  if (!best.contains("source") || !best["source"].is_string()) {
    return absl::FailedPreconditionError("--dims/--const: the result has no source to recompile");
  }
  json d = best.value("dims", json::object()), c = best.value("constants", json::object());
  RETURN_IF_ERROR(Assign(dims, "dims", &d));
  RETURN_IF_ERROR(Assign(consts, "const", &c));
  best["dims"] = d;
  best["constants"] = c;
  for (const char* stale : {"ptx", "code_object_b64", "metadata", "artifact"}) best.erase(stale);
  std::string tmpl = (std::filesystem::temp_directory_path() / "argus-export-XXXXXX").string();
  if (mkdtemp(tmpl.data()) == nullptr) {
    return absl::InternalError(absl::StrCat("mkdtemp: ", std::strerror(errno)));
  }
  const std::filesystem::path dir = tmpl;
  const std::string file = (dir / "kernel.py").string();
  std::ofstream(file) << best["source"].get<std::string>();
  std::vector<std::string> dim_items;
  for (const auto& [k, v] : d.items()) dim_items.push_back(k + "=" + v.dump());
  std::vector<std::string> args = {file, "--dims", absl::StrJoin(dim_items, ",")};
  for (const auto& [k, v] : c.items()) args.insert(args.end(), {"--const", k + "=" + v.dump()});
  std::ostringstream report;
  auto verified = verifier::VerifyVerb(args, report);
  std::filesystem::remove_all(dir);
  if (!verified.ok()) return verified.status();
  if (!*verified) {
    return absl::FailedPreconditionError(
        absl::StrCat("--dims/--const: the kernel does not verify at dims ", Assignments(d),
                     " constants ", Assignments(c), "; nothing written:\n", report.str()));
  }
  std::fprintf(stderr, "argus export: verified at dims %s, constants %s\n", Assignments(d).c_str(),
               Assignments(c).c_str());
  return best;
}

int Export(const std::string& verb, const std::vector<std::string>& args) {
  VerbFlags g;
  std::string out;
  FlagSet flags("argus export",
                "JOB -o DIR\n\nWrites the best kernel of a tune job to DIR: its code object\n"
                "(kernel.hsaco) or PTX (kernel.ptx), metadata.json, the DSL source, a C++\n"
                "launcher header (CUDA driver API and HIP) and a Python snippet that load\n"
                "and launch it on torch tensors with the grid, block, arguments, TMA tensor\n"
                "maps and shared memory it was measured with. A pipeline (several launches\n"
                "over one set of tensors) gets one image per launch (k<i>_<kernel>.ptx/.hsaco),\n"
                "its scratch tensors in metadata.json, and launchers that run the launches in\n"
                "order (the Python one allocates the scratch tensors).\n\n"
                "example: argus export j-0123456789abcdef -o kernels/qkv");
  g.Declare(flags, /*with_json=*/false);
  flags.String("o", &out, "output directory");
  std::string target;
  flags.String("target", &target,
               "sm_90a or gfx942: the target to compile for when the job stored no PTX or code "
               "object (default: the job's target; sm_90a for interpreter jobs)");
  std::vector<std::string> dims, consts;
  flags.List("dims", &dims,
             "NAME=V,...: export for these dims instead of the tuned shape (verified at them "
             "first)");
  flags.List("const", &consts, "NAME=V: override a constant (knob) of the tuned kernel");
  v1::Job job;
  std::unique_ptr<Connection> conn;
  if (int rc = FetchJob(verb, flags, args, g, &job, &conn); rc >= 0) return rc;
  if (out.empty()) return ResultFail(verb, absl::InvalidArgumentError("-o DIR is required"));
  json r = ResultOf(job);
  const bool retarget = !dims.empty() || !consts.empty();
  if (retarget && r.contains("best")) {
    auto moved = Retarget(r["best"], dims, consts);
    if (!moved.ok()) return ResultFail(verb, moved.status());
    r["best"] = *moved;
  } else if (r.value("target", "") == "interp" && r.contains("best")) {
    std::fprintf(stderr,
                 "argus export: note: job %s ran on the interpreter, at dims %s and constants "
                 "%s; the files are for them (--dims/--const export for another shape)\n",
                 job.id().c_str(), Assignments(r["best"].value("dims", json::object())).c_str(),
                 Assignments(r["best"].value("constants", json::object())).c_str());
  }
  if (!r.contains("best") || !r["best"].is_object()) {
    return ResultFail(verb,
                      absl::NotFoundError(absl::StrCat(
                          "job ", job.id(), " (", StateText(job), ") has no best kernel to export",
                          job.spec().kind() == v1::JOB_KIND_PROBE ? ": it is a probe job" : "")));
  }
  const json& b = r["best"];
  const bool has_source = b.contains("source") && b["source"].is_string();
  const std::string compile_target = ExportTarget(target.empty() ? r.value("target", "") : target);
  json full = {{"job_id", job.id()},
               {"candidate_id", b.value("candidate_id", "")},
               {"dims", b.value("dims", json::object())},
               {"constants", b.value("constants", json::object())}};
  if (auto x = Speedup(b)) full["speedup"] = *x;
  if (!PipelineOf(b).empty()) {
    // Several launches: the artifacts table and the result hold one image at
    // most, so every launch is compiled here from the stored source.
    if (!has_source) {
      return ResultFail(
          verb, absl::NotFoundError(absl::StrCat(
                    "job ", job.id(), ": the best kernel is a pipeline of ", PipelineOf(b).size(),
                    " launches but the result has no source "
                    "to compile them from")));
    }
    auto files = PipelineFiles(b, job, compile_target, &full);
    if (!files.ok()) return ResultFail(verb, files.status());
    files->push_back({"metadata.json", full.dump(2) + "\n"});
    files->push_back({"kernel.py", b["source"]});  // checked above
    auto written = WriteFiles(out, *files);
    if (!written.ok()) return ResultFail(verb, written.status());
    std::printf("%s\n", absl::StrJoin(*written, "\n").c_str());
    return kExitOk;
  }
  json meta = b.contains("metadata") && b["metadata"].is_object() ? b["metadata"] : json::object();
  std::string image;
  std::string image_file;
  std::string artifact_id;
  // First the artifacts table (what the worker compiled for the best
  // candidate), then what the result itself carries.
  auto art = retarget
                 ? absl::StatusOr<std::optional<v1::Artifact>>(std::nullopt)
                 : conn->BestArtifact(job.id(), b.value("candidate_id", ""), r.value("target", ""));
  if (!art.ok()) return ResultFail(verb, art.status());
  if (art->has_value()) {
    const v1::Artifact& a = **art;
    image = a.bytes();
    image_file = a.kind() == "ptx" ? "kernel.ptx" : "kernel.hsaco";
    artifact_id = a.id();
    AdoptKernelMetadata(json::parse(a.metadata_json(), nullptr, false), &meta);
  } else if (b.contains("ptx") && b["ptx"].is_string()) {
    image = b["ptx"];
    image_file = "kernel.ptx";
  } else if (b.contains("code_object_b64") && b["code_object_b64"].is_string()) {
    if (!absl::Base64Unescape(b["code_object_b64"].get<std::string>(), &image)) {
      return ResultFail(verb, absl::DataLossError("the job's code object is not valid base64"));
    }
    image_file = "kernel.hsaco";
  } else if (!has_source) {
    return ResultFail(verb,
                      absl::NotFoundError(absl::StrCat(
                          "job ", job.id(), ": the best kernel (", b.value("candidate_id", "?"),
                          ") has no PTX or code object, neither in the artifacts table nor "
                          "in the result (artifact: ",
                          b.contains("artifact") ? b["artifact"].dump() : "none", ")")));
  }
  // The launch (tensors, grid, block, arguments, tensor maps) comes from
  // compiling the source as the worker does, for the stored image's target.
  absl::StatusOr<CompiledLaunches> compiled =
      absl::NotFoundError("the result has no source to derive the launch from");
  if (has_source) {
    compiled = CompileLaunches(b, job,
                               image.empty()                ? compile_target
                               : image_file == "kernel.ptx" ? "sm_90a"
                                                            : "gfx942");
  }
  if (image.empty()) {
    // Nothing compiled was stored (an interpreter job, or a worker that
    // reports no image): the image is the one compiled from the source.
    if (!compiled.ok()) return ResultFail(verb, compiled.status());
    image = compiled->images[0];
    image_file = "kernel" + compiled->ext;
    json km = compiled->metadata[0];
    km["compiled_by"] = "argus export";
    AdoptKernelMetadata(km, &meta);
  }
  std::string kernel = meta.value("kernel_name", b.value("kernel_name", "kernel"));
  // The name is written into argus_kernel.h and launch_torch.py.
  if (auto st = CheckIdentifier("the kernel name", kernel); !st.ok()) return ResultFail(verb, st);
  std::string why_not = compiled.ok() ? Disagreement(meta, compiled->metadata[0])
                                      : std::string(compiled.status().message());
  full.update(meta);  // the job's keys win over the artifact's
  full["job_id"] = job.id();
  full["candidate_id"] = b.value("candidate_id", "");
  if (auto x = Speedup(b)) full["speedup"] = *x;
  if (!artifact_id.empty()) full["artifact_id"] = artifact_id;
  full["image"] = image_file;
  full["artifact"] = image_file;  // codegen's names its cubin, which export does not write
  full["format"] = image_file == "kernel.ptx" ? "ptx" : "hsaco";
  std::vector<std::pair<std::string, std::string>> files = {{image_file, image}};
  if (why_not.empty()) {
    auto plan = PlanLaunches(*compiled, {image_file}, &full);
    if (!plan.ok()) return ResultFail(verb, plan.status());
    files.push_back({"argus_kernel.h", LauncherHeader(*plan)});
    files.push_back({"launch_torch.py", TorchSnippet(*plan)});
  } else {
    // Only the kernel itself: the caller passes grid, block and every
    // parameter — which it cannot do for a tensor map, whose geometry
    // comes from the launch.
    if (std::string maps = TensorMapParams(meta); !maps.empty()) {
      return ResultFail(verb, absl::FailedPreconditionError(absl::StrCat(
                                  "launch 0 (", kernel, "): it takes TMA tensor maps (", maps,
                                  ") whose geometry comes from its launch, which export could "
                                  "not derive: ",
                                  why_not)));
    }
    std::fprintf(stderr,
                 "argus export: note: the launcher takes grid, block and every parameter from "
                 "the caller: %s\n",
                 why_not.c_str());
    files.push_back({"argus_kernel.h", KernelOnlyHeader(kernel, meta, image_file)});
    files.push_back({"launch_torch.py", KernelOnlyTorchSnippet(kernel, image_file, meta)});
  }
  files.push_back({"metadata.json", full.dump(2) + "\n"});
  if (has_source) files.push_back({"kernel.py", b["source"]});
  auto written = WriteFiles(out, files);
  if (!written.ok()) return ResultFail(verb, written.status());
  std::printf("%s\n", absl::StrJoin(*written, "\n").c_str());
  return kExitOk;
}

const bool kRegistered = [] {
  RegisterVerb({"result", "print a job's best kernel, invariants, speed-up and artifact", Result});
  RegisterVerb({"export", "write a job's best kernel, launcher header and Python snippet", Export});
  return true;
}();

}  // namespace
}  // namespace argus::cli
