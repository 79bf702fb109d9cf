// The main job end to end over real processes: `argus tune` against an
// argus-server whose planner gates candidates with a separate argus-verifier,
// and a separate `argus-worker --backend interp` that runs them from the one
// candidate payload (gpu_worker/candidate_schema.h) — no planner code in the
// worker.
#include <sqlite3.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "nlohmann/json.hpp"
#include "tests/e2e/harness.h"

namespace argus::e2e {
namespace {

using nlohmann::json;

// Rows of `sql` (first column, as text) in the store at `db`.
std::vector<std::string> Column(const std::string& db, const std::string& sql) {
  sqlite3* h = nullptr;
  std::vector<std::string> out;
  if (sqlite3_open_v2(db.c_str(), &h, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) return out;
  sqlite3_busy_timeout(h, 5000);
  sqlite3_stmt* st = nullptr;
  if (sqlite3_prepare_v2(h, sql.c_str(), -1, &st, nullptr) == SQLITE_OK) {
    while (sqlite3_step(st) == SQLITE_ROW) {
      const unsigned char* t = sqlite3_column_text(st, 0);
      out.push_back(t ? reinterpret_cast<const char*>(t) : "");
    }
  }
  sqlite3_finalize(st);
  sqlite3_close(h);
  return out;
}

// Replaces the result of job `id` in the store at `db` (as the planner would
// have written it); false on an SQLite error.
bool SetResult(const std::string& db, const std::string& id, const std::string& result_json) {
  sqlite3* h = nullptr;
  if (sqlite3_open(db.c_str(), &h) != SQLITE_OK) return false;
  sqlite3_busy_timeout(h, 5000);
  sqlite3_stmt* st = nullptr;
  bool ok = sqlite3_prepare_v2(h, "UPDATE jobs SET result_json = ? WHERE id = ?", -1, &st,
                               nullptr) == SQLITE_OK &&
            sqlite3_bind_text(st, 1, result_json.c_str(), -1, SQLITE_TRANSIENT) == SQLITE_OK &&
            sqlite3_bind_text(st, 2, id.c_str(), -1, SQLITE_TRANSIENT) == SQLITE_OK &&
            sqlite3_step(st) == SQLITE_DONE && sqlite3_changes(h) == 1;
  sqlite3_finalize(st);
  sqlite3_close(h);
  return ok;
}

// `argus tune` of a small GEMM on the interpreter with the CLI's embedded
// store in h.dir(); the job's id.
std::string TuneWithoutServer(Harness& h, int max_candidates) {
  h.cli_env = {"ARGUS_HOME=" + h.dir()};
  ProcessResult r = h.Cli({"tune", "gemm", "--shape", "64x64x64", "--dtype", "f32", "--target",
                           "interp", "--max_candidates", std::to_string(max_candidates)},
                          240);
  INFO("tune stdout:\n" << r.stdout_text << "\nstderr:\n" << r.stderr_text);
  REQUIRE(r.exit_code == 0);
  auto jobs = Column(h.db(), "SELECT id FROM jobs");
  REQUIRE(jobs.size() == 1);
  return jobs[0];
}

std::string ReadText(const std::string& path) {
  std::ifstream f(path);
  std::stringstream text;
  text << f.rdbuf();
  return text.str();
}

// Writes `result` as job `job`'s, exports it to `out` and returns its
// metadata.json (the export must succeed).
json ExportResult(Harness& h, const std::string& job, const json& result, const std::string& out) {
  REQUIRE(SetResult(h.db(), job, result.dump()));
  ProcessResult x = h.Cli({"export", job, "-o", out});
  INFO("export: " << x.stdout_text << x.stderr_text);
  REQUIRE(x.exit_code == 0);
  return json::parse(std::ifstream(out + "/metadata.json"), nullptr, false);
}

// Whether the exported Python snippet in `dir` parses.
bool SnippetParses(const std::string& dir) {
  return std::system(("/usr/bin/python3 -c 'import ast,sys; ast.parse(open(sys.argv[1]).read())' " +
                      dir + "/launch_torch.py")
                         .c_str()) == 0;
}

// Whether a program whose main() is `body`, using the exported header in
// `dir`, compiles against the CUDA driver API header (true where the toolkit
// is not installed).
bool HeaderCompiles(const std::string& dir, const std::string& body) {
  if (!std::filesystem::exists("/usr/local/cuda/include/cuda.h")) return true;
  std::ofstream(dir + "/use.cc") << "#include \"argus_kernel.h\"\nint main() { " << body << " }\n";
  return std::system(("c++ -std=c++17 -fsyntax-only -Wall -Werror -I/usr/local/cuda/include " +
                      dir + "/use.cc")
                         .c_str()) == 0;
}

TEST_CASE("argus tune: server + argus-verifier + argus-worker --backend interp finish a GEMM",
          "[e2e][tune]") {
  Harness h;
  std::string verifier = h.StartVerifier();
  h.StartServer({"--heartbeat_ms", "200", "--lease_ms", "5000", "--verifier", verifier});
  h.StartWorker({"--backend", "interp", "--verifier", verifier});
  ProcessResult r = h.Cli({"tune", "gemm", "--shape", "64x64x64", "--dtype", "f32", "--target",
                           "interp", "--max_candidates", "4"},
                          240);
  INFO("stdout:\n"
       << r.stdout_text << "\nstderr:\n"
       << r.stderr_text << "\nserver:\n"
       << h.ServerLog() << "\nworker:\n"
       << h.Log("worker-0.log"));
  REQUIRE(r.exit_code == 0);
  CHECK(r.stdout_text.find("speed-up over the baseline") != std::string::npos);
  // Every step went through the remote verifier and ran on the separate
  // worker, whose result is the unified schema.
  auto steps = Column(h.db(), "SELECT detail_json FROM trajectory_steps ORDER BY step");
  REQUIRE(steps.size() == 4);
  int measured = 0;
  for (const std::string& s : steps) {
    json d = json::parse(s);
    INFO(d.dump());
    CHECK(d["verifier"]["gate"] == "verifier@" + verifier);
    CHECK(d["verifier"]["passed"] == true);
    if (d["outcome"]["outcome"] != "ok") continue;
    ++measured;
    CHECK(d["outcome"]["backend"] == "interp");
    CHECK(d["outcome"]["unit"] == "interp_instructions");
    CHECK(d["outcome"]["check"]["passed"] == true);  // runner_core's gemm reference
    CHECK(d["outcome"]["speedup"].get<double>() ==
          Approx(d["outcome"]["baseline_time"].get<double>() / d["outcome"]["time"].get<double>()));
  }
  CHECK(measured >= 1);
  // The worker that ran them is the separate process (the server has none).
  auto workers = Column(h.db(), "SELECT DISTINCT worker_id FROM tasks WHERE state = 'done'");
  CHECK(workers.size() == 1);

  // The tuned kernel can be taken away: an interpreter job stored no PTX, so
  // export compiles the best kernel's source for sm_90a itself.
  auto jobs = Column(h.db(), "SELECT id FROM jobs");
  REQUIRE(jobs.size() == 1);
  const std::string out = h.dir() + "/export";
  ProcessResult e = h.Cli({"export", jobs[0], "-o", out});
  INFO(e.stderr_text);
  REQUIRE(e.exit_code == 0);
  std::ifstream ptx(out + "/kernel.ptx");
  std::stringstream text;
  text << ptx.rdbuf();
  CHECK(text.str().find(".target sm_90a") != std::string::npos);
  CHECK(text.str().find(".entry") != std::string::npos);
  json meta = json::parse(std::ifstream(out + "/metadata.json"), nullptr, false);
  CHECK(meta.value("compiled_by", "") == "argus export");
  CHECK(!meta.value("kernel_name", "").empty());
  CHECK(meta["params"].size() >= 3);
}

// The embedded default keeps one store ($ARGUS_HOME/argus.db): after an
// `argus tune` without --server, the read verbs without --server open that
// store read-only, and a change is refused with a reason, not applied.
TEST_CASE("argus tune without a server: list, result and export read its store afterwards",
          "[e2e][tune]") {
  Harness h;  // no server: the CLI runs its embedded one
  const std::vector<std::string> jobs = {TuneWithoutServer(h, 2)};
  ProcessResult list = h.Cli({"list"});
  INFO("list: " << list.stdout_text << list.stderr_text);
  CHECK(list.exit_code == 0);
  CHECK(list.stdout_text.find(jobs[0]) != std::string::npos);
  ProcessResult result = h.Cli({"result", jobs[0]});
  INFO("result: " << result.stdout_text << result.stderr_text);
  CHECK(result.exit_code == 0);
  CHECK(result.stdout_text.find("speed-up") != std::string::npos);
  ProcessResult exported = h.Cli({"export", jobs[0], "-o", h.dir() + "/export"});
  INFO("export: " << exported.stderr_text);
  CHECK(exported.exit_code == 0);
  ProcessResult cancel = h.Cli({"cancel", jobs[0]});
  CHECK(cancel.exit_code != 0);
  CHECK(cancel.stderr_text.find("is open read-only here") != std::string::npos);
  CHECK(h.Cli({"status", jobs[0]}).stdout_text.find("SUCCEEDED") != std::string::npos);
  // Without a store the verbs say how to name a server.
  h.cli_env = {"ARGUS_HOME=" + h.dir() + "/empty"};
  ProcessResult none = h.Cli({"result", jobs[0]});
  CHECK(none.exit_code != 0);
  CHECK(none.stderr_text.find("no server: pass --server") != std::string::npos);
}

// result names what the kernel was tuned for; export --dims re-targets the
// tuned kernel at another shape, verified there first, and refuses a shape
// it does not serve with the verifier's counterexample.
TEST_CASE("argus result shows the problem and constants - export --dims verifies a new shape",
          "[e2e][tune]") {
  Harness h;
  const std::string job = TuneWithoutServer(h, 2);
  ProcessResult result = h.Cli({"result", job});
  INFO("result: " << result.stdout_text << result.stderr_text);
  CHECK(result.stdout_text.find("problem: gemm K=64 M=64 N=64 f32 on interp") != std::string::npos);
  CHECK(result.stdout_text.find("constants: ") != std::string::npos);
  CHECK(result.stdout_text.find("artifact: " + h.dir() + "/artifacts/" + job) != std::string::npos);
  ProcessResult same = h.Cli({"export", job, "-o", h.dir() + "/same"});
  CHECK(same.exit_code == 0);
  CHECK(same.stderr_text.find("ran on the interpreter, at dims K=64 M=64 N=64") !=
        std::string::npos);
  const std::string out = h.dir() + "/big";
  ProcessResult big = h.Cli({"export", job, "-o", out, "--dims", "M=256,N=512", "--dims", "K=128"});
  INFO("export --dims: " << big.stdout_text << big.stderr_text);
  REQUIRE(big.exit_code == 0);
  CHECK(big.stderr_text.find("verified at dims K=128 M=256 N=512") != std::string::npos);
  json meta = json::parse(std::ifstream(out + "/metadata.json"), nullptr, false);
  CHECK(meta["dims"] == json({{"K", 128}, {"M", 256}, {"N", 512}}));
  CHECK(ReadText(out + "/argus_kernel.h").find("[256, 512]") != std::string::npos);
  ProcessResult bad = h.Cli({"export", job, "-o", h.dir() + "/bad", "--dims", "M=x"});
  CHECK(bad.exit_code == 2);
  CHECK(bad.stderr_text.find("--dims M=x: expected NAME=INT") != std::string::npos);
  CHECK(!std::filesystem::exists(h.dir() + "/bad"));
}

// A best kernel that is a pipeline (a KB template with "pipeline", e.g.
// moe_wgmma's six launches): result lists every launch and export writes one
// image per launch, with the scratch tensor between them. The stored result
// is the planner's (planner.cc) for a two-launch source: T = 2 X; Z = T + Y.
TEST_CASE("argus result and export show and write every launch of a pipeline", "[e2e][tune]") {
  Harness h;
  const std::vector<std::string> jobs = {TuneWithoutServer(h, 1)};
  const std::string source = R"(@kernel(threads=64)
def scale2(X: Tensor[f32, "N"], T: Tensor[f32, "N"]):
    grid(cdiv(N, 64))
    i = block_id(0) * 64 + thread_id()
    if i < N:
        T[i] = X[i] * 2.0


@kernel(threads=64)
def addk(T: Tensor[f32, "N"], Y: Tensor[f32, "N"], Z: Tensor[f32, "N"]):
    grid(cdiv(N, 64))
    i = block_id(0) * 64 + thread_id()
    if i < N:
        Z[i] = T[i] + Y[i]
)";
  json result = json::parse(Column(h.db(), "SELECT result_json FROM jobs")[0]);
  json& best = result["best"];
  best["kernel"] = "addk";
  best["source"] = source;
  best["constants"] = json::object();
  best["dims"] = {{"N", 256}};
  best["pipeline"] = {"scale2", "addk"};
  best["check"] = {{"op", "add"}, {"a", "X"}, {"b", "Y"}, {"c", "Z"}};
  REQUIRE(SetResult(h.db(), jobs[0], result.dump()));

  ProcessResult text = h.Cli({"result", jobs[0]});
  INFO("result: " << text.stdout_text << text.stderr_text);
  CHECK(text.exit_code == 0);
  CHECK(text.stdout_text.find("a pipeline of 2 launches") != std::string::npos);
  CHECK(text.stdout_text.find("0  scale2\n") != std::string::npos);
  CHECK(text.stdout_text.find("1  addk\n") != std::string::npos);
  CHECK(text.stdout_text.find("dims: N=256") != std::string::npos);
  json js = h.CliJson({"result", jobs[0], "--json"});
  REQUIRE(js["best"]["launches"].size() == 2);
  CHECK(js["best"]["launches"][0]["kernel"] == "scale2");
  CHECK(js["best"]["launches"][1]["kernel"] == "addk");

  const std::string out = h.dir() + "/export";
  ProcessResult e = h.Cli({"export", jobs[0], "-o", out});
  INFO("export: " << e.stdout_text << e.stderr_text);
  REQUIRE(e.exit_code == 0);
  json meta = json::parse(std::ifstream(out + "/metadata.json"), nullptr, false);
  INFO(meta.dump(2));
  CHECK(meta["pipeline"] == true);
  REQUIRE(meta["launches"].size() == 2);
  const char* kernels[] = {"scale2", "addk"};
  for (int i = 0; i < 2; ++i) {
    const json& l = meta["launches"][i];
    CHECK(l["kernel"] == kernels[i]);
    CHECK(l["grid"] == json({4, 1, 1}));  // cdiv(256, 64) blocks of 64 threads
    CHECK(l["block"] == json({64, 1, 1}));
    std::string ptx = ReadText(out + "/" + l.value("image", ""));
    CHECK(ptx.find(".target sm_90a") != std::string::npos);
    CHECK(ptx.find(std::string(".entry ") + kernels[i]) != std::string::npos);
    CHECK(l["resources"]["registers"].get<int>() > 0);  // ptxas assembled it
  }
  REQUIRE(meta["scratch"].size() == 1);
  CHECK(meta["scratch"][0]["name"] == "T");
  CHECK(meta["scratch"][0]["dtype"] == "f32");
  CHECK(meta["scratch"][0]["shape"] == json({256}));
  CHECK(ReadText(out + "/kernel.py") == source);
  std::string header = ReadText(out + "/argus_kernel.h");
  CHECK(header.find("k0.Launch(4, 1, 1, 64, 1, 1, stream, t.X, t.T,") != std::string::npos);
  CHECK(header.find("k1.Launch(4, 1, 1, 64, 1, 1, stream, t.T, t.Y, t.Z,") != std::string::npos);
  CHECK(header.find("{\"T\", \"f32\", 1024ULL}") != std::string::npos);
  std::string py = ReadText(out + "/launch_torch.py");
  CHECK(py.find("(\"T\", \"f32\", [256])") != std::string::npos);
  CHECK(py.find("(Kernel1, [4,1,1], [64,1,1], [(\"tensor\", \"T\")") != std::string::npos);
  // Both parse: the snippet as Python, the header as C++ against the CUDA
  // driver API header where the toolkit is installed.
  CHECK(SnippetParses(out));
  CHECK(HeaderCompiles(out, "ArgusPipeline p; return sizeof(p) > 0 ? 0 : 1;"));

  // gfx942: one AMDGPU code object per launch, each defining its kernel.
  ProcessResult amd = h.Cli({"export", jobs[0], "-o", h.dir() + "/amd", "--target", "gfx942"});
  INFO("export gfx942: " << amd.stderr_text);
  REQUIRE(amd.exit_code == 0);
  for (int i = 0; i < 2; ++i) {
    std::string hsaco =
        ReadText(h.dir() + "/amd/k" + std::to_string(i) + "_" + kernels[i] + ".hsaco");
    CHECK(hsaco.substr(0, 4) == std::string("\x7f") + "ELF");
    CHECK(hsaco.find(kernels[i]) != std::string::npos);
  }

  // A launch the source lacks, and a launch that does not compile: an error
  // naming the launch, and no directory.
  best["pipeline"] = {"scale2", "absent", "addk"};
  REQUIRE(SetResult(h.db(), jobs[0], result.dump()));
  ProcessResult missing = h.Cli({"export", jobs[0], "-o", h.dir() + "/missing"});
  CHECK(missing.exit_code != 0);
  CHECK(missing.stderr_text.find("pipeline launch 1 (absent)") != std::string::npos);
  CHECK(!std::filesystem::exists(h.dir() + "/missing"));
  best["pipeline"] = {"scale2", "addk"};
  std::string bad = source;
  const std::string last_param = "Z: Tensor[f32, \"N\"]):";
  bad.replace(bad.find(last_param), last_param.size(), "Z: Tensor[f32, \"N\"], s: bf16):");
  best["source"] = bad;
  REQUIRE(SetResult(h.db(), jobs[0], result.dump()));
  ProcessResult broken = h.Cli({"export", jobs[0], "-o", h.dir() + "/broken"});
  INFO(broken.stderr_text);
  CHECK(broken.exit_code != 0);
  CHECK(broken.stderr_text.find("pipeline launch 1 (addk)") != std::string::npos);
  CHECK(broken.stderr_text.find("bf16") != std::string::npos);
  CHECK(!std::filesystem::exists(h.dir() + "/broken"));
  best.erase("source");
  REQUIRE(SetResult(h.db(), jobs[0], result.dump()));
  ProcessResult no_source = h.Cli({"export", jobs[0], "-o", h.dir() + "/no_source"});
  CHECK(no_source.exit_code == 4);
  CHECK(no_source.stderr_text.find("a pipeline of 2 launches but the result has no source") !=
        std::string::npos);
}

// The KB's own pipeline, moe_wgmma (six launches; the grouped GEMMs take TMA
// tensor maps of scratch and weight tensors), instantiated as the planner
// does for T=256 D=256 F=512 E=8 TOPK=2: every launch is compiled, the
// launcher encodes the tensor maps and allows the GEMMs' shared memory.
TEST_CASE("argus export writes the six launches of moe_wgmma", "[e2e][tune]") {
  Harness h;
  const std::string job = TuneWithoutServer(h, 1);
  std::string source = ReadText(std::string(ARGUS_SOURCE_DIR) + "/kb/templates/moe_wgmma.py");
  for (size_t at; (at = source.find("${dtype}")) != std::string::npos;)
    source.replace(at, 8, "bf16");
  const int64_t t = 256, d = 256, f = 512, e = 8, topk = 2, mt = (t * topk + 127) / 128 + e;
  json result = json::parse(Column(h.db(), "SELECT result_json FROM jobs")[0]);
  json& best = result["best"];
  best["kernel"] = "moe_reduce";
  best["source"] = source;
  best["constants"] = {{"STAGES", 4}, {"GROUP", 8}};
  best["dims"] = {{"T", t},   {"D", d},        {"F", f},      {"E", e},     {"TOPK", topk},
                  {"MT", mt}, {"R", mt * 128}, {"ED", e * d}, {"EF", e * f}};
  best["pipeline"] = {"moe_count",  "moe_place", "moe_gather",
                      "moe_gateup", "moe_down",  "moe_reduce"};
  best["shapes"] = {{"Wg", {e, d, f}}, {"Wu", {e, d, f}}, {"Wd", {e, f, d}}};
  best["check"] = {{"op", "moe"}, {"a", "X"}, {"b", "Wg"},    {"u", "Wu"},
                   {"d", "Wd"},   {"c", "Y"}, {"ids", "Ids"}, {"weights", "Wt"}};
  const std::string out = h.dir() + "/moe";
  json meta = ExportResult(h, job, result, out);
  REQUIRE(meta["launches"].size() == 6);
  for (size_t i = 0; i < 6; ++i) {
    const json& l = meta["launches"][i];
    CHECK(l["kernel"] == best["pipeline"][i]);
    CHECK(ReadText(out + "/" + l.value("image", "")).find(".entry " + l.value("kernel", "")) !=
          std::string::npos);
  }
  std::vector<std::string> scratch;
  for (const json& s : meta["scratch"]) scratch.push_back(s["name"]);
  CHECK(scratch == std::vector<std::string>{"Cnt", "TileE", "TileH", "Ord", "RowTok", "SlotRow",
                                            "Live", "Xg", "H", "P"});
  CHECK(meta["scratch"][7]["shape"] == json({mt * 128, d}));  // Xg: the gathered rows
  std::string header = ReadText(out + "/argus_kernel.h");
  CHECK(header.find("ArgusTensorMap(t.Wg, 2048ULL, 512ULL, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16") !=
        std::string::npos);  // [E, D, F] as [E*D, F] rows, as the runner encodes it
  // Each kernel allows its own dynamic shared memory when it loads (the GEMMs' is above 48 KiB).
  CHECK(header.find("ArgusAllowSharedBytes(fn, kSharedBytes);") != std::string::npos);
  CHECK(meta["launches"][3]["shared_bytes"].get<int>() > 48 * 1024);
  CHECK(HeaderCompiles(out,
                       "ArgusPipeline::Tensors t; ArgusPipeline::EncodeTensorMaps(t); return 0;"));
  std::string py = ReadText(out + "/launch_torch.py");
  CHECK(py.find("(\"tensormap\", {\"box\":[64,64],\"cols\":512,\"data_type\":9,\"row_bytes\":1024,"
                "\"rows\":2048,\"swizzle\":\"128B\",\"tensor\":\"Wg\"})") != std::string::npos);
  CHECK(SnippetParses(out));
}

// One kernel is a pipeline of one launch: the best Hopper GEMM (TMA loads and
// stores, ~224 KiB of shared memory) gets a launcher that encodes its three
// tensor maps as the runner does, allows its shared memory and launches its
// grid; without the source to derive the tensor maps from, export refuses
// rather than write a launcher that cannot work.
TEST_CASE("argus export of one TMA kernel encodes its tensor maps and allows its shared memory",
          "[e2e][tune]") {
  Harness h;
  const std::string job = TuneWithoutServer(h, 1);
  json result = json::parse(Column(h.db(), "SELECT result_json FROM jobs")[0]);
  json& best = result["best"];
  best["kernel"] = "gemm_wgmma_tma_store";
  best["source"] =
      ReadText(std::string(ARGUS_SOURCE_DIR) + "/kb/templates/gemm_wgmma_tma_store.py");
  best["constants"] = json::object();
  best["dims"] = {{"M", 256}, {"N", 512}, {"K", 384}};
  best["check"] = {{"op", "gemm"}, {"a", "A"}, {"b", "B"}, {"c", "C"}, {"b_layout", "kn"}};
  const std::string out = h.dir() + "/gemm";
  json meta = ExportResult(h, job, result, out);
  REQUIRE(meta["launches"].size() == 1);
  const json& l = meta["launches"][0];
  CHECK(l["image"] == "kernel.ptx");
  CHECK(l["block"] == json({384, 1, 1}));
  const int shared = l["shared_bytes"].get<int>();
  CHECK(shared > 48 * 1024);
  CHECK(meta["tensors"].size() == 3);
  std::string header = ReadText(out + "/argus_kernel.h");
  CHECK(header.find("kSharedBytes = " + std::to_string(shared) + ";") != std::string::npos);
  CHECK(header.find("ArgusTensorMap(t.A, 256ULL, 384ULL, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, 128, "
                    "64, 1, &t.tmap0_6);") != std::string::npos);
  CHECK(header.find("ArgusTensorMap(t.C, 256ULL, 512ULL, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 4,") !=
        std::string::npos);
  CHECK(header.find("k0.Launch(" + l["grid"][0].dump() +
                    ", 1, 1, 384, 1, 1, stream, t.A, t.B, "
                    "t.C,") != std::string::npos);
  std::string py = ReadText(out + "/launch_torch.py");
  CHECK(py.find("(\"tensormap\", {\"box\":[128,64],\"cols\":384,\"data_type\":9,\"row_bytes\":768,"
                "\"rows\":256,\"swizzle\":\"128B\",\"tensor\":\"A\"})") != std::string::npos);
  CHECK(SnippetParses(out));
  CHECK(
      HeaderCompiles(out,
                     "ArgusPipeline p; ArgusPipeline::Tensors t; const void* images[] = {nullptr}; "
                     "p.Load(images); ArgusPipeline::EncodeTensorMaps(t); p.Run(t, nullptr); "
                     "return 0;"));

  // A stored image whose metadata takes tensor maps, and no source to derive
  // their geometry from: an error naming the launch, and no directory.
  json params = meta["params"];
  best.erase("source");
  best["ptx"] = ReadText(out + "/kernel.ptx");
  best["metadata"] = {
      {"kernel_name", "gemm_wgmma_tma_store"}, {"shared_bytes", shared}, {"params", params}};
  REQUIRE(SetResult(h.db(), job, result.dump()));
  ProcessResult refused = h.Cli({"export", job, "-o", h.dir() + "/refused"});
  INFO(refused.stderr_text);
  CHECK(refused.exit_code != 0);
  CHECK(refused.stderr_text.find("launch 0 (gemm_wgmma_tma_store): it takes TMA tensor maps") !=
        std::string::npos);
  CHECK(!std::filesystem::exists(h.dir() + "/refused"));
}

}  // namespace
}  // namespace argus::e2e
