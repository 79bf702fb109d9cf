// bench/dsl_bench: front-end and interpreter speed.
//
//   parse+check of a generated 300-line kernel   target: well under 50 ms
//   interpreter, kb/templates/gemm_mma.py 128^3       target: under 5 s
//
// Each figure is printed beside a baseline measured in the same run: the
// front end against reading and lexing-free copying of the same text is
// meaningless, so its baseline is the target budget; the interpreter's is a
// plain triple-loop C++ GEMM on the same inputs. Output: one table.
#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "dsl/check.h"
#include "dsl/interp.h"
#include "dsl/source.h"

namespace {

using Clock = std::chrono::steady_clock;
double Ms(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

std::string BigKernel(int* lines_out) {
  std::string src =
      "@kernel(threads=256)\ndef big(A: Tensor[bf16, \"M\", \"K\"], B: Tensor[bf16, \"K\", "
      "\"N\"], C: Tensor[f32, \"M\", \"N\"], BM: const = 128, BN: const = 128, BK: const = 32):\n"
      "    grid(cdiv(M, BM), cdiv(N, BN))\n    bm, bn = block_id(0), block_id(1)\n"
      "    sA = shared(bf16, (BM, BK), swizzle=Swizzle(2, 3, 3))\n"
      "    sB = shared(bf16, (BK, BN))\n"
      "    acc = fragment(f32, (BM, BN), mma=\"mma_sync_m16n8k16_bf16\", warps=(2, 4))\n"
      "    tl = thread_layout((64, 4), vec=8)\n    x = 0.0\n";
  int lines = 9;
  for (int i = 0; lines < 300; ++i) {
    std::string k = "k" + std::to_string(i);
    src += "    for " + k + " in range(cdiv(K, BK)):\n" + "        copy(A.tile((BM, BK), (bm, " +
           k + ")), sA, tl)\n" + "        barrier()\n" +
           "        a = load_fragment(sA, acc, operand=\"A\")\n" +
           "        assert_tag(a, lambda i, j: A(bm * BM + i, " + k + " * BK + j))\n" +
           "        if thread_id() % 3 == 1 and x < 2.0:\n" +
           "            x = x * 0.5 + exp(f32(sA[thread_id() % BM, 3])) - max(x, 1.0)\n" +
           "        barrier()\n";
    lines += 8;
  }
  src += "    store(acc, C.tile((BM, BN), (bm, bn)))\n";
  *lines_out = lines + 1;
  return src;
}

}  // namespace

int main(int argc, char** argv) {
  std::string root = argc > 1 ? argv[1] : ARGUS_SOURCE_DIR;
  int lines = 0;
  std::string big = BigKernel(&lines);
  const int reps = 20;
  auto t0 = Clock::now();
  for (int r = 0; r < reps; ++r) {
    auto src = std::make_shared<argus::dsl::SourceFile>("big.py", big);
    auto m = argus::dsl::Compile(src, {});
    if (!m.ok()) {
      std::fprintf(stderr, "compile failed: %s\n", std::string(m.status().message()).c_str());
      return 1;
    }
  }
  double parse_ms = Ms(t0) / reps;

  auto module = argus::dsl::CompileFile(root + "/kb/templates/gemm_mma.py", {});
  if (!module.ok()) {
    std::fprintf(stderr, "%s\n", std::string(module.status().message()).c_str());
    return 1;
  }
  const argus::dsl::ir::Function* kernel = nullptr;
  for (const auto& f : module->functions) {
    if (f.is_kernel) kernel = &f;
  }
  if (!kernel) return 1;
  argus::dsl::LaunchArgs args;
  args.dims = {{"M", 128}, {"N", 128}, {"K", 128}};
  auto tensors = argus::dsl::MakeTensors(*kernel, args);
  if (!tensors.ok()) return 1;
  argus::dsl::FillRandom(&*tensors, 7);
  t0 = Clock::now();
  auto st = argus::dsl::Run(*module, *kernel, args, &*tensors);
  double interp_ms = Ms(t0);
  if (!st.ok()) {
    std::fprintf(stderr, "run failed: %s\n", std::string(st.message()).c_str());
    return 1;
  }
  // Baseline: a plain C++ GEMM on the same inputs.
  const auto& A = (*tensors)[0].data;
  const auto& B = (*tensors)[1].data;
  std::vector<double> C(128 * 128);
  t0 = Clock::now();
  for (int i = 0; i < 128; ++i)
    for (int k = 0; k < 128; ++k)
      for (int j = 0; j < 128; ++j) C[i * 128 + j] += A[i * 128 + k] * B[k * 128 + j];
  double ref_ms = Ms(t0);

  std::printf("%-44s %10s %12s %8s\n", "benchmark", "ours (ms)", "baseline", "ratio");
  std::printf("%-44s %10.2f %12s %8.3f\n",
              ("parse+check " + std::to_string(lines) + "-line kernel").c_str(), parse_ms,
              "50 ms budget", parse_ms / 50.0);
  std::printf("%-44s %10.2f %9.2f ms %8.1f\n", "interpreter gemm_mma 128^3 vs C++ triple loop",
              interp_ms, ref_ms, interp_ms / ref_ms);
  std::printf("%-44s %10.2f %12s %8.4f\n", "interpreter gemm_mma 128^3 vs 5 s budget", interp_ms,
              "5000 ms", interp_ms / 5000.0);
  return 0;
}
