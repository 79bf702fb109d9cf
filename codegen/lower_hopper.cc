#include "codegen/lower_hopper.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "llvm/IR/InlineAsm.h"

namespace argus::codegen::hopper {

using llvm::IRBuilder;
using llvm::Type;
using llvm::Value;

namespace {

// Side-effecting asm with a "memory" clobber: neither LLVM nor the order of
// shared/global accesses around it may move.
Value* Asm(IRBuilder<>& b, Type* ret, const std::string& text, const std::string& constraints,
           llvm::ArrayRef<Value*> args) {
  std::vector<Type*> tys;
  for (Value* a : args) tys.push_back(a->getType());
  auto* fty = llvm::FunctionType::get(ret, tys, false);
  std::string c = constraints;
  c += c.empty() ? "~{memory}" : ",~{memory}";
  auto* ia = llvm::InlineAsm::get(fty, text, c, /*hasSideEffects=*/true);
  return b.CreateCall(fty, ia, args);
}

}  // namespace

void MbarInit(IRBuilder<>& b, Value* bar, int64_t arrivals) {
  Asm(b, b.getVoidTy(), "mbarrier.init.shared::cta.b64 [$0], $1;", "r,r",
      {bar, b.getInt32(static_cast<uint32_t>(arrivals))});
}

void FenceMbarInit(IRBuilder<>& b) {
  Asm(b, b.getVoidTy(), "fence.mbarrier_init.release.cluster;", "", {});
}

void MbarArrive(IRBuilder<>& b, Value* bar) {
  Asm(b, b.getVoidTy(),
      "{\n.reg .b64 argus_st;\nmbarrier.arrive.shared::cta.b64 argus_st, [$0];\n}", "r", {bar});
}

void MbarArriveExpectTx(IRBuilder<>& b, Value* bar, Value* bytes) {
  Asm(b, b.getVoidTy(),
      "{\n.reg .b64 argus_st;\nmbarrier.arrive.expect_tx.shared::cta.b64 argus_st, [$0], $1;\n}",
      "r,r", {bar, bytes});
}

void MbarWait(IRBuilder<>& b, Value* bar, Value* parity) {
  Asm(b, b.getVoidTy(),
      "{\n.reg .pred argus_p;\nargus_wait_${:uid}:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 argus_p, [$0], $1;\n"
      "@!argus_p bra argus_wait_${:uid};\n}",
      "r,r", {bar, parity});
}

void TmaLoad2d(IRBuilder<>& b, Value* dst, Value* tmap, Value* c0, Value* c1, Value* bar) {
  Asm(b, b.getVoidTy(),
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [$0], [$1, "
      "{$2, $3}], [$4];",
      "r,l,r,r,r", {dst, tmap, c0, c1, bar});
}

void TmaStore2d(IRBuilder<>& b, Value* tmap, Value* c0, Value* c1, Value* src, bool add) {
  // The reduction's element type (f32) comes from the tensor map.
  Asm(b, b.getVoidTy(),
      add ? "cp.reduce.async.bulk.tensor.2d.global.shared::cta.add.tile.bulk_group [$0, {$1, "
            "$2}], [$3];"
          : "cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [$0, {$1, $2}], [$3];",
      "l,r,r,r", {tmap, c0, c1, src});
}

void BulkCommit(IRBuilder<>& b) { Asm(b, b.getVoidTy(), "cp.async.bulk.commit_group;", "", {}); }

void BulkWaitRead(IRBuilder<>& b, int n) {
  Asm(b, b.getVoidTy(), absl::StrCat("cp.async.bulk.wait_group.read ", n, ";"), "", {});
}

void NamedBarrier(IRBuilder<>& b, Value* id, int threads) {
  Asm(b, b.getVoidTy(), absl::StrCat("bar.sync $0, ", threads, ";"), "r", {id});
}

void NamedBarrierArrive(IRBuilder<>& b, Value* id, int threads) {
  Asm(b, b.getVoidTy(), absl::StrCat("bar.arrive $0, ", threads, ";"), "r", {id});
}

void PrefetchTensorMap(IRBuilder<>& b, Value* tmap) {
  Asm(b, b.getVoidTy(), "prefetch.tensormap [$0];", "l", {tmap});
}

void FenceProxyAsync(IRBuilder<>& b) {
  Asm(b, b.getVoidTy(), "fence.proxy.async.shared::cta;", "", {});
}

void SetMaxNReg(IRBuilder<>& b, int regs, bool increase) {
  Asm(b, b.getVoidTy(),
      absl::StrCat("setmaxnreg.", increase ? "inc" : "dec", ".sync.aligned.u32 ", regs, ";"), "",
      {});
}

void WgmmaFence(IRBuilder<>& b) { Asm(b, b.getVoidTy(), "wgmma.fence.sync.aligned;", "", {}); }

void WgmmaCommit(IRBuilder<>& b) {
  Asm(b, b.getVoidTy(), "wgmma.commit_group.sync.aligned;", "", {});
}

namespace {

// An asm whose f32 operands `regs` are read and written in place ("=f" outputs
// tied to inputs); `extra` operands follow them as $n.., `extra_c` constraints.
std::vector<Value*> InPlace(IRBuilder<>& b, const std::string& text,
                            const std::vector<Value*>& regs, const std::vector<Value*>& extra,
                            const std::vector<std::string>& extra_c) {
  size_t n = regs.size();
  if (n == 0) {
    std::vector<std::string> c(extra_c);
    Asm(b, b.getVoidTy(), text, absl::StrJoin(c, ","), extra);
    return {};
  }
  std::vector<Type*> rt(n, b.getFloatTy());
  Type* ret =
      n == 1 ? static_cast<Type*>(b.getFloatTy()) : llvm::StructType::get(b.getContext(), rt);
  std::vector<std::string> c;
  for (size_t i = 0; i < n; ++i) c.push_back("=f");
  for (const std::string& e : extra_c) c.push_back(e);
  for (size_t i = 0; i < n; ++i) c.push_back(absl::StrCat(i));
  std::vector<Value*> args(extra);
  args.insert(args.end(), regs.begin(), regs.end());
  Value* r = Asm(b, ret, text, absl::StrJoin(c, ","), args);
  std::vector<Value*> out;
  for (size_t i = 0; i < n; ++i) out.push_back(n == 1 ? r : b.CreateExtractValue(r, i));
  return out;
}

}  // namespace

std::vector<Value*> WgmmaWait(IRBuilder<>& b, int n, const std::vector<Value*>& live) {
  return InPlace(b, absl::StrCat("wgmma.wait_group.sync.aligned ", n, ";"), live, {}, {});
}

std::vector<Value*> Wgmma(IRBuilder<>& b, int n, bool f16, const std::vector<Value*>& acc,
                          Value* desc_a, Value* desc_b, bool trans_a, bool trans_b) {
  int regs = n / 2;
  std::vector<std::string> d;
  for (int i = 0; i < regs; ++i) d.push_back(absl::StrCat("$", i));
  const char* ab = f16 ? "f16" : "bf16";
  std::string text =
      absl::StrCat("{\n.reg .pred argus_p;\nsetp.ne.b32 argus_p, $", regs + 2, ", 0;\n",
                   "wgmma.mma_async.sync.aligned.m64n", n, "k16.f32.", ab, ".", ab, " {",
                   absl::StrJoin(d, ", "), "}, $", regs, ", $", regs + 1, ", argus_p, 1, 1, ",
                   trans_a ? 1 : 0, ", ", trans_b ? 1 : 0, ";\n}");
  return InPlace(b, text, acc, {desc_a, desc_b, b.getInt32(1)}, {"l", "l", "r"});
}

std::vector<Value*> WgmmaRegA(IRBuilder<>& b, int n, bool f16, const std::vector<Value*>& acc,
                              const std::vector<Value*>& a, Value* desc_b, bool trans_b) {
  int regs = n / 2;
  std::vector<std::string> d, ar;
  for (int i = 0; i < regs; ++i) d.push_back(absl::StrCat("$", i));
  for (size_t i = 0; i < a.size(); ++i) ar.push_back(absl::StrCat("$", regs + i));
  int nb = regs + static_cast<int>(a.size());
  const char* ab = f16 ? "f16" : "bf16";
  std::string text = absl::StrCat(
      "{\n.reg .pred argus_p;\nsetp.ne.b32 argus_p, $", nb + 1, ", 0;\n",
      "wgmma.mma_async.sync.aligned.m64n", n, "k16.f32.", ab, ".", ab, " {", absl::StrJoin(d, ", "),
      "}, {", absl::StrJoin(ar, ", "), "}, $", nb, ", argus_p, 1, 1, ", trans_b ? 1 : 0, ";\n}");
  std::vector<Value*> extra(a);
  extra.push_back(desc_b);
  extra.push_back(b.getInt32(1));
  std::vector<std::string> c(a.size(), "r");
  c.push_back("l");
  c.push_back("r");
  return InPlace(b, text, acc, extra, c);
}

Value* SmemDesc128B(IRBuilder<>& b, Value* addr, int64_t lbo, int64_t sbo) {
  Type* i64 = b.getInt64Ty();
  Value* a = b.CreateLShr(b.CreateAnd(b.CreateZExt(addr, i64), b.getInt64(0x3FFFF)), 4);
  uint64_t hi = (static_cast<uint64_t>((lbo >> 4) & 0x3FFF) << 16) |
                (static_cast<uint64_t>((sbo >> 4) & 0x3FFF) << 32) | (uint64_t{1} << 62);
  return b.CreateOr(a, b.getInt64(hi));
}

}  // namespace argus::codegen::hopper
