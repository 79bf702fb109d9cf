// codegen/lower_hopper.h: NVPTX sm_90a instructions the DSL's Hopper operations
// lower to (wgmma, TMA, mbarrier, fences, setmaxnreg), as inline PTX through
// LLVM IR — LLVM 19's NVPTX backend has no intrinsics for most of them. The
// emitter (emit/mbarrier.cc, tma.cc, wgmma.cc, barrier.cc) decides what to
// issue; these helpers only spell it.
//
// Shared-memory addresses are i32 (the .shared window), tensor maps and
// descriptors i64.
//
// Thread safety: stateless functions over the caller's IRBuilder.
#ifndef ARGUS_CODEGEN_LOWER_HOPPER_H_
#define ARGUS_CODEGEN_LOWER_HOPPER_H_

#include <cstdint>
#include <vector>

#include "llvm/IR/IRBuilder.h"

namespace argus::codegen::hopper {

void MbarInit(llvm::IRBuilder<>& b, llvm::Value* bar, int64_t arrivals);
void FenceMbarInit(llvm::IRBuilder<>& b);
void MbarArrive(llvm::IRBuilder<>& b, llvm::Value* bar);
void MbarArriveExpectTx(llvm::IRBuilder<>& b, llvm::Value* bar, llvm::Value* bytes);
// Spins on mbarrier.try_wait.parity until the phase of `parity` completed.
void MbarWait(llvm::IRBuilder<>& b, llvm::Value* bar, llvm::Value* parity);
// cp.async.bulk.tensor.2d global -> shared, completing on `bar`; c0 is the
// innermost (column) element coordinate.
void TmaLoad2d(llvm::IRBuilder<>& b, llvm::Value* dst, llvm::Value* tmap, llvm::Value* c0,
               llvm::Value* c1, llvm::Value* bar);
// The TMA store epilogue: cp.async.bulk.tensor.2d global <- shared in the
// thread's bulk async-group, its commit, and the wait until at most `n` of
// the thread's groups still read shared memory (.read). `add`: the reduce form
// (cp.reduce.async.bulk.tensor ... .add.tile), adding into global memory.
void TmaStore2d(llvm::IRBuilder<>& b, llvm::Value* tmap, llvm::Value* c0, llvm::Value* c1,
                llvm::Value* src, bool add);
void BulkCommit(llvm::IRBuilder<>& b);
void BulkWaitRead(llvm::IRBuilder<>& b, int n);
// bar.sync id, threads: a named barrier for `threads` threads (a warp group).
void NamedBarrier(llvm::IRBuilder<>& b, llvm::Value* id, int threads);
// bar.arrive id, threads: counts the executing warps without waiting.
void NamedBarrierArrive(llvm::IRBuilder<>& b, llvm::Value* id, int threads);
void PrefetchTensorMap(llvm::IRBuilder<>& b, llvm::Value* tmap);
void FenceProxyAsync(llvm::IRBuilder<>& b);
void SetMaxNReg(llvm::IRBuilder<>& b, int regs, bool increase);
void WgmmaFence(llvm::IRBuilder<>& b);
void WgmmaCommit(llvm::IRBuilder<>& b);
// wgmma.wait_group n; `live` (f32 accumulator registers in flight) pass
// through the asm so that no use of them moves above the wait.
std::vector<llvm::Value*> WgmmaWait(llvm::IRBuilder<>& b, int n,
                                    const std::vector<llvm::Value*>& live);
// One wgmma.mma_async.m64nNk16.f32.{bf16,f16} with both operands from shared
// memory descriptors; `acc` holds N/2 f32 values, returned updated.
std::vector<llvm::Value*> Wgmma(llvm::IRBuilder<>& b, int n, bool f16,
                                const std::vector<llvm::Value*>& acc, llvm::Value* desc_a,
                                llvm::Value* desc_b, bool trans_a, bool trans_b);
// The same with A from registers: `a` holds the 4 .b32 registers of the
// m64k16 A tile (bf16/f16 pairs, low half first).
std::vector<llvm::Value*> WgmmaRegA(llvm::IRBuilder<>& b, int n, bool f16,
                                    const std::vector<llvm::Value*>& acc,
                                    const std::vector<llvm::Value*>& a, llvm::Value* desc_b,
                                    bool trans_b);
// A shared-memory matrix descriptor with the 128-byte swizzle: start address
// (bytes, i32), leading and stride byte offsets.
llvm::Value* SmemDesc128B(llvm::IRBuilder<>& b, llvm::Value* addr, int64_t lbo, int64_t sbo);

}  // namespace argus::codegen::hopper

#endif  // ARGUS_CODEGEN_LOWER_HOPPER_H_
