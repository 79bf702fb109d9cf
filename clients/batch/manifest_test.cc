#include "clients/batch/manifest.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>

namespace argus::batch {
namespace {

const char* kYaml = R"(name: llama-7b
defaults:
  kind: tune
  dtype: bf16
  targets: [sm_90a, gfx942]
  max_candidates: 16
problems:
  - name: qkv
    family: gemm
    shape: {M: 4096, N: 12288, K: 4096}
  - name: down
    family: gemm
    shape:
      M: 4096
      N: 4096
      K: 11008
    targets: sm_90a
  - name: fleet
    kind: probe
)";

std::string Err(const std::string& text, const std::string& file = "b.yaml") {
  auto m = ParseManifest(text, file);
  REQUIRE(!m.ok());
  return std::string(m.status().message());
}

TEST_CASE("manifest: problems times targets, defaults, probes") {
  auto m = ParseManifest(kYaml, "b.yaml");
  REQUIRE(m.ok());
  CHECK(m->name == "llama-7b");
  REQUIRE(m->entries.size() == 4);
  CHECK(m->entries[0].key == "qkv@sm_90a");
  CHECK(m->entries[1].key == "qkv@gfx942");
  CHECK(m->entries[1].spec.target() == "gfx942");
  CHECK(m->entries[1].spec.max_candidates() == 16);
  CHECK(m->entries[1].spec.problem().dtype() == "bf16");
  CHECK(m->entries[2].key == "down@sm_90a");
  CHECK(m->entries[2].spec.problem().shape().at("K") == 11008);
  CHECK(ShapeText(m->entries[2].spec.problem()) == "M=4096 N=4096 K=11008");
  CHECK(m->entries[3].key == "fleet");
  CHECK(m->entries[3].spec.kind() == v1::JOB_KIND_PROBE);
  CHECK(m->entries[3].line == 18);
}

TEST_CASE("manifest: the same in JSON") {
  auto m = ParseManifest(R"({"problems": [{"name": "p", "kind": "probe", "workers": 1},
    {"name": "g", "family": "gemm", "shape": {"M": 64, "N": 64, "K": 64}, "target": "interp"}]})",
                         "b.json");
  REQUIRE(m.ok());
  REQUIRE(m->entries.size() == 2);
  CHECK(m->entries[0].spec.probe_workers() == 1);
  CHECK(m->entries[1].key == "g@interp");
}

TEST_CASE("manifest: a malformed manifest names the line and field") {
  CHECK(Err("problems:\n  - name: a\n    family: gemm\n    shape: {M: x}\n") ==
        "b.yaml:4: problems[0].shape.M: expected an integer, got 'x'");
  CHECK(Err("problems:\n  - name: a\n    family: gemm\n    shap: {M: 1}\n")
            .rfind("b.yaml:4: problems[0].shap: unknown field", 0) == 0);
  CHECK(Err("problems:\n  - name: a\n    family: gemm\n    targets: [sm_90a, sm_80]\n") ==
        "b.yaml:4: problems[0].targets: unknown target 'sm_80' (auto, sm_90a, gfx942, interp)");
  CHECK(Err("problems:\n  - name: a\n    shape: {M: 1}\n") ==
        "b.yaml:2: problems[0].family: missing (a tune problem needs a family, e.g. gemm)");
  CHECK(Err("problems:\n  - name: a\n    kind: probe\n  - name: a\n    kind: probe\n") ==
        "b.yaml:4: problems[1].name: duplicate name 'a'");
  CHECK(Err("problems:\n  - family: gemm\n") ==
        "b.yaml:2: problems[0].name: missing (every problem needs a unique name)");
  CHECK(Err("problems: 3\n") == "b.yaml:1: problems: expected a list, got a scalar");
  CHECK(Err("name: x\n") == "b.yaml:1: problems: missing (a list of problems)");
  CHECK(Err("problems:\n  - name: a\n    kind: probe\n    workers: -1\n") ==
        "b.yaml:4: problems[0].workers: must be at least 0, got -1");
  CHECK(Err("defaults:\n  max_candidates: \"5\"\nproblems: []\n") ==
        "b.yaml:2: defaults.max_candidates: expected an integer, got '5'");
  CHECK(Err("{\"problems\": [{\"name\": \"a\", \"kind\": 7}]}", "b.json") ==
        "b.json:1: problems[0].kind: expected probe or tune, got '7'");
  CHECK(Err("{\"problems\": [\n  {\"name\": 1,}]}", "b.json").rfind("b.json:2:", 0) == 0);
}

TEST_CASE("manifest: state file round trip, results and dispatch tables") {
  auto m = ParseManifest(kYaml, "b.yaml");
  REQUIRE(m.ok());
  std::string path = (std::filesystem::temp_directory_path() /
                      ("argus-batch-state-" + std::to_string(getpid()) + ".json"))
                         .string();
  BatchState s;
  s.manifest = "b.yaml";
  s.server = "127.0.0.1:1";
  v1::Job job;
  job.set_id("j-1");
  job.set_state(v1::JOB_STATE_SUCCEEDED);
  job.set_result_json(
      R"({"best": {"candidate_id": "c-7", "speedup": 1.25, "artifact": "a/c-7.ptx"}})");
  EntryState es;
  es.key = "qkv@sm_90a";
  es.job_id = "j-1";
  UpdateFromJob(job, &es);
  CHECK(es.state == "succeeded");
  CHECK(es.best_speedup == 1.25);
  {
    // The planner's key is "ratio".
    v1::Job planned = job;
    planned.set_result_json(R"({"tried": 5, "best": {"candidate_id": "c-8", "ratio": 2.5}})");
    EntryState other;
    UpdateFromJob(planned, &other);
    CHECK(other.best_speedup == 2.5);
    CHECK(other.best_candidate == "c-8");
    CHECK(other.tried == 5);
  }
  s.entries[es.key] = es;
  s.entries["fleet"] = {"fleet", "j-2", "refused", "no worker, with \"quotes\", commas",
                        0,       "",    "",        5};
  REQUIRE(SaveState(path, s).ok());
  auto back = LoadState(path);
  REQUIRE(back.ok());
  std::filesystem::remove(path);
  CHECK(back->entries.size() == 2);
  CHECK(back->entries["qkv@sm_90a"].best_candidate == "c-7");
  CHECK(back->entries["fleet"].submitted_unix_ms == 5);

  std::string csv = ResultsCsv(*m, *back);
  CHECK(
      csv.find(
          "qkv,sm_90a,tune,gemm,M=4096 N=12288 K=4096,bf16,j-1,succeeded,1.25,c-7,a/c-7.ptx,\n") !=
      std::string::npos);
  CHECK(csv.find("qkv,gfx942,tune,gemm,M=4096 N=12288 K=4096,bf16,,pending") != std::string::npos);
  CHECK(csv.find("\"no worker, with \"\"quotes\"\", commas\"") != std::string::npos);
  auto results = ResultsJson(*m, *back);
  CHECK(results["results"].size() == 4);
  auto dispatch = DispatchTable(*m, *back);
  REQUIRE(dispatch["entries"].size() == 1);
  CHECK(dispatch["entries"][0]["kernel"] == "c-7");
  CHECK(dispatch["entries"][0]["shape"]["N"] == 12288);
  CHECK(!LoadState(path).ok());
}

}  // namespace
}  // namespace argus::batch
