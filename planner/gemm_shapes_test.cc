// The tensor-core GEMM templates at ragged shapes and in nn.Linear's layout:
// each instantiated for the problem, run in the reference interpreter and
// checked against the problem's reference (planner/problems.cc), and passed
// by the verifier gate at that run shape; and the planner's choice of
// templates for such problems.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "kb/kb.h"
#include "nlohmann/json.hpp"
#include "planner/candidate.h"
#include "planner/interp_backend.h"
#include "planner/problems.h"
#include "planner/verifier_gate.h"

namespace argus::planner {
namespace {

using nlohmann::json;

const kb::Kb& TheKb() {
  static const kb::Kb kb = *kb::Kb::Load(kb::DefaultKbDir());
  return kb;
}

struct Case {
  std::string template_id;
  int64_t M, N, K;
  std::string dtype;
  bool trans_b;
  std::map<std::string, int64_t> knobs;  // over the template's defaults
};

// Runs the case in the interpreter against the reference and through the
// verifier gate; returns the interpreter's result.
json RunCase(const Case& c) {
  const kb::Template* t = TheKb().FindTemplate(c.template_id);
  const kb::Template* base = TheKb().FindTemplate("gemm_naive");
  REQUIRE((t && base));
  auto p = MakeProblem("gemm", {{"M", c.M}, {"N", c.N}, {"K", c.K}}, c.dtype,
                       {{"trans_b", c.trans_b ? "1" : "0"}});
  REQUIRE(p.ok());
  Config cfg = DefaultConfig(*t, *p);
  for (const auto& [k, v] : c.knobs) cfg.knobs[k] = v;
  auto inst = Instantiate(*t, cfg, *p);
  INFO(Describe(*p) << " " << cfg.Key() << ": " << inst.status().ToString());
  REQUIRE(inst.ok());
  GateReport gate = VerifierGate().Check(*inst, "sm_90a");
  INFO(gate.ToJson().dump());
  CHECK(gate.passed);
  auto bi = Instantiate(*base, DefaultConfig(*base), *p);
  REQUIRE(bi.ok());
  auto r = RunCandidateInInterpreter(Payload(*inst, *bi, *p, "interp").dump());
  REQUIRE(r.ok());
  json out = json::parse(*r);
  INFO(out.dump());
  CHECK(out["outcome"] == "ok");
  return out;
}

TEST_CASE("nn.Linear's layout on tensor cores: bf16 and f16, ragged M, N and K tails",
          "[planner][gemm]") {
  // M takes any value; N % 4 and K % 8 keep the tensors' rows 16-byte aligned.
  std::vector<Case> cases = {
      {"gemm_wgmma_linear", 1, 132, 136, "bf16", true, {{"BN", 64}}},
      {"gemm_wgmma_linear", 7, 68, 24, "f16", true, {{"BN", 64}}},
      {"gemm_wgmma_linear", 17, 20, 8, "bf16", true, {{"BN", 128}}},
      {"gemm_wgmma_linear", 129, 260, 72, "bf16", true, {{"BN", 128}, {"SMS", 4}}},
      {"gemm_wgmma_linear", 255, 124, 200, "f16", true, {{"BN", 64}, {"STAGES", 3}}},
      {"gemm_wgmma_linear", 131, 4, 16, "bf16", true, {{"BN", 64}}},
  };
  for (const Case& c : cases) {
    INFO(c.M << "x" << c.N << "x" << c.K << " " << c.dtype);
    RunCase(c);
  }
}

TEST_CASE("decode shapes: swap-AB keeps the weight in wgmma's M side, any M and N",
          "[planner][gemm]") {
  std::vector<Case> cases = {
      {"gemm_wgmma_linear_swap", 1, 100, 136, "bf16", true, {}},
      {"gemm_wgmma_linear_swap", 7, 7, 24, "f16", true, {}},
      {"gemm_wgmma_linear_swap", 17, 129, 72, "bf16", true, {{"BX", 16}, {"STAGES", 4}}},
      {"gemm_wgmma_linear_swap", 64, 255, 200, "bf16", true, {{"STAGES", 4}}},
      {"gemm_wgmma_linear_swap", 129, 36, 16, "bf16", true, {{"BX", 128}, {"STAGES", 4}}},
  };
  for (const Case& c : cases) {
    INFO(c.M << "x" << c.N << "x" << c.K << " " << c.dtype);
    RunCase(c);
  }
}

TEST_CASE("the TMA-store GEMM at ragged shapes: zero-filled boxes, clipped stores",
          "[planner][gemm]") {
  std::vector<Case> cases = {
      {"gemm_wgmma_tma_store", 1, 8, 8, "bf16", false, {{"BN", 128}}},
      {"gemm_wgmma_tma_store", 7, 136, 24, "bf16", false, {{"BN", 128}}},
      // N >= BN: the last column tile starts at cdiv(N, 64) * 64 - BN.
      {"gemm_wgmma_tma_store", 129, 200, 136, "bf16", false, {{"BN", 128}, {"SMS", 3}}},
      {"gemm_wgmma_tma_store", 255, 264, 72, "bf16", false, {{"BN", 192}, {"EBUFS", 4}}},
  };
  for (const Case& c : cases) {
    INFO(c.M << "x" << c.N << "x" << c.K);
    RunCase(c);
  }
}

TEST_CASE("the GEMM templates' requirements say which layouts and shapes they serve",
          "[planner][gemm]") {
  auto fits = [](const std::string& id, int64_t M, int64_t N, int64_t K, bool trans_b) {
    const kb::Template* t = TheKb().FindTemplate(id);
    REQUIRE(t != nullptr);
    auto p = MakeProblem("gemm", {{"M", M}, {"N", N}, {"K", K}}, "bf16",
                         {{"trans_b", trans_b ? "1" : "0"}});
    REQUIRE(p.ok());
    return Instantiate(*t, DefaultConfig(*t, *p), *p).ok();
  };
  CHECK(fits("gemm_wgmma_linear", 1, 4096, 4096, true));
  CHECK(fits("gemm_wgmma_linear", 255, 7, 8, false) == false);      // N % 4
  CHECK(fits("gemm_wgmma_linear", 255, 128, 17, true) == false);    // K % 8
  CHECK(fits("gemm_wgmma_linear", 128, 128, 128, false) == false);  // layout
  CHECK(fits("gemm_wgmma_linear_swap", 1, 7, 8, true));
  CHECK(fits("gemm_wgmma_linear_swap", 1, 7, 12, true) == false);  // K % 8
  CHECK(fits("gemm_wgmma_tma_store", 17, 136, 24, false));
  CHECK(fits("gemm_wgmma_tma_store", 17, 132, 24, false) == false);  // N % 8 (B's rows)
  CHECK(fits("gemm_wgmma_tma_store", 128, 128, 128, true) == false);
  // Shapes no tensor-core template serves (16-byte rows) still have a kernel.
  CHECK(fits("gemm_naive", 7, 17, 255, true));
}

}  // namespace
}  // namespace argus::planner
