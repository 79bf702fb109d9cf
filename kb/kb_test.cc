#include "kb/kb.h"

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "kb/expr.h"

namespace argus::kb {
namespace {

namespace fs = std::filesystem;

TEST_CASE("expressions evaluate with C integer semantics and located errors", "[kb]") {
  std::map<std::string, int64_t> env = {{"M", 64}, {"BM", 32}, {"H", 8}, {"HKV", 2}};
  CHECK(*EvalExpr("M % BM == 0", env) == 1);
  CHECK(*EvalExpr("H / HKV", env) == 4);
  CHECK(*EvalExpr("2 * (M + 1) - 3", env) == 127);
  CHECK(*EvalExpr("M > 10 and not (BM < 16) or 0", env) == 1);
  auto unknown = EvalExpr("M % BX == 0", env);
  REQUIRE(!unknown.ok());
  CHECK(std::string(unknown.status().message()).find("unknown name 'BX'") != std::string::npos);
  CHECK(!EvalExpr("M / (BM - 32)", env).ok());
  CHECK(!EvalExpr("M +", env).ok());
  CHECK(!EvalExpr("(M", env).ok());
  CHECK(*ExprNames("M % BM == 0") == std::set<std::string>{"M", "BM"});
  CHECK(*Substitute("Tensor[${dtype}, ${A}]", {{"dtype", "bf16"}, {"A", "\"M\""}}) ==
        "Tensor[bf16, \"M\"]");
  CHECK(!Substitute("x ${nope} y", {}).ok());
  CHECK(Placeholders("a ${x} b ${y}") == std::set<std::string>{"x", "y"});
}

TEST_CASE("the shipped KB loads and every entry is well formed", "[kb]") {
  auto kb = Kb::Load(DefaultKbDir());
  INFO(kb.status().ToString());
  REQUIRE(kb.ok());
  // The techniques the issue names are all present.
  for (const char* id :
       {"tiling", "smem_staging", "vectorized_copy", "async_copy", "swizzle", "pipelining",
        "warp_specialization", "split_k", "rasterization", "mma_selection", "scheduling"}) {
    INFO(id);
    const Technique* t = kb->FindTechnique(id);
    REQUIRE(t != nullptr);
    CHECK(!t->invariants.empty());
    CHECK(!t->pitfalls.empty());
  }
  for (const Template& t : kb->templates()) {
    INFO(t.id);
    // Every placeholder is one the planner knows how to fill.
    for (const auto& p : Placeholders(t.source)) {
      CHECK((p == "dtype" || p == "out_dtype" || p == "A_DIMS" || p == "B_DIMS" || p == "OP"));
    }
    CHECK(!t.invariants.empty());
    // Every technique a template lists applies to its family.
    for (const auto& id : t.techniques) {
      const Technique* tech = kb->FindTechnique(id);
      REQUIRE(tech != nullptr);
      CHECK(std::find(tech->applies_to.begin(), tech->applies_to.end(), t.family) !=
            tech->applies_to.end());
    }
  }
  CHECK(kb->ForFamily("gemm").size() >= 3);
}

// Writes a one-template KB whose template JSON is `tmpl` and returns its dir.
fs::path BadKb(const std::string& name, const std::string& tmpl) {
  fs::path dir = fs::temp_directory_path() / ("argus_kb_test_" + name);
  fs::remove_all(dir);
  fs::create_directories(dir / "techniques");
  fs::create_directories(dir / "templates");
  fs::copy_file(fs::path(DefaultKbDir()) / "techniques" / "tiling.json",
                dir / "techniques" / "tiling.json");
  fs::copy_file(fs::path(DefaultKbDir()) / "templates" / "gemm_naive.py",
                dir / "templates" / "gemm_naive.py");
  std::ofstream(dir / "templates" / "gemm_naive.json") << tmpl;
  return dir;
}

std::string NaiveJson(const std::string& knobs, const std::string& extra = "") {
  return R"({"id": "gemm_naive", "family": "gemm", "kernel": "gemm_naive",
    "source": "gemm_naive.py", "summary": "s", "baseline": true, "dtypes": ["f32"],
    "targets": ["interp"], "techniques": ["tiling"], "knobs": )" +
         knobs + R"(, "dims": {"M": "M", "N": "N", "K": "K"}, "requires": [],
    "invariants": ["x"])" +
         extra + "}";
}

