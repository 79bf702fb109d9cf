#include "planner/policy.h"

#include <catch2/catch.hpp>

namespace argus::planner {
namespace {

const kb::Kb& TheKb() {
  static const kb::Kb kb = *kb::Kb::Load(kb::DefaultKbDir());
  return kb;
}

Step Measured(int n, const Config& c, const std::string& action, const std::string& technique,
              const std::string& parent, const std::string& outcome, double ratio,
              const std::string& message = "") {
  Step s;
  s.step = n;
  s.candidate_id = "c" + std::to_string(n);
  s.config = c;
  s.action = action;
  s.technique = technique;
  s.parent_id = parent;
  s.outcome = outcome;
  s.ratio = ratio;
  s.message = message;
  return s;
}

TEST_CASE("a failed knob change is repaired as its technique's counterexample says", "[planner]") {
  auto p = *MakeProblem("gemm", {{"M", 128}, {"N", 128}, {"K", 64}}, "f32", {});
  const kb::Template* smem = TheKb().FindTemplate("gemm_smem");
  BuiltinPolicy policy(&TheKb(), p, {smem}, {});
  Config base = DefaultConfig(*smem);  // BM=32 BN=32 BK=32
  Config bigger = base;
  bigger.knobs["BM"] = 64;
  std::vector<Step> t = {Measured(0, base, "new_kernel", "", "", "ok", 0.7),
                         Measured(1, bigger, "knob", "tiling", "c0", "runtime_error", 0,
                                  "gemm_smem.py:20:9: out of bounds read of A")};
  auto next = policy.Next(t);
  REQUIRE(next.has_value());
  CHECK(next->action == "repair");
  CHECK(next->technique == "tiling");
  CHECK(next->why.find("shrink") != std::string::npos);
  CHECK(next->why.find("out of bounds") != std::string::npos);
  // shrink from BM=64 skips the parent's 32 and lands on 16.
  CHECK(next->config.knobs.at("BM") == 16);
  // An unmatched failure reverts: back to the parent, another knob of the technique.
  t[1].message = "something else";
  t[1].outcome = "wrong";
  next = policy.Next(t);
  REQUIRE(next.has_value());
  CHECK(next->action == "repair");
  CHECK(next->why.find("revert") != std::string::npos);
  CHECK(next->config.knobs.at("BM") == 32);
  CHECK(next->config.knobs.at("BN") != 32);
}

TEST_CASE("the builtin policy starts from memory, then templates, then knob moves", "[planner]") {
  auto p = *MakeProblem("softmax", {{"R", 8}, {"N", 512}}, "f32", {});
  const kb::Template* sm = TheKb().FindTemplate("softmax");
  Config warm = DefaultConfig(*sm);
  warm.knobs["NT"] = 32;
  BuiltinPolicy policy(&TheKb(), p, {sm}, {warm});
  std::vector<Step> t;
  auto a = policy.Next(t);
  REQUIRE(a.has_value());
  CHECK(a->action == "retrieved");
  CHECK(a->config.knobs.at("NT") == 32);
  t.push_back(Measured(0, a->config, a->action, "", "", "ok", 1.19));
  auto b = policy.Next(t);
  REQUIRE(b.has_value());
  CHECK(b->action == "new_kernel");
  t.push_back(Measured(1, b->config, b->action, "", "", "ok", 1.0));
  // Knob moves start from the best (top-half) parent.
  auto c = policy.Next(t);
  REQUIRE(c.has_value());
  CHECK(c->action == "knob");
  CHECK(c->technique == "block_size");
  CHECK(c->parent_id == "c0");
  CHECK(c->config.knobs.at("NT") == 64);
  // With every value tried, it stops.
  for (int64_t nt : {64, 256}) {
    Config x = DefaultConfig(*sm);
    x.knobs["NT"] = nt;
    t.push_back(Measured(static_cast<int>(t.size()), x, "knob", "block_size", "c0", "ok", 0.9));
  }
  CHECK(!policy.Next(t).has_value());
}

TEST_CASE("a template's presets give its starting knobs by shape", "[planner]") {
  const kb::Template* fa = TheKb().FindTemplate("flash_attention_wgmma_pingpong");
  REQUIRE(fa != nullptr);
  auto d64 = *MakeProblem("attention", *ParseShape("attention", "8x16x8192x64"), "bf16", {});
  auto d128 = *MakeProblem("attention", *ParseShape("attention", "4x32x4096x128"), "bf16", {});
  // FA3's D64 configuration (three consumer warp groups) where it fits ...
  Config c64 = DefaultConfig(*fa, d64);
  CHECK(c64.knobs.at("CWG") == 3);
  CHECK(c64.knobs.at("STAGES") == 3);
  CHECK(c64.knobs.at("BN") == 128);
  // ... the plain defaults at D128, and where the preset's values do not fit
  // (S = 128 is shorter than three 64-row groups).
  CHECK(DefaultConfig(*fa, d128) == DefaultConfig(*fa));
  auto short64 = *MakeProblem("attention", *ParseShape("attention", "1x2x128x64"), "bf16", {});
  CHECK(DefaultConfig(*fa, short64) == DefaultConfig(*fa));
  // The policy opens the template with it.
  BuiltinPolicy policy(&TheKb(), d64, {fa}, {});
  auto first = policy.Next({});
  REQUIRE(first.has_value());
  CHECK(first->action == "new_kernel");
  CHECK(first->config == c64);
}

}  // namespace
}  // namespace argus::planner
