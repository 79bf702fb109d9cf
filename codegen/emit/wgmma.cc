// The kWgmma family (sm_90a): warp-group MMAs from shared-memory descriptors
// (or A from registers), their commit and wait, and setmaxnreg.
#include <set>

#include "base/status.h"
#include "codegen/emit/emitter.h"
#include "codegen/lower_hopper.h"

namespace argus::codegen::emit {

absl::Status Emitter::WgmmaOp(const ir::Op& op) {
  switch (op.code) {
    case OpCode::kSetMaxNReg:
      hopper::SetMaxNReg(b_, static_cast<int>(op.ints[0]), op.ints[0] > kb_.reg_cap);
      return absl::OkStatus();
    case OpCode::kWgmmaOperand:
      // A descriptor names the view; wgmma() reads its (unchanged) offset.
      desc_src_[op.result] = op.operands[0];
      return absl::OkStatus();
    case OpCode::kWgmma:
      return Wgmma(op);
    case OpCode::kWgmmaCommit:
      hopper::WgmmaCommit(b_);
      return absl::OkStatus();
    case OpCode::kWgmmaWait:
      return WgmmaWait(op);
    default:
      return NotLowered(op);
  }
}

// What one wgmma op issues from: its operands' shared addresses and layouts.
struct Emitter::WgmmaPlan {
  bool regs_a;    // A from registers (to_operand), else a K-major shared tile
  bool b_kmajor;  // B is the .T of a (BN, 64) tile, else N-major
  int bk;         // the K extent of the operands
  Value* a0;      // A's shared address (null for register A)
  Value* b0;      // B's shared address
};

absl::Status Emitter::PlanWgmma(const ir::Op& op, WgmmaPlan* p) {
  p->regs_a = VT(op.operands[1]).frag.regs;
  auto da = desc_src_.find(op.operands[1]), db = desc_src_.find(op.operands[2]);
  if ((!p->regs_a && da == desc_src_.end()) || db == desc_src_.end())
    return LoweringError(m_, op.loc, "codegen cannot tell which buffers these operands describe");
  dsl::FragGeom g = VT(op.operands[0]).frag.Geom();
  p->bk = VT(op.operands[1]).frag.cols;
  if (g.mma->n % 64 != 0 && g.TilesN() > 1)
    return LoweringError(m_, op.loc, "codegen issues wgmma with N a multiple of 64 here",
                         "use a wider instruction or one tile per warp group");
  ASSIGN_OR_RETURN(Root rb, RootOf(op, db->second));
  if (rb.kind != ViewFact::Root::kShared)
    return LoweringError(m_, op.loc, "wgmma operands live in shared memory");
  const std::vector<int64_t>& bst = facts_[db->second].stride;
  for (int64_t x : bst) {
    if (x < 0)
      return LoweringError(m_, op.loc, "codegen needs the wgmma B operand's strides statically",
                           "take the operand view straight from the shared buffer");
  }
  p->b_kmajor = bst.size() == 2 && bst[0] == 1 && bst[1] == 64;
  if (p->b_kmajor && g.TilesN() > 1)
    return LoweringError(m_, op.loc, "codegen issues K-major B with one wgmma tile per warp group",
                         "use mma=\"wgmma_bf16\" (N = BN / WN)");
  p->a0 = nullptr;
  if (!p->regs_a) {
    ASSIGN_OR_RETURN(Root ra, RootOf(op, da->second));
    if (ra.kind != ViewFact::Root::kShared)
      return LoweringError(m_, op.loc, "wgmma operands live in shared memory");
    p->a0 = SharedViewAddr(ra, da->second, 2);
  }
  p->b0 = SharedViewAddr(rb, db->second, 2);
  return absl::OkStatus();
}

// Each 64xNx16 instruction of this warp group's part of the accumulator, in
// the interpreter's order (tile-major, K innermost). A is K-major (128-byte
// rows, 8-row groups 1024 bytes apart) or registers (to_operand: 4 .b32 per
// instruction, element pairs packed low-first); B is N-major in 64-column
// blocks of BK rows (LBO = the block stride, SBO = 8 rows, 1024 bytes) or
// K-major (the .T of a (BN, 64) tile: like A, N rows of 128 bytes).
absl::Status Emitter::Wgmma(const ir::Op& op) {
  WgmmaPlan p;
  RETURN_IF_ERROR(PlanWgmma(op, &p));
  IssueWgmma(op, p);
  return absl::OkStatus();
}

// Every operand register is read (packed pairs) before the fence, so that no
// register write separates the wgmmas (ptxas would give each its own
// warpgroup.arrive).
std::vector<std::vector<Value*>> Emitter::WgmmaRegisterA(const ir::Op& op, int count) {
  int av = op.operands[1];
  int regs = VT(op.operands[0]).frag.Geom().mma->regs_a;
  std::vector<std::vector<Value*>> areg(count);
  for (size_t i = 0; i < areg.size(); ++i) {
    int ae = static_cast<int>(i) * regs;
    for (int j = 0; j < regs / 2; ++j) {
      int e = ae + 2 * j;
      areg[i].push_back(FragPairs(av) ? FragGetPair(av, e) : PackPair(av, e));
    }
  }
  return areg;
}

void Emitter::IssueWgmma(const ir::Op& op, const WgmmaPlan& p) {
  int cv = op.operands[0];
  dsl::FragGeom g = VT(cv).frag.Geom();
  const dsl::MmaInfo& mi = *g.mma;
  Value* unit = WarpGroupUnit(g);
  Value* wrow = b_.CreateMul(b_.CreateUDiv(unit, C32(g.wn)), C32(g.bm / g.wm));
  Value* wcol = b_.CreateMul(b_.CreateURem(unit, C32(g.wn)), C32(g.bn / g.wn));
  int64_t lbo = int64_t{p.bk} * 128, sbo = 1024;
  if (kb_.b_swap) std::swap(lbo, sbo);
  int TM = g.TilesM(), TN = g.TilesN(), TK = p.bk / 16;
  std::vector<std::vector<Value*>> areg = WgmmaRegisterA(op, p.regs_a ? TM * TK : 0);
  const bool f16 = mi.ab == DType::kF16;
  const bool trans_b = p.b_kmajor ? false : kb_.b_trans;
  hopper::WgmmaFence(b_);
  for (int tm = 0; tm < TM; ++tm) {
    Value* arow =
        p.regs_a ? nullptr
                 : b_.CreateAdd(p.a0, b_.CreateMul(b_.CreateAdd(wrow, C32(tm * 64)), C32(128)));
    for (int tn = 0; tn < TN; ++tn) {
      Value* col = b_.CreateAdd(wcol, C32(tn * mi.n));
      Value* bcol =
          p.b_kmajor
              ? b_.CreateAdd(p.b0, b_.CreateMul(col, C32(128)))
              : b_.CreateAdd(p.b0, b_.CreateMul(b_.CreateUDiv(col, C32(64)), C32(p.bk * 128)));
      int ce = (tm * TN + tn) * mi.regs_c;
      for (int ks = 0; ks < TK; ++ks) {
        Value* desc_b =
            p.b_kmajor ? hopper::SmemDesc128B(b_, b_.CreateAdd(bcol, C32(ks * 32)), 16, 1024)
                       : hopper::SmemDesc128B(b_, b_.CreateAdd(bcol, C32(ks * 2048)), lbo, sbo);
        std::vector<Value*> acc;
        for (int j = 0; j < mi.regs_c; ++j) acc.push_back(FragGet(cv, ce + j));
        std::vector<Value*> d;
        if (p.regs_a) {
          // Elements 2j (low half) and 2j+1 of the A fragment share register j.
          d = hopper::WgmmaRegA(b_, mi.n, f16, acc, areg[tm * TK + ks], desc_b, trans_b);
        } else {
          Value* desc_a = hopper::SmemDesc128B(b_, b_.CreateAdd(arow, C32(ks * 32)), 16, 1024);
          d = hopper::Wgmma(b_, mi.n, f16, acc, desc_a, desc_b, false, trans_b);
        }
        for (int j = 0; j < mi.regs_c; ++j) FragSet(cv, ce + j, d[j]);
      }
    }
  }
}

// For each wgmma wait, the accumulators of the wgmmas it may cover: those of
// the innermost enclosing block that issues any (a warp group's branch never
// ties up another's registers).
void Emitter::FindWaitAccumulators() {
  std::function<void(const ir::Block&, std::set<int>*)> accs = [&](const ir::Block& blk,
                                                                   std::set<int>* out) {
    for (const ir::Op& o : blk) {
      if (o.code == OpCode::kWgmma) out->insert(o.operands[0]);
      for (const ir::Block& r : o.regions) accs(r, out);
    }
  };
  std::vector<const ir::Block*> stack;
  std::function<void(const ir::Block&)> walk = [&](const ir::Block& blk) {
    stack.push_back(&blk);
    for (const ir::Op& o : blk) {
      if (o.code == OpCode::kWgmmaWait) {
        std::set<int> s;
        for (auto it = stack.rbegin(); it != stack.rend() && s.empty(); ++it) accs(**it, &s);
        wait_accs_[&o] = std::vector<int>(s.begin(), s.end());
      }
      for (const ir::Block& r : o.regions) walk(r);
    }
    stack.pop_back();
  };
  walk(f_.body);
}

// The wait passes those accumulators through its asm, so that nothing reads
// one above it.
absl::Status Emitter::WgmmaWait(const ir::Op& op) {
  if (wait_accs_.empty()) FindWaitAccumulators();
  std::vector<Value*> live;
  std::vector<std::pair<int, int>> where;
  for (int v : wait_accs_[&op]) {
    int n = VT(v).frag.Geom().PerLane();
    for (int e = 0; e < n; ++e) {
      live.push_back(FragGet(v, e));
      where.push_back({v, e});
    }
  }
  std::vector<Value*> out = hopper::WgmmaWait(b_, static_cast<int>(op.ints[0]), live);
  for (size_t i = 0; i < out.size(); ++i) FragSet(where[i].first, where[i].second, out[i]);
  return absl::OkStatus();
}

}  // namespace argus::codegen::emit
