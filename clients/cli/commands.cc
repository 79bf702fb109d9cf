#include "clients/cli/commands.h"

#include <google/protobuf/util/json_util.h>
#include <unistd.h>

#include <cstdio>
#include <exception>
#include <iostream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "base/flags.h"
#include "base/logging.h"
#include "base/suggest.h"
#include "base/version.h"
#include "clients/cli/connection.h"
#include "clients/cli/embedded.h"
#include "clients/cli/exit_codes.h"
#include "clients/cli/progress.h"
#include "clients/cli/verb_flags.h"
#include "nlohmann/json.hpp"

namespace argus::cli {
namespace {

// Flags every verb here takes: the shared ones (verb_flags.h) plus the
// token/TLS files and, where the verb can start it, the embedded store.
struct Globals : VerbFlags {
  std::string db;          // embedded store; default under EmbeddedStateDir()
  worker::DialFiles dial;  // token and TLS files

  void Declare(FlagSet& f, bool embedded_ok) {
    VerbFlags::Declare(f);
    f.String("token_file", &dial.token_file, "file with the client token (default: $ARGUS_TOKEN)");
    f.String("tls_ca", &dial.tls_ca, "PEM CA of the server certificate (turns on TLS)");
    f.String("tls_cert", &dial.tls_cert, "PEM client certificate, for mTLS");
    f.String("tls_key", &dial.tls_key, "PEM private key of --tls_cert");
    if (embedded_ok) {
      f.String("db", &db, "store of the embedded server used without --server");
    }
  }
};

int Usage(const std::string& verb, const std::string& msg) {
  std::cerr << "argus " << verb << ": " << msg << " (see argus " << verb << " --help)\n";
  return kExitUsage;
}

std::string ToJson(const google::protobuf::Message& m) {
  std::string out;
  google::protobuf::util::JsonPrintOptions opt;
  opt.add_whitespace = true;
  opt.preserve_proto_field_names = true;
  (void)google::protobuf::util::MessageToJsonString(m, &out, opt);
  return out;
}

std::string StateName(v1::JobState s) {
  std::string n = v1::JobState_Name(s);
  return n.substr(std::string("JOB_STATE_").size());
}

int JobExit(const v1::Job& job) {
  return job.state() == v1::JOB_STATE_SUCCEEDED ? kExitOk : kExitJobFailed;
}

// Parses a verb's flags; returns -1 to continue, else an exit code.
int ParseVerb(FlagSet& flags, const std::string& verb, const std::vector<std::string>& args,
              Globals& g, std::vector<std::string>* positional) {
  auto pos = flags.Parse(args);
  if (!pos.ok()) {
    std::cerr << pos.status().message() << "\n";
    return kExitUsage;
  }
  if (flags.help_requested()) {
    std::cout << flags.Help();
    return kExitOk;
  }
  if (auto st = InitLogging("argus", g.log_level); !st.ok())
    return Usage(verb, std::string(st.message()));
  *positional = *pos;
  return -1;
}

// A connection to --server / $ARGUS_SERVER, else to the embedded store (read
// only), else an error.
absl::StatusOr<std::unique_ptr<Connection>> Connect(const Globals& g) {
  return ConnectOrOpenEmbeddedStore(g.server, g.dial);
}

void PrintJob(const v1::Job& job) {
  std::printf("job %s  %s  kind %s\n", job.id().c_str(), StateName(job.state()).c_str(),
              v1::JobKind_Name(job.spec().kind()).substr(9).c_str());
  if (!job.error().empty()) std::printf("  error: %s\n", job.error().c_str());
  for (const auto& t : job.tasks()) {
    std::printf("  task %s  %-9s worker %s  attempts %d\n", t.id().c_str(), t.state().c_str(),
                t.worker_id().empty() ? "-" : t.worker_id().c_str(), t.attempts());
  }
}

// The body of the verbs that make one call and print its answer: connect to
// the server, call with a fresh context, print the answer as JSON (--json)
// or with `print`. `what` names the call in errors ("job ID", "workers").
template <typename Resp>
int CallAndPrint(
    const std::string& verb, const Globals& g, const std::string& what,
    const std::function<grpc::Status(v1::JobService::Stub*, grpc::ClientContext*, Resp*)>& call,
    const std::function<void(const Resp&)>& print) {
  auto conn = Connect(g);
  if (!conn.ok()) return VerbFail(verb, conn.status());
  Resp resp;
  auto ctx = (*conn)->Context();
  grpc::Status st = call((*conn)->jobs(), ctx.get(), &resp);
  if (!st.ok()) return VerbFail(verb, (*conn)->Failed(what, st));
  if (g.json) {
    std::cout << ToJson(resp);
  } else {
    print(resp);
  }
  return kExitOk;
}

void PrintProbe(const v1::Job& job) {
  PrintJob(job);
  auto result = nlohmann::json::parse(job.result_json(), nullptr, false);
  if (result.is_discarded() || !result.contains("tasks")) return;
  for (const auto& t : result["tasks"]) {
    std::printf("\nworker %s (%s)\n", t.value("worker_id", "").c_str(),
                t.value("state", "").c_str());
    if (!t.contains("result")) continue;
    const auto& inv = t["result"];
    std::printf("  host %s, %s\n", inv.value("hostname", "?").c_str(),
                inv.value("workerVersion", "").c_str());
    if (inv.contains("devices")) {
      for (const auto& d : inv["devices"]) {
        std::printf("  device %-6s #%d  %-8s %s", d.value("backend", "").c_str(),
                    d.value("index", 0), d.value("arch", "").c_str(), d.value("name", "").c_str());
        if (d.contains("memoryBytes")) {
          double gib = std::stod(d["memoryBytes"].get<std::string>()) / (1 << 30);
          std::printf("  %.1f GiB", gib);
        }
        std::printf("\n");
      }
    }
    if (inv.contains("runtimes")) {
      for (auto& [name, status] : inv["runtimes"].items()) {
        std::printf("  runtime %s: %s\n", name.c_str(), status.get<std::string>().c_str());
      }
    }
  }
}

int SubmitAndWatch(const std::string& verb, Connection& conn, const v1::JobSpec& spec,
                   const Globals& g, bool wait, const std::function<void(const v1::Job&)>& print) {
  auto job = conn.Submit(spec);
  if (!job.ok()) return VerbFail(verb, job.status());
  if (!wait) {
    if (g.json) {
      std::cout << ToJson(*job);
    } else {
      std::printf("%s\n", job->id().c_str());
    }
    return kExitOk;
  }
  Progress progress(g.json);
  auto done = conn.Watch(job->id(), [&](const v1::JobEvent& ev) { progress.Update(ev); });
  progress.Done();
  if (!done.ok()) return VerbFail(verb, done.status());
  if (g.json) {
    std::cout << ToJson(*done);
  } else {
    print(*done);
  }
  return JobExit(*done);
}

int Probe(const std::string& verb, const std::vector<std::string>& args) {
  Globals g;
  int64_t count = 0, timeout_s = 120;
  FlagSet flags("argus probe",
                "[--server HOST:PORT] [--count N]\n\n"
                "Runs a probe job on every connected worker and prints each one's inventory\n"
                "(GPU runtimes found, devices, archs, memory). Without --server (and no\n"
                "$ARGUS_SERVER) it starts an embedded server and a local worker.\n\n"
                "example: argus probe --server 127.0.0.1:7070");
  g.Declare(flags, true);
  flags.Int("count", &count, "how many distinct workers to probe (0: all connected)");
  flags.Int("timeout_s", &timeout_s, "fail the job if not done by then");
  std::vector<std::string> pos;
  if (int rc = ParseVerb(flags, verb, args, g, &pos); rc >= 0) return rc;
  if (!pos.empty()) return Usage(verb, "unexpected argument '" + pos[0] + "'");
  v1::JobSpec spec;
  spec.set_kind(v1::JOB_KIND_PROBE);
  spec.set_probe_workers(static_cast<int32_t>(count));
  spec.set_deadline_ms(timeout_s * 1000);
  spec.set_client(std::getenv("USER") ? std::getenv("USER") : "cli");
  std::unique_ptr<Embedded> embedded;
  std::string addr = ResolveServerAddress(g.server);
  if (addr.empty()) {
    std::string db = g.db;
    if (db.empty()) {
      auto path = EmbeddedStorePath();
      if (!path.ok()) return VerbFail(verb, path.status());
      db = *path;
    }
    embedded = std::make_unique<Embedded>();
    auto started = embedded->Start(db);
    if (!started.ok()) return VerbFail(verb, started.status());
    if (!g.json)
      std::fprintf(stderr, "embedded server at %s (store %s)\n", started->c_str(), db.c_str());
    addr = *started;
  }
  worker::DialOptions dial;
  if (!embedded) {
    auto resolved = ResolveDialOptions(g.dial);
    if (!resolved.ok()) return VerbFail(verb, resolved.status());
    dial = *resolved;
  }
  Connection conn(addr, dial);
  return SubmitAndWatch(verb, conn, spec, g, true, PrintProbe);
}

int Submit(const std::string& verb, const std::vector<std::string>& args) {
  Globals g;
  std::string kind = "probe";
  int64_t count = 0;
  bool wait = false;
  FlagSet flags("argus submit",
                "--kind probe [--count N] [--wait]\n\n"
                "Submits a job and prints its id (or waits for it with --wait).\n\n"
                "example: argus submit --server 127.0.0.1:7070 --kind probe --wait");
  g.Declare(flags, false);
  flags.String("kind", &kind, "job kind: probe or tune");
  flags.Int("count", &count, "probe: how many distinct workers (0: all connected)");
  flags.Bool("wait", &wait, "watch the job until it ends");
  std::vector<std::string> pos;
  if (int rc = ParseVerb(flags, verb, args, g, &pos); rc >= 0) return rc;
  if (!pos.empty()) return Usage(verb, "unexpected argument '" + pos[0] + "'");
  v1::JobSpec spec;
  if (kind == "probe") {
    spec.set_kind(v1::JOB_KIND_PROBE);
  } else if (kind == "tune") {
    spec.set_kind(v1::JOB_KIND_TUNE);
  } else {
    return Usage(verb, "--kind: unknown job kind '" + kind + "' (probe, tune)");
  }
  spec.set_probe_workers(static_cast<int32_t>(count));
  spec.set_client(std::getenv("USER") ? std::getenv("USER") : "cli");
  auto conn = Connect(g);
  if (!conn.ok()) return VerbFail(verb, conn.status());
  return SubmitAndWatch(verb, **conn, spec, g, wait, PrintJob);
}

int Status(const std::string& verb, const std::vector<std::string>& args) {
  Globals g;
  FlagSet flags(
      "argus status",
      "JOB\n\nPrints a job's state and tasks.\n\nexample: argus status j-0123456789abcdef");
  g.Declare(flags, false);
  std::vector<std::string> pos;
  if (int rc = ParseVerb(flags, verb, args, g, &pos); rc >= 0) return rc;
  if (pos.size() != 1) return Usage(verb, "expected one job id");
  v1::GetJobRequest req;
  req.set_id(pos[0]);
  return CallAndPrint<v1::Job>(
      verb, g, "job " + pos[0],
      [&](auto* stub, auto* ctx, v1::Job* job) { return stub->GetJob(ctx, req, job); }, PrintJob);
}

int Watch(const std::string& verb, const std::vector<std::string>& args) {
  Globals g;
  FlagSet flags("argus watch",
                "JOB\n\nFollows a job live until it ends; reconnects if the server restarts.\n"
                "Exit code 0 if it succeeded, 1 if it failed or was cancelled.\n\n"
                "example: argus watch j-0123456789abcdef");
  g.Declare(flags, false);
  std::vector<std::string> pos;
  if (int rc = ParseVerb(flags, verb, args, g, &pos); rc >= 0) return rc;
  if (pos.size() != 1) return Usage(verb, "expected one job id");
  auto conn = Connect(g);
  if (!conn.ok()) return VerbFail(verb, conn.status());
  Progress progress(g.json);
  auto job = (*conn)->Watch(pos[0], [&](const v1::JobEvent& ev) {
    if (g.json) {
      std::string line;
      (void)google::protobuf::util::MessageToJsonString(ev, &line);
      std::cout << line << "\n" << std::flush;
    } else {
      progress.Update(ev);
    }
  });
  progress.Done();
  if (!job.ok()) return VerbFail(verb, job.status());
  if (!g.json) PrintJob(*job);
  return JobExit(*job);
}

// One line of `argus list`: id, state, kind, the problem (family, shape,
// dtype, target), its age, and the error of a failed job.
std::string JobRow(const v1::Job& j) {
  std::string problem;
  if (j.spec().kind() == v1::JOB_KIND_TUNE) {
    const auto& p = j.spec().problem();
    std::vector<std::string> dims;
    for (const auto& [k, v] : std::map<std::string, int64_t>(p.shape().begin(), p.shape().end()))
      dims.push_back(absl::StrCat(k, "=", v));
    problem = absl::StrCat(p.family(), " ", absl::StrJoin(dims, ","), " ", p.dtype(), " on ",
                           j.spec().target());
  }
  int64_t age_s =
      std::max<int64_t>(0, (absl::ToUnixMillis(absl::Now()) - j.created_unix_ms()) / 1000);
  std::string age = age_s < 120    ? absl::StrCat(age_s, "s")
                    : age_s < 7200 ? absl::StrCat(age_s / 60, "m")
                                   : absl::StrCat(age_s / 3600, "h");
  return absl::StrFormat("%s  %-10s %-6s %5s ago  %s%s", j.id(), StateName(j.state()),
                         v1::JobKind_Name(j.spec().kind()).substr(9), age, problem,
                         j.error().empty() ? "" : "  " + j.error());
}

int List(const std::string& verb, const std::vector<std::string>& args) {
  Globals g;
  int64_t limit = 50;
  std::string state;
  FlagSet flags("argus list",
                "[--state S] [--limit N]\n\nLists jobs, newest first.\n\nexample: argus list "
                "--state running");
  g.Declare(flags, false);
  flags.Int("limit", &limit, "at most this many jobs");
  flags.String("state", &state,
               "only jobs in this state (queued, running, succeeded, failed, cancelled)");
  std::vector<std::string> pos;
  if (int rc = ParseVerb(flags, verb, args, g, &pos); rc >= 0) return rc;
  if (!pos.empty()) return Usage(verb, "unexpected argument '" + pos[0] + "'");
  if (limit < 1 || limit > 1'000'000) return Usage(verb, "--limit: must be in [1, 1000000]");
  v1::ListJobsRequest req;
  req.set_limit(static_cast<int32_t>(limit));
  if (!state.empty()) {
    std::string upper = "JOB_STATE_";
    for (char c : state) upper += static_cast<char>(std::toupper(c));
    v1::JobState s;
    if (!v1::JobState_Parse(upper, &s))
      return Usage(verb, "--state: unknown state '" + state + "'");
    req.set_state(s);
  }
  return CallAndPrint<v1::ListJobsResponse>(
      verb, g, "list",
      [&](auto* stub, auto* ctx, v1::ListJobsResponse* resp) {
        // The server pages its answer (a page ends early rather than grow
        // past the message budget): follow the pages up to --limit.
        while (true) {
          v1::ListJobsResponse page;
          req.set_limit(static_cast<int32_t>(limit - resp->jobs_size()));
          grpc::ClientContext page_ctx;  // a context serves one call
          page_ctx.set_deadline(ctx->deadline());
          grpc::Status st = stub->ListJobs(&page_ctx, req, &page);
          if (!st.ok()) return st;
          for (auto& j : *page.mutable_jobs()) *resp->add_jobs() = std::move(j);
          if (page.next_page_token().empty() || resp->jobs_size() >= limit) return st;
          req.set_page_token(page.next_page_token());
        }
      },
      [](const v1::ListJobsResponse& resp) {
        for (const auto& j : resp.jobs()) std::printf("%s\n", JobRow(j).c_str());
      });
}

int Cancel(const std::string& verb, const std::vector<std::string>& args) {
  Globals g;
  FlagSet flags(
      "argus cancel",
      "JOB\n\nCancels a job; its leases are revoked.\n\nexample: argus cancel j-0123456789abcdef");
  g.Declare(flags, false);
  std::vector<std::string> pos;
  if (int rc = ParseVerb(flags, verb, args, g, &pos); rc >= 0) return rc;
  if (pos.size() != 1) return Usage(verb, "expected one job id");
  v1::CancelJobRequest req;
  req.set_id(pos[0]);
  return CallAndPrint<v1::Job>(
      verb, g, "job " + pos[0],
      [&](auto* stub, auto* ctx, v1::Job* job) { return stub->CancelJob(ctx, req, job); },
      PrintJob);
}

int Workers(const std::string& verb, const std::vector<std::string>& args) {
  Globals g;
  FlagSet flags("argus workers",
                "\n\nLists registered workers, alive or not.\n\nexample: argus workers --json");
  g.Declare(flags, false);
  std::vector<std::string> pos;
  if (int rc = ParseVerb(flags, verb, args, g, &pos); rc >= 0) return rc;
  if (!pos.empty()) return Usage(verb, "unexpected argument '" + pos[0] + "'");
  return CallAndPrint<v1::ListWorkersResponse>(
      verb, g, "workers",
      [](auto* stub, auto* ctx, v1::ListWorkersResponse* resp) {
        return stub->ListWorkers(ctx, v1::ListWorkersRequest(), resp);
      },
      [](const v1::ListWorkersResponse& resp) {
        for (const auto& w : resp.workers()) {
          std::string archs;
          for (const auto& d : w.inventory().devices())
            absl::StrAppend(&archs, archs.empty() ? "" : ",", d.arch());
          std::printf("%s  %-5s host %-12s archs %-16s leases %d\n", w.id().c_str(),
                      w.alive() ? "alive" : "dead", w.inventory().hostname().c_str(), archs.c_str(),
                      w.leased_tasks());
        }
      });
}

std::vector<Verb>& MutableVerbs() {
  static std::vector<Verb> verbs = {
      {"probe", "run a probe on every worker and print their inventories", Probe},
      {"submit", "submit a job", Submit},
      {"status", "show a job", Status},
      {"watch", "follow a job live until it ends", Watch},
      {"list", "list jobs", List},
      {"cancel", "cancel a job", Cancel},
      {"workers", "list workers", Workers},
  };
  return verbs;
}

}  // namespace

const std::vector<Verb>& Verbs() { return MutableVerbs(); }
void RegisterVerb(Verb verb) { MutableVerbs().push_back(std::move(verb)); }

int Main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  auto help = [] {
    std::printf(
        "usage: argus VERB [flags]   (argus VERB --help for each; argus --version)\n\nverbs:\n");
    for (const auto& v : Verbs()) std::printf("  %-10s %s\n", v.name.c_str(), v.summary.c_str());
    std::printf(
        "\nexit codes: 0 ok, 1 job failed, 2 usage, 3 server unreachable, 4 not found,\n"
        "            5 server error\n");
  };
  if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    help();
    return args.empty() ? kExitUsage : kExitOk;
  }
  if (args[0] == "--version" || args[0] == "version") {
    std::printf("argus %s\n", kArgusVersion);
    return kExitOk;
  }
  std::vector<std::string> names;
  for (const auto& v : Verbs()) {
    if (v.name != args[0]) {
      names.push_back(v.name);
      continue;
    }
    // A server's reply of an unexpected shape (a number where a string
    // belongs in a result's JSON) ends the command with an error, not an
    // abort: whatever the verb saved before stays saved.
    try {
      return v.run(v.name, {args.begin() + 1, args.end()});
    } catch (const std::exception& e) {
      std::fprintf(stderr, "argus %s: unexpected data from the server: %s\n", v.name.c_str(),
                   e.what());
      return kExitServerError;
    }
  }
  std::string hint = DidYouMean(args[0], names);
  std::fprintf(stderr, "argus: unknown verb '%s'%s\n", args[0].c_str(),
               hint.empty() ? " (see argus --help)" : hint.c_str());
  return kExitUsage;
}

}  // namespace argus::cli
