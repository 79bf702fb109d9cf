// bench/verifier_bench.cc: verifier speed on the kernels the performance targets rest on.
//   verifier_bench [REPS]
//   verifier_bench verify FILE [flags of `argus verify`]   (one report, no codegen linked)
//   verifier_bench corpus   (tests/verifier/bugs and clean: the corpus targets)
// Prints one line per case: median wall seconds over REPS runs (cache off).
// `corpus` prints a line per kernel, then the targets (every seeded bug
// refuted with its check, no violation and at most 5% unknown on correct
// kernels, median and p95 seconds) and a digest of every verdict: two runs
// agree on it when verdicts do not depend on the machine's load.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "verifier/cli.h"
#include "verifier/verify.h"

namespace {

std::string Slurp(const std::string& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The "# expect: CHECK line N" and "# dims: M=..,N=.." lines of a corpus file.
struct Expect {
  std::string check;
  int line = 0;
  std::map<std::string, int64_t> dims;
};

Expect ParseExpect(const std::string& text) {
  Expect e;
  for (absl::string_view l : absl::StrSplit(text, '\n')) {
    if (absl::ConsumePrefix(&l, "# expect: ")) {
      std::vector<std::string> parts = absl::StrSplit(l, " line ");
      e.check = parts[0];
      if (parts.size() > 1) (void)absl::SimpleAtoi(parts[1], &e.line);
    } else if (absl::ConsumePrefix(&l, "# dims: ")) {
      for (absl::string_view kv : absl::StrSplit(l, ',')) {
        std::vector<std::string> p = absl::StrSplit(kv, '=');
        int64_t v = 0;
        if (p.size() == 2 && absl::SimpleAtoi(p[1], &v)) e.dims[p[0]] = v;
      }
    }
  }
  return e;
}

double Quantile(std::vector<double> t, double q) {
  if (t.empty()) return 0;
  std::sort(t.begin(), t.end());
  return t[std::min(t.size() - 1, static_cast<size_t>(q * static_cast<double>(t.size())))];
}

// Verifies every kernel of tests/verifier/{bugs,clean} once; returns 1 when a
// target is missed.
int Corpus(const std::string& root) {
  namespace fs = std::filesystem;
  std::vector<double> secs;
  int bugs = 0, bugs_hit = 0, clean = 0, clean_violations = 0, clean_unknown = 0;
  uint64_t digest = 1469598103934665603ull, max_steps = 0;
  for (const char* dir : {"bugs", "clean"}) {
    std::vector<fs::path> files;
    for (const auto& e : fs::directory_iterator(root + "/tests/verifier/" + dir))
      if (e.path().extension() == ".py") files.push_back(e.path());
    std::sort(files.begin(), files.end());
    for (const fs::path& f : files) {
      std::string text = Slurp(f.string());
      Expect ex = ParseExpect(text);
      argus::verifier::VerifyOptions vo;
      vo.dims = ex.dims;
      vo.use_cache = false;
      auto r = argus::verifier::VerifySource(f.filename().string(), text, {}, vo);
      if (!r.ok()) {
        std::fprintf(stderr, "%s: %s\n", f.c_str(), std::string(r.status().message()).c_str());
        return 2;
      }
      secs.push_back(r->seconds);
      max_steps = std::max(max_steps, r->max_steps);
      std::string verdict = r->verified() ? "verified" : "NOT verified";
      bool hit = false, violation = false, unknown = false;
      for (const auto& fd : r->findings) {
        using argus::verifier::Severity;
        violation |= fd.severity == Severity::kViolation;
        unknown |= fd.severity == Severity::kUnknown;
        hit |= fd.severity == Severity::kViolation && fd.check == ex.check &&
               fd.loc.line == ex.line && fd.has_cex;
        for (char c : absl::StrCat(fd.check, fd.loc.line, fd.message, ";"))
          digest = (digest ^ static_cast<unsigned char>(c)) * 1099511628211ull;
      }
      std::string what;
      if (std::string(dir) == "bugs") {
        ++bugs;
        bugs_hit += hit;
        what = hit ? "refuted with its check" : "MISSED (" + ex.check + ")";
      } else {
        ++clean;
        clean_violations += violation;
        clean_unknown += !violation && unknown;
        what = violation ? "FALSE ALARM" : unknown ? "unknown" : "verified";
      }
      std::printf("%-6s %-44s %7.3f s  %s\n", dir, f.filename().c_str(), r->seconds, what.c_str());
    }
  }
  const double median = Quantile(secs, 0.5), p95 = Quantile(secs, 0.95);
  const bool ok = bugs_hit == bugs && clean_violations == 0 && clean_unknown * 20 <= clean &&
                  median < 1 && p95 < 5;
  std::printf(
      "seeded bugs refuted with their check: %d/%d; correct kernels: %d, violations %d, unknown "
      "%d (%.1f%%); median %.3f s, p95 %.3f s over %zu kernels; costliest obligation %llu solver "
      "steps -> %s\nverdict digest %016llx\n",
      bugs_hit, bugs, clean, clean_violations, clean_unknown,
      clean ? 100.0 * clean_unknown / clean : 0.0, median, p95, secs.size(),
      static_cast<unsigned long long>(max_steps), ok ? "targets met" : "TARGETS MISSED",
      static_cast<unsigned long long>(digest));
  return ok ? 0 : 1;
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
  std::string root = ARGUS_SOURCE_DIR;
  if (argc > 1 && std::string(argv[1]) == "corpus") return Corpus(root);
  int reps = argc > 1 ? std::atoi(argv[1]) : 5;
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
