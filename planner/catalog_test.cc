#include <catch2/catch.hpp>

#include "gpu_worker/runner/runner_core.h"
#include "kb/kb.h"
#include "nlohmann/json.hpp"
#include "planner/candidate.h"
#include "planner/interp_backend.h"
#include "planner/problems.h"

namespace argus::planner {
namespace {

using nlohmann::json;

const kb::Kb& TheKb() {
  static const kb::Kb kb = *kb::Kb::Load(kb::DefaultKbDir());
  return kb;
}

json RunInterp(const kb::Template& t, const Config& c, const Problem& p) {
  const kb::Template* base = nullptr;
  for (const auto* x : TheKb().ForFamily(p.family)) {
    if (x->baseline) base = x;
  }
  REQUIRE(base != nullptr);
  auto cand = Instantiate(t, c, p);
  REQUIRE(cand.ok());
  auto bi = Instantiate(*base, DefaultConfig(*base), p);
  REQUIRE(bi.ok());
  auto r = RunCandidateInInterpreter(Payload(*cand, *bi, p, "interp").dump());
  REQUIRE(r.ok());
  return json::parse(*r);
}

TEST_CASE("shapes parse positionally or by name - bad problems are refused", "[planner]") {
  CHECK(*ParseShape("gemm", "4096x4096x4096") ==
        std::map<std::string, int64_t>{{"M", 4096}, {"N", 4096}, {"K", 4096}});
  CHECK(ParseShape("gemm", "M=8,N=16,K=32")->at("N") == 16);
  CHECK(!ParseShape("gemm", "64x64").ok());
  CHECK(!ParseShape("gemm", "64xfoox64").ok());
  CHECK(!MakeProblem("conv9d", {}, "", {}).ok());
  CHECK(!MakeProblem("gemm", {{"M", 64}, {"N", 64}}, "bf16", {}).ok());
  CHECK(!MakeProblem("gemm", {{"M", 64}, {"N", 64}, {"K", 64}}, "f64", {}).ok());
  CHECK(!MakeProblem("gemm", {{"M", 64}, {"N", 64}, {"K", 0}}, "bf16", {}).ok());
  CHECK(!MakeProblem("gemm", {{"M", 64}, {"N", 64}, {"K", 64}}, "bf16", {{"trans_c", "1"}}).ok());
  CHECK(!MakeProblem("attention", {{"B", 1}, {"H", 6}, {"HKV", 4}, {"S", 64}, {"D", 64}}, "", {})
             .ok());
  auto g = MakeProblem("gemm", {{"M", 4096}, {"N", 4096}, {"K", 4096}}, "bf16", {});
  REQUIRE(g.ok());
  CHECK(Flops(*g) == Approx(2.0 * 4096 * 4096 * 4096));
  CHECK(BaselineName(*g, "sm_90a") == "cublas");
  CHECK(BaselineName(*g, "gfx942") == "hipblaslt");
  auto a = MakeProblem("attention", {{"B", 4}, {"H", 32}, {"S", 4096}, {"D", 128}}, "bf16",
                       {{"causal", "true"}});
  REQUIRE(a.ok());
  CHECK(a->shape.at("HKV") == 32);
  CHECK(Flops(*a) == Approx(2.0 * 4 * 32 * 4096.0 * 4096 * 128));
}

// Every family has a KB template, and every template, with its default knobs
// at the family's interpreter shape, computes the reference result.
TEST_CASE("every catalog problem has templates that pass the reference check", "[planner]") {
  for (const Family& f : Families()) {
    auto templates = TheKb().ForFamily(f.name);
    INFO(f.name);
    REQUIRE(!templates.empty());
    std::vector<std::map<std::string, std::string>> variants = {{}};
    if (f.name == "gemm") variants = {{}, {{"trans_a", "1"}}, {{"trans_b", "1"}}};
    if (f.name == "attention") variants = {{}, {{"causal", "1"}}};
    if (f.name == "elementwise") variants = {{{"op", "add"}}, {{"op", "silu_mul"}}};
    for (const auto& opts : variants) {
      std::string dtype = f.name == "gemm" ? "bf16" : "f32";
      auto p = MakeProblem(f.name, f.interp_shape, dtype, opts);
      REQUIRE(p.ok());
      for (const kb::Template* t : templates) {
        if (!t->Supports(p->dtype, "interp")) continue;
        Config c = DefaultConfig(*t);
        if (!Instantiate(*t, c, *p).ok()) continue;  // requirement not met (e.g. transposes)
        INFO(t->id << " on " << Describe(*p));
        json r = RunInterp(*t, c, *p);
        INFO(r.dump());
        CHECK(r["outcome"] == "ok");
        CHECK(r["speedup"].get<double>() > 0);
        CHECK(r["speedup"].get<double>() ==
              Approx(r["baseline_time"].get<double>() / r["time"].get<double>()));
        // Where a runner reference computes the problem, a plain worker (no
        // catalog: argus-worker --backend interp) checks the same payload.
        json check = RunnerCheck(*p);
        if (check["op"] != "problem") {
          const kb::Template* base = nullptr;
          for (const auto* x : TheKb().ForFamily(p->family))
            if (x->baseline) base = x;
          json payload = Payload(*Instantiate(*t, c, *p),
                                 *Instantiate(*base, DefaultConfig(*base), *p), *p, "interp");
          auto plain = worker::HandleCandidate(payload.dump(), worker::CandidateOptions{});
          REQUIRE(plain.ok());
          json pr = json::parse(*plain);
          INFO("plain worker: " << pr.dump());
          CHECK(pr["outcome"] == "ok");
          CHECK(pr["speedup"].get<double>() > 0);
        }
      }
    }
  }
}

// The payload of a GEMM on sm_90a is one a GPU worker takes: cuBLAS as the
// baseline, the runner's gemm check, and it compiles into a run spec.
TEST_CASE("an sm_90a GEMM payload is one the GPU worker accepts", "[planner]") {
  auto p = MakeProblem("gemm", {{"M", 256}, {"N", 256}, {"K", 256}}, "bf16", {{"trans_b", "1"}});
  REQUIRE(p.ok());
  const kb::Template* t = TheKb().FindTemplate("gemm_smem");
  const kb::Template* base = TheKb().FindTemplate("gemm_naive");
  REQUIRE((t && base));
  auto cand = Instantiate(*t, DefaultConfig(*t), *p);
  REQUIRE(cand.ok());
  json payload = Payload(*cand, *Instantiate(*base, DefaultConfig(*base), *p), *p, "sm_90a",
                         json{{"passed", true}, {"gate", "verifier"}});
  auto req = worker::ParseCandidatePayload(payload.dump());
  REQUIRE(req.ok());
  CHECK(req->baseline.name == "cublas");
  CHECK(req->check["op"] == "gemm");
  CHECK(req->check["b_layout"] == "nk");
  CHECK(req->VerificationPassed());
  std::string dir = std::string(ARGUS_BINARY_DIR) + "/planner-sm90a-payload";
  auto spec = worker::PrepareGpuRun(*req, dir);
  INFO(spec.status().ToString());
  REQUIRE(spec.ok());
  CHECK((*spec)["baseline"] == "cublas");
  CHECK((*spec)["check"]["m"] == 256);
  CHECK((*spec)["flops"].get<double>() == Approx(2.0 * 256 * 256 * 256));
  // Problems the runner has no reference for say so instead of passing.
  auto batched =
      MakeProblem("batched_gemm", {{"BATCH", 2}, {"M", 32}, {"N", 32}, {"K", 32}}, "bf16", {});
  REQUIRE(batched.ok());
  CHECK(RunnerCheck(*batched)["op"] == "problem");
  // GQA attention is checked by the runner: K/V hold B * HKV heads.
  auto gqa_f32 =
      MakeProblem("attention", {{"B", 2}, {"H", 4}, {"HKV", 1}, {"S", 64}, {"D", 64}}, "f32", {});
  REQUIRE(gqa_f32.ok());
  CHECK(RunnerCheck(*gqa_f32)["op"] == "attention");
  CHECK(RunnerCheck(*gqa_f32)["kv_heads"] == 2);
  // MoE has the runner's reference: a GPU spec routes distinct experts
  // ("topk" ids below E) with non-negative weights and checks op moe.
  auto moe =
      MakeProblem("moe", {{"T", 64}, {"D", 64}, {"F", 128}, {"E", 8}, {"TOPK", 2}}, "bf16", {});
  REQUIRE(moe.ok());
  CHECK(RunnerCheck(*moe)["op"] == "moe");
  CHECK(RunnerCheck(*moe)["u"] == "Wu");                    // SwiGLU: gate b, up u, down d
  CHECK(BaselineName(*moe, "sm_90a") == "torch_moe_loop");  // issue 7's PyTorch loop
  CHECK(BaselineName(*moe, "gfx942") == "kb-baseline-template");
  const kb::Template* mt = TheKb().FindTemplate("moe_mlp");
  REQUIRE(mt);
  auto mi = Instantiate(*mt, DefaultConfig(*mt), *moe);
  REQUIRE(mi.ok());
  auto mp = worker::ParseCandidatePayload(Payload(*mi, *mi, *moe, "sm_90a").dump());
  REQUIRE(mp.ok());
  CHECK(mp->baseline.name == "torch_moe_loop");
  CHECK(mp->timing["budget_ms"].get<double>() > 0);
  auto ms = worker::PrepareGpuRun(*mp, std::string(ARGUS_BINARY_DIR) + "/planner-sm90a-moe");
  INFO(ms.status().ToString());
  REQUIRE(ms.ok());
  CHECK((*ms)["check"]["op"] == "moe");
  CHECK((*ms)["check"]["k"] == 128);
  CHECK((*ms)["baseline"] == "torch_moe_loop");
  for (const auto& t : (*ms)["tensors"]) {
    if (t["name"] == "Ids") {
      CHECK(t["init"] == "topk");
      CHECK(t["high"].get<double>() == 8);
    }
    if (t["name"] == "Wt") CHECK(t["low"].get<double>() == 0);
  }
  runner::RunSpec rs;
  std::string rerr;
  CHECK(runner::ParseRunSpec(*ms, &rs, &rerr));
  INFO(rerr);
  CHECK(rs.check.experts == 8);
  CHECK(rs.check.topk == 2);
  // Attention on sm_90a is timed against PyTorch SDPA (the runner's helper),
  // GQA included: the runner's check reads kv head h / (H / HKV).
  auto att = MakeProblem("attention", {{"B", 1}, {"H", 4}, {"S", 64}, {"D", 64}}, "bf16", {});
  REQUIRE(att.ok());
  CHECK(BaselineName(*att, "sm_90a") == "torch_sdpa");
  const kb::Template* fa = TheKb().FindTemplate("flash_attention");
  const kb::Template* an = TheKb().FindTemplate("attention_naive");
  REQUIRE((fa && an));
  auto ap = worker::ParseCandidatePayload(Payload(*Instantiate(*fa, DefaultConfig(*fa), *att),
                                                  *Instantiate(*an, DefaultConfig(*an), *att), *att,
                                                  "sm_90a")
                                              .dump());
  INFO(ap.status().ToString());
  REQUIRE(ap.ok());
  CHECK(ap->baseline.name == "torch_sdpa");
  CHECK(ap->check["op"] == "attention");
  auto gqa =
      MakeProblem("attention", {{"B", 1}, {"H", 4}, {"HKV", 2}, {"S", 64}, {"D", 64}}, "bf16", {});
  REQUIRE(gqa.ok());
  CHECK(BaselineName(*gqa, "sm_90a") == "torch_sdpa");
  json gc = RunnerCheck(*gqa);
  CHECK(gc["op"] == "attention");
  CHECK(gc["kv_heads"] == 2);
  CHECK(gc["batch"] == 1);
}

TEST_CASE("GQA attention and a wrong kernel are told apart by the reference", "[planner]") {
  auto p = MakeProblem("attention", {{"B", 1}, {"H", 4}, {"HKV", 2}, {"S", 32}, {"D", 64}}, "f32",
                       {{"causal", "1"}});
  REQUIRE(p.ok());
  const kb::Template* fa = TheKb().FindTemplate("flash_attention");
  REQUIRE(fa != nullptr);
  Config c = DefaultConfig(*fa);
  c.knobs["BKV"] = 16;
  c.knobs["BQ"] = 32;
  CHECK(RunInterp(*fa, c, *p)["outcome"] == "ok");
  // The same kernel reading the wrong kv head is caught with a counterexample.
  kb::Template broken = *fa;
  broken.source.replace(broken.source.find("hk = h // G"), 11, "hk = h %  G");
  json r = RunInterp(broken, c, *p);
  CHECK(r["outcome"] == "wrong");
  CHECK(r.contains("counterexample"));
}

}  // namespace
// The H200 tune jobs of bench/device_tune.sh: every template the planner may
// pick there (it supports sm_90a and its default knobs meet its requirements)
// compiles for sm_90a at the job's full shape. A template that only the GPU
// rejects (flash_attention's copy vector at D = 128 once was) leaves a tune job
// stuck on its starting kernel.
TEST_CASE("every template admitted at the H200 job shapes compiles for sm_90a", "[planner]") {
  struct Job {
    std::string family, shape;
    std::map<std::string, std::string> options;
  };
  const std::vector<Job> jobs = {{"gemm", "4096x4096x4096", {}},
                                 {"attention", "4x32x4096x128", {}},
                                 {"attention", "4x32x4096x128", {{"causal", "1"}}},
                                 {"attention", "8x16x8192x64", {}},
                                 {"moe", "4096x2048x1408x64x6", {}},
                                 {"moe", "4096x4096x14336x8x2", {}}};
  for (const Job& j : jobs) {
    auto shape = ParseShape(j.family, j.shape);
    REQUIRE(shape.ok());
    auto p = MakeProblem(j.family, *shape, "bf16", j.options);
    REQUIRE(p.ok());
    int admitted = 0;
    for (const kb::Template* t : TheKb().ForFamily(j.family)) {
      if (!t->Supports(p->dtype, "sm_90a")) continue;
      auto inst = Instantiate(*t, DefaultConfig(*t, *p), *p);  // where the planner opens it
      if (!inst.ok()) continue;                                // the planner skips it too
      INFO(t->id << " on " << Describe(*p));
      auto req = worker::ParseCandidatePayload(Payload(*inst, *inst, *p, "sm_90a").dump());
      REQUIRE(req.ok());
      auto spec =
          worker::PrepareGpuRun(*req, std::string(ARGUS_BINARY_DIR) + "/planner-sm90a-" + t->id);
      INFO(spec.status().ToString());
      CHECK(spec.ok());
      if (!t->baseline) ++admitted;
      // A job result's best kernel records the launches and scratch of a
      // pipeline, and only of a pipeline.
      json best = BestKernelJson(*inst, *p);
      CHECK(best["source"] == inst->source);
      CHECK(best.contains("pipeline") == !t->pipeline.empty());
      if (!t->pipeline.empty()) {
        CHECK(best["pipeline"] == t->pipeline);
        CHECK(best["check"] == RunnerCheck(*p));
        CHECK(best["shapes"]["Wg"].size() == 3);
      }
      if (spec.ok() && !t->pipeline.empty()) {  // moe_wgmma: one multi-launch spec
        REQUIRE((*spec)["launches"].size() == t->pipeline.size());
        CHECK((*spec)["launches"][2]["kernel"]["symbol"] == t->pipeline[2]);
        CHECK((*spec)["check"]["op"] == "moe");
        for (const json& ts : (*spec)["tensors"]) {
          if (ts["name"] == "Wg") CHECK(ts["shape"].size() == 3);  // the problem's [E, D, F]
          if (ts["name"] == "Xg") CHECK(ts.value("scratch", false));
          if (ts["name"] == "Y") CHECK(!ts.value("scratch", false));
        }
      }
    }
    INFO(Describe(*p));
    // The tune job has somewhere to go past its start (moe: the tensor-core pipeline).
    CHECK(admitted >= (j.family == "moe" ? 1 : 2));
  }
}

}  // namespace argus::planner
