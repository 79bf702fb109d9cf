// `argus batch FILE`: submits every problem of a manifest on each of its
// targets, shows aggregate progress, and writes the results table (CSV and
// JSON) and the dispatch table. The state file (FILE.state.json) records the
// job of every entry after each change, so an interrupted batch continues
// with `argus batch FILE --resume` without submitting anything twice.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/flags.h"
#include "base/logging.h"
#include "clients/batch/manifest.h"
#include "clients/cli/commands.h"
#include "clients/cli/connection.h"
#include "clients/cli/exit_codes.h"
#include "clients/cli/verb_flags.h"

namespace argus::cli {
namespace {

using batch::BatchState;
using batch::EntryState;
using batch::Manifest;

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

int BatchFail(const absl::Status& st) { return VerbFail("batch", st); }

struct Counts {
  int pending = 0, queued = 0, running = 0, succeeded = 0, failed = 0, refused = 0;
  int tried = 0;  // candidates finished over all tune jobs
  double best = 0;
  std::string best_key;
};

Counts Count(const Manifest& m, const BatchState& s) {
  Counts c;
  for (const auto& e : m.entries) {
    auto it = s.entries.find(e.key);
    std::string st =
        it == s.entries.end() || it->second.job_id.empty()
            ? (it != s.entries.end() && it->second.state == "refused" ? "refused" : "pending")
            : it->second.state;
    if (st == "pending") ++c.pending;
    if (st == "queued") ++c.queued;
    if (st == "running") ++c.running;
    if (st == "succeeded") ++c.succeeded;
    if (st == "failed" || st == "cancelled") ++c.failed;
    if (st == "refused") ++c.refused;
    if (it != s.entries.end()) c.tried += it->second.tried;
    if (it != s.entries.end() && it->second.best_speedup > c.best) {
      c.best = it->second.best_speedup;
      c.best_key = e.key;
    }
  }
  return c;
}

std::string ProgressLine(const Manifest& m, const Counts& c, int64_t elapsed_ms) {
  int finished = c.succeeded + c.failed + c.refused;
  std::string line = absl::StrFormat(
      "batch %s: %d/%d finished (%d succeeded, %d failed, %d refused), %d running, %d queued, %d "
      "to submit",
      m.name.empty() ? "-" : m.name, finished, static_cast<int>(m.entries.size()), c.succeeded,
      c.failed, c.refused, c.running, c.queued, c.pending);
  if (c.tried > 0) absl::StrAppend(&line, "; ", c.tried, " candidates tried");
  if (c.best > 0) absl::StrAppend(&line, absl::StrFormat("; best %.3fx (%s)", c.best, c.best_key));
  absl::StrAppend(&line,
                  absl::StrFormat("; %llds elapsed", static_cast<long long>(elapsed_ms / 1000)));
  return line;
}

absl::Status WriteFile(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::trunc);
  out << text;
  out.flush();
  if (!out) return absl::InternalError("cannot write " + path);
  return absl::OkStatus();
}

// Server strings (errors) may hold bytes that are not UTF-8: replaced.
std::string Dump(const nlohmann::json& j) {
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

// Refusals that waiting will not fix, versus limits that it will.
bool Refusal(const absl::Status& st) {
  return st.code() != absl::StatusCode::kUnavailable &&
         st.code() != absl::StatusCode::kDeadlineExceeded &&
         st.code() != absl::StatusCode::kResourceExhausted;
}

int Batch(const std::string& verb, const std::vector<std::string>& args) {
  VerbFlags g;
  std::string state_path, out_dir;
  bool resume = false, wait = true;
  int64_t poll_ms = 500, reconnect_s = 60;
  FlagSet flags("argus batch",
                "FILE [--resume] [--out DIR] [--state FILE]\n\n"
                "Submits every problem of a manifest (YAML or JSON) on each of its targets,\n"
                "shows aggregate progress, and writes DIR/results.csv, DIR/results.json and\n"
                "DIR/dispatch.json (problem/shape/target -> best kernel). The state file\n"
                "(default FILE.state.json) records each entry's job as it goes; after an\n"
                "interruption, `argus batch FILE --resume` watches the jobs already submitted\n"
                "and submits only the rest. Exit code 0 if every job succeeded, 1 otherwise.\n\n"
                "manifest:\n"
                "  name: llama-7b\n"
                "  defaults: {dtype: bf16, targets: [sm_90a, gfx942], max_candidates: 32}\n"
                "  problems:\n"
                "    - {name: qkv, family: gemm, shape: {M: 4096, N: 12288, K: 4096}}\n"
                "    - {name: fleet, kind: probe}\n\n"
                "example: argus batch gemms.yaml --server 127.0.0.1:7070 --out results/");
  g.Declare(flags);
  flags.Bool("resume", &resume, "continue the batch recorded in the state file");
  flags.String("state", &state_path, "state file (default: FILE.state.json)");
  flags.String("out", &out_dir, "directory for the result tables (default: FILE-results/)");
  flags.Bool("wait", &wait, "wait for every job (--no-wait: submit, write the state, exit)");
  flags.Int("poll_ms", &poll_ms, "how often to poll the jobs");
  flags.Int("reconnect_s", &reconnect_s, "give up after the server is unreachable this long");
  std::string file;
  if (int rc = ParseOneArg(verb, flags, args, g, "manifest file", &file); rc >= 0) return rc;
  const bool json = g.json;
  auto manifest = batch::LoadManifest(file);
  if (!manifest.ok()) return BatchFail(manifest.status());
  std::filesystem::path fp(file);
  if (state_path.empty()) state_path = file + ".state.json";
  if (out_dir.empty()) out_dir = (fp.parent_path() / (fp.stem().string() + "-results")).string();

  BatchState state;
  bool exists = std::filesystem::exists(state_path);
  if (resume) {
    auto loaded = batch::LoadState(state_path);
    if (!loaded.ok()) {
      return BatchFail(absl::InvalidArgumentError(
          absl::StrCat(loaded.status().message(), " (nothing to resume; run without --resume)")));
    }
    state = *loaded;
  } else if (exists) {
    return BatchFail(absl::InvalidArgumentError(
        absl::StrCat("batch state ", state_path,
                     " exists: pass --resume to continue that batch, or remove it to start over")));
  }
  std::string addr = ResolveServerAddress(g.server.empty() ? state.server : g.server);
  if (addr.empty()) {
    return BatchFail(
        absl::InvalidArgumentError("no server: pass --server HOST:PORT or set ARGUS_SERVER"));
  }
  state.manifest = file;
  state.server = addr;
  auto dial = ResolveDialOptions({});  // $ARGUS_TOKEN
  if (!dial.ok()) return BatchFail(dial.status());
  Connection conn(addr, *dial);
  bool tty = isatty(2) && !json;
  int64_t start = NowMs(), last_ok = NowMs();
  std::string last_line;
  auto save = [&]() -> absl::Status { return batch::SaveState(state_path, state); };
  if (auto st = save(); !st.ok()) return BatchFail(st);

  while (true) {
    bool changed = false, unreachable = false;
    // Submit what has no job yet, in manifest order; a per-client limit
    // (RESOURCE_EXHAUSTED) defers the rest to the next round.
    for (const auto& e : manifest->entries) {
      EntryState& es = state.entries[e.key];
      es.key = e.key;
      if (!es.job_id.empty() || es.state == "refused") continue;
      v1::JobSpec spec = e.spec;
      spec.set_client(std::getenv("USER") ? std::getenv("USER") : "cli");
      auto job = conn.Submit(spec);
      if (job.ok()) {
        es.job_id = job->id();
        es.submitted_unix_ms = NowMs();
        batch::UpdateFromJob(*job, &es);
        changed = true;
        last_ok = NowMs();
        if (auto st = save(); !st.ok()) return BatchFail(st);  // before anything else
        continue;
      }
      if (job.status().code() == absl::StatusCode::kUnavailable) unreachable = true;
      if (Refusal(job.status())) {
        es.state = "refused";
        es.error = std::string(job.status().message());
        changed = true;
        continue;
      }
      break;
    }
    // Poll the jobs not finished.
    for (auto& [key, es] : state.entries) {
      if (es.job_id.empty() || batch::Finished(es.state)) continue;
      auto job = conn.Get(es.job_id);
      if (job.ok()) {
        last_ok = NowMs();
        std::string before = es.state;
        int tried = es.tried;
        batch::UpdateFromJob(*job, &es);
        changed |= before != es.state || tried != es.tried;
      } else if (job.status().code() == absl::StatusCode::kNotFound) {
        es.state = "failed";
        es.error = "job " + es.job_id + " is not on server " + addr;
        changed = true;
      } else {
        unreachable = true;
        break;
      }
    }
    if (changed) {
      if (auto st = save(); !st.ok()) return BatchFail(st);
    }
    Counts c = Count(*manifest, state);
    std::string line = ProgressLine(*manifest, c, NowMs() - start);
    if (unreachable) absl::StrAppend(&line, "; server unreachable, retrying");
    if (!json && line != last_line) {
      if (tty) {
        std::fprintf(stderr, "\r\033[K%s", line.c_str());
      } else if (changed || unreachable || last_line.empty()) {
        std::fprintf(stderr, "%s\n", line.c_str());
      }
      last_line = line;
    }
    bool all_submitted = c.pending == 0;
    bool all_done = all_submitted && c.queued == 0 && c.running == 0;
    if (all_done || (!wait && all_submitted)) break;
    if (unreachable && NowMs() - last_ok > reconnect_s * 1000) {
      if (tty) std::fprintf(stderr, "\n");
      return BatchFail(absl::UnavailableError(absl::StrCat(
          "cannot reach argus-server at ", addr, " for ", reconnect_s, "s; the batch state is in ",
          state_path, ": run `argus batch ", file, " --resume` to continue")));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(std::max<int64_t>(poll_ms, 50)));
  }
  if (tty) std::fprintf(stderr, "\n");
  // The dispatch table names the stored image of each best kernel (what
  // `argus export` writes), where the store has one.
  bool found = false;
  for (const auto& e : manifest->entries) {
    EntryState& es = state.entries[e.key];
    if (es.state != "succeeded" || es.best_candidate.empty() || !es.artifact.empty()) continue;
    auto art = conn.BestArtifact(es.job_id, es.best_candidate, e.target);
    if (art.ok() && art->has_value()) {
      es.artifact = (*art)->id();
      found = true;
    }
  }
  if (found) {
    if (auto st = save(); !st.ok()) return BatchFail(st);
  }

  std::error_code ec;
  std::filesystem::create_directories(out_dir, ec);
  if (ec) return BatchFail(absl::InternalError("cannot create " + out_dir + ": " + ec.message()));
  auto results = batch::ResultsJson(*manifest, state);
  for (auto [name, text] :
       {std::pair<std::string, std::string>{"results.csv", batch::ResultsCsv(*manifest, state)},
        {"results.json", Dump(results)},
        {"dispatch.json", Dump(batch::DispatchTable(*manifest, state))}}) {
    if (auto st = WriteFile(out_dir + "/" + name, text); !st.ok()) return BatchFail(st);
  }
  Counts c = Count(*manifest, state);
  if (json) {
    results["files"] = {{"results_csv", out_dir + "/results.csv"},
                        {"results_json", out_dir + "/results.json"},
                        {"dispatch", out_dir + "/dispatch.json"},
                        {"state", state_path}};
    std::cout << Dump(results);
  } else {
    std::printf("%-28s %-10s %-20s %-10s %s\n", "entry", "state", "job", "best", "error");
    for (const auto& e : manifest->entries) {
      const EntryState& es = state.entries[e.key];
      std::printf("%-28s %-10s %-20s %-10s %s\n", e.key.c_str(), es.state.c_str(),
                  es.job_id.empty() ? "-" : es.job_id.c_str(),
                  es.best_speedup > 0 ? absl::StrFormat("%.3fx", es.best_speedup).c_str() : "-",
                  es.error.c_str());
    }
    std::printf("\nresults: %s/results.csv, %s/results.json; dispatch table: %s/dispatch.json\n",
                out_dir.c_str(), out_dir.c_str(), out_dir.c_str());
  }
  if (!wait && (c.queued || c.running)) return kExitOk;
  return c.failed == 0 && c.refused == 0 ? kExitOk : kExitJobFailed;
}

const bool kRegistered = [] {
  RegisterVerb({"batch", "tune (or probe) every problem of a manifest; --resume continues", Batch});
  return true;
}();

}  // namespace
}  // namespace argus::cli
