// codegen/test_kernels.h: hand-built kernels (IRBuilder) that exercise the backends.
//
// They stand in for the DSL lowering until it exists, and they are the first
// kernels the runner checks and times on a GPU:
//   NVPTX  vadd_f32        c[i] = a[i] + b[i], 16-byte vector loads, 256 threads
//          gemm_bf16_tn    C[M,N] f32 = A[M,K] bf16 (row) x B[N,K]^T bf16 (row; i.e.
//                          col-major K x N); 128 threads, 64x64x32 tile, 2-stage
//                          cp.async pipeline (commit/wait group), ldmatrix.x4,
//                          mma.sync.m16n8k16.row.col.f32.bf16.bf16.f32
//          oob_store       stores 1 TiB past its output: a planted device fault
//   AMDGPU vadd_f32        as above, 256 threads (4 wave64)
//          gemm_bf16_tn_mfma  same contract as gemm_bf16_tn; 256 threads, 64x64x32
//                          tile, raw buffer loads, LDS, v_mfma_f32_32x32x8_bf16,
//                          s_waitcnt, sched_group_barrier, s_setprio
// Every GEMM needs M % 64 == 0, N % 64 == 0, K % 32 == 0 (K >= 32); the grid is
// GemmGrid(M, N). Each builder returns a module with its kernel marked and
// metadata (symbol, params, block, static shared bytes) filled in; the caller
// sets the grid.
//
// Thread safety: builders only touch the LLVMContext passed in.
#ifndef ARGUS_CODEGEN_TEST_KERNELS_H_
#define ARGUS_CODEGEN_TEST_KERNELS_H_

#include <array>
#include <cstdint>
#include <memory>

#include "codegen/kernel_metadata.h"

namespace llvm {
class LLVMContext;
class Module;
}  // namespace llvm

namespace argus::codegen {

struct TestKernel {
  std::unique_ptr<llvm::Module> module;
  KernelMetadata metadata;
  TestKernel();
  TestKernel(TestKernel&&) noexcept;
  ~TestKernel();
};

inline constexpr int kGemmTileM = 64;
inline constexpr int kGemmTileN = 64;
inline constexpr int kGemmTileK = 32;
inline constexpr int kVaddThreads = 256;
inline constexpr int kVaddPerThread = 4;

inline std::array<int, 3> GemmGrid(int m, int n) { return {n / kGemmTileN, m / kGemmTileM, 1}; }
inline std::array<int, 3> VaddGrid(int64_t n) {
  const int64_t per_block = kVaddThreads * kVaddPerThread;
  return {static_cast<int>((n + per_block - 1) / per_block), 1, 1};
}

TestKernel BuildVectorAddNvptx(llvm::LLVMContext& ctx);
TestKernel BuildGemmBf16Nvptx(llvm::LLVMContext& ctx);
TestKernel BuildOobStoreNvptx(llvm::LLVMContext& ctx);
TestKernel BuildVectorAddAmdgpu(llvm::LLVMContext& ctx);
TestKernel BuildGemmBf16Amdgpu(llvm::LLVMContext& ctx);

}  // namespace argus::codegen

#endif  // ARGUS_CODEGEN_TEST_KERNELS_H_