TEST_CASE("bad KB entries are rejected with the file and field", "[kb]") {
  CHECK(Kb::Load(BadKb("ok", NaiveJson(R"({"T": {"values": [8, 16], "default": 16}})"))).ok());
  auto bad_default =
      Kb::Load(BadKb("def", NaiveJson(R"({"T": {"values": [8, 16], "default": 12}})")));
  REQUIRE(!bad_default.ok());
  CHECK(std::string(bad_default.status().message()).find("gemm_naive.json") != std::string::npos);
  CHECK(std::string(bad_default.status().message()).find("default 12") != std::string::npos);
  CHECK(
      !Kb::Load(BadKb("unsorted", NaiveJson(R"({"T": {"values": [16, 8], "default": 16}})"))).ok());
  CHECK(!Kb::Load(BadKb("noknob", NaiveJson(R"({"Q": {"values": [1], "default": 1}})"))).ok());
  CHECK(!Kb::Load(BadKb("extra", NaiveJson("{}", R"(, "colour": "red")"))).ok());
  CHECK(!Kb::Load(BadKb("expr", NaiveJson("{}", R"(, "shape_constants": {"G": "H /"})"))).ok());
  CHECK(!Kb::Load(BadKb("json", "{not json")).ok());
  // Pipelines: kernels of the source ending in `kernel`; shapes only with one.
  CHECK(Kb::Load(BadKb("pipe", NaiveJson("{}", R"(, "pipeline": ["gemm_naive"],
    "shapes": {"A": ["M", "K"]})")))
            .ok());
  auto pipe_end = Kb::Load(BadKb("pipe_end", NaiveJson("{}", R"(, "pipeline": ["nope"])")));
  REQUIRE(!pipe_end.ok());
  CHECK(std::string(pipe_end.status().message()).find("must end with") != std::string::npos);
  auto pipe_def =
      Kb::Load(BadKb("pipe_def", NaiveJson("{}", R"(, "pipeline": ["nope", "gemm_naive"])")));
  REQUIRE(!pipe_def.ok());
  CHECK(std::string(pipe_def.status().message()).find("'nope' is not defined") !=
        std::string::npos);
  CHECK(!Kb::Load(BadKb("shapes", NaiveJson("{}", R"(, "shapes": {"A": ["M", "K"]})"))).ok());
  CHECK(!Kb::Load(BadKb("shapes_expr", NaiveJson("{}", R"(, "pipeline": ["gemm_naive"],
    "shapes": {"A": ["M +"]})")))
             .ok());
  // Presets: a parsing `when` and values among each named knob's.
  const std::string knob_t = R"({"T": {"values": [8, 16], "default": 16}})";
  CHECK(Kb::Load(BadKb("preset", NaiveJson(knob_t, R"(, "presets": [
    {"when": "K == 64", "knobs": {"T": 8}}])")))
            .ok());
  auto preset_value = Kb::Load(BadKb("preset_value", NaiveJson(knob_t, R"(, "presets": [
    {"when": "K == 64", "knobs": {"T": 12}}])")));
  REQUIRE(!preset_value.ok());
  CHECK(std::string(preset_value.status().message()).find("entry 0: T must be one of its values") !=
        std::string::npos);
  auto preset_knob = Kb::Load(BadKb("preset_knob", NaiveJson(knob_t, R"(, "presets": [
    {"when": "K == 64", "knobs": {"T": 8}}, {"when": "1", "knobs": {"Q": 1}}])")));
  REQUIRE(!preset_knob.ok());
  CHECK(std::string(preset_knob.status().message()).find("entry 1: no knob Q") !=
        std::string::npos);
  CHECK(!Kb::Load(BadKb("preset_expr", NaiveJson(knob_t, R"(, "presets": [
    {"when": "K ==", "knobs": {"T": 8}}])")))
             .ok());
  CHECK(!Kb::Load(BadKb("preset_shape", NaiveJson(knob_t, R"(, "presets": {"when": "1"})"))).ok());
  std::string unknown_tech = NaiveJson("{}");
  unknown_tech.replace(unknown_tech.find("[\"tiling\"]"), 10, "[\"magic\"]");
  auto ut = Kb::Load(BadKb("tech", unknown_tech));
  REQUIRE(!ut.ok());
  CHECK(std::string(ut.status().message()).find("magic") != std::string::npos);
}

}  // namespace
}  // namespace argus::kb
