// bench/verifier_bench.cc: verifier speed on the kernels the performance targets rest on.
//   verifier_bench [REPS]
//   verifier_bench verify FILE [flags of `argus verify`]   (one report, no codegen linked)
// Prints one line per case: median wall seconds over REPS runs (cache off).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "verifier/cli.h"
#include "verifier/verify.h"

namespace {

std::string Slurp(const std::string& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && std::string(argv[1]) == "verify") {
    auto r =
        argus::verifier::VerifyVerb(std::vector<std::string>(argv + 2, argv + argc), std::cout);
    if (!r.ok()) {
      std::cerr << r.status().message() << "\n";
      return 2;
    }
    return *r ? 0 : 1;
  }
  int reps = argc > 1 ? std::atoi(argv[1]) : 5;
  std::string root = ARGUS_SOURCE_DIR;
  struct Case {
    const char* name;
    std::string file;
    std::map<std::string, std::string> consts;
    std::map<std::string, int64_t> dims;
    bool expect_clean;
  };
  // 8 warps, 3 stages, K/BK = 8192/32 = 256 iterations.
  std::map<std::string, int64_t> gemm = {{"M", 4096}, {"N", 4096}, {"K", 8192}};
  std::vector<Case> cases = {
      {"gemm_mma bf16 8 warps 3 stages K/BK=256 (clean)",
       root + "/kb/templates/gemm_mma.py",
       {{"STAGES", "3"}},
       gemm,
       true},
      {"flash_attention fwd (clean)",
       root + "/examples/flash_attention.py",
       {},
       {{"BH", 16}, {"S", 4096}},
       true},
      {"seeded bug: stage off by one (3 stages)",
       root + "/tests/verifier/bugs/stage_off_by_one.py",
       {{"STAGES", "3"}},
       gemm,
       false},
      {"seeded bug: missing wait_group",
       root + "/tests/verifier/bugs/missing_wait.py",
       {{"STAGES", "3"}},
       gemm,
       false},
      {"seeded bug: wrong tile offset",
       root + "/tests/verifier/bugs/wrong_tile_offset.py",
       {{"STAGES", "3"}},
       gemm,
       false},
      // Hopper: warp-specialized TMA + mbarrier + wgmma, 3 warp groups, 4 stages.
      {"hopper gemm_wgmma_ws K/BK=64 (clean)",
       root + "/tests/verifier/clean/gemm_wgmma_ws.py",
       {},
       {{"M", 4096}, {"N", 4096}, {"K", 4096}},
       true},
      {"hopper gemm_wgmma_ws K/BK=256 (clean)",
       root + "/tests/verifier/clean/gemm_wgmma_ws.py",
       {},
       {{"M", 4096}, {"N", 4096}, {"K", 16384}},
       true},
      {"hopper gemm_wgmma_ws_wait1 K/BK=256 (clean)",
       root + "/tests/verifier/clean/gemm_wgmma_ws_wait1.py",
       {},
       {{"M", 4096}, {"N", 4096}, {"K", 16384}},
       true},
      {"hopper gemm_wgmma_persistent K/BK=64 (clean)",
       root + "/kb/templates/gemm_wgmma_persistent.py",
       {},
       {{"M", 4096}, {"N", 4096}, {"K", 4096}},
       true},
      {"hopper gemm_wgmma_persistent K/BK=256 (clean)",
       root + "/kb/templates/gemm_wgmma_persistent.py",
       {},
       {{"M", 4096}, {"N", 4096}, {"K", 16384}},
       true},
      {"hopper seeded bug: wrong full parity",
       root + "/tests/verifier/bugs/hopper_parity_wrong.py",
       {},
       {{"M", 4096}, {"N", 4096}, {"K", 16384}},
       false},
      {"hopper seeded bug: stage refilled before release",
       root + "/tests/verifier/bugs/hopper_release_before_wgmma_done.py",
       {},
       {{"M", 4096}, {"N", 4096}, {"K", 16384}},
       false},
      // Tensor-core flash attention (fragment math), at the tune shape B4 H32 S4096 D128.
      {"flash_attention_mma KB template D128 (clean)",
       root + "/kb/templates/flash_attention_mma.py",
       {},
       {{"BH", 128}, {"BHKV", 128}, {"S", 4096}},
       true},
      {"flash_attention_mma KB template D128 causal GQA G=4 (clean)",
       root + "/kb/templates/flash_attention_mma.py",
       {{"CAUSAL", "True"}, {"G", "4"}},
       {{"BH", 128}, {"BHKV", 32}, {"S", 4096}},
       true},
      {"seeded bug: attention V refilled with the wrong tile",
       root + "/tests/verifier/bugs/fa_mma_v_wrong_tile.py",
       {},
       {{"BH", 128}, {"S", 4096}},
       false},
      // FA3-style Hopper attention (both kernels of the file: serial and
      // overlapped), at the tune shapes B4 H32 S4096 D128 / B8 H16 S8192 D64.
      {"flash_attention_wgmma (+serial) D128 (clean)",
       root + "/kb/templates/flash_attention_wgmma.py",
       {},
       {{"RQ", 524288}, {"RKV", 524288}, {"BH", 128}, {"S", 4096}},
       true},
      {"flash_attention_wgmma (+serial) D64 causal GQA G=2 (clean)",
       root + "/kb/templates/flash_attention_wgmma.py",
       {{"HD", "64"}, {"G", "2"}, {"CAUSAL", "True"}},
       {{"RQ", 1048576}, {"RKV", 524288}, {"BH", 128}, {"S", 8192}},
       true},
      {"seeded bug: FA3 V tiles streamed in reverse",
       root + "/tests/verifier/bugs/fa3_pv_wrong_tile.py",
       {},
       {{"RQ", 524288}, {"RKV", 524288}, {"BH", 128}, {"S", 4096}},
       false},
  };
  int bad = 0;
  for (const Case& c : cases) {
    std::vector<double> t;
    bool verified = false;
    int obligations = 0;
    for (int i = 0; i < reps; ++i) {
      argus::dsl::CheckOptions co;
      co.consts = c.consts;
      argus::verifier::VerifyOptions vo;
      vo.dims = c.dims;
      vo.use_cache = false;
      auto start = std::chrono::steady_clock::now();
      auto r = argus::verifier::VerifySource(c.file, Slurp(c.file), co, vo);
      t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
      if (!r.ok()) {
        std::fprintf(stderr, "%s: %s\n", c.name, std::string(r.status().message()).c_str());
        return 2;
      }
      verified = r->verified();
      obligations = r->obligations;
    }
    std::sort(t.begin(), t.end());
    bool ok = verified == c.expect_clean;
    bad += !ok;
    std::printf("%-52s %7.3f s median of %d  (%d obligations, %s)%s\n", c.name, t[t.size() / 2],
                reps, obligations, verified ? "verified" : "refuted", ok ? "" : "  UNEXPECTED");
  }
  return bad ? 1 : 0;
}
