// The kFragment family: MMA fragments made, loaded from memory (ldmatrix
// where the shared tile allows), stored (paired stores where the layout
// allows), and the per-lane coordinates of their elements. mma.cc issues the
// multiply itself.
#include "absl/strings/str_cat.h"
#include "base/status.h"
#include "codegen/emit/emitter.h"
#include "llvm/IR/IntrinsicsNVPTX.h"

namespace argus::codegen::emit {

absl::Status Emitter::FragmentOp(const ir::Op& op) {
  switch (op.code) {
    case OpCode::kFragment: {
      int n = VT(op.result).frag.Geom().PerLane();
      for (int e = 0; e < n; ++e)
        FragSet(op.result, e, llvm::ConstantFP::get(b_.getFloatTy(), 0.0));
      return absl::OkStatus();
    }
    case OpCode::kLoadFragment:
      return LoadFragment(op);
    case OpCode::kMma:
      return Mma(op);
    case OpCode::kStoreFragment:
      return StoreFragment(op);
    default:
      return NotLowered(op);
  }
}

namespace {

// The lane-dependent parts of a fragment element's (row, col): per lane bit,
// what that bit adds. Fails unless the layout is linear in the lane bits.
absl::Status LaneWeights(const ir::Module& m, const ir::Op& op, const dsl::FragGeom& g, int e,
                         std::vector<int>* pr, std::vector<int>* pc) {
  int ws = g.mma->warp_size;
  int r0, c0;
  g.Coord(0, 0, e, &r0, &c0);
  int lane_bits = 0;
  while ((1 << lane_bits) < ws) ++lane_bits;
  for (int b = 0; b < lane_bits; ++b) {
    int r, c;
    g.Coord(0, 1 << b, e, &r, &c);
    pr->push_back(r - r0);
    pc->push_back(c - c0);
  }
  for (int l = 0; l < ws; ++l) {
    int r, c, er = r0, ec = c0;
    g.Coord(0, l, e, &r, &c);
    for (int b = 0; b < lane_bits; ++b) {
      if (l >> b & 1) {
        er += (*pr)[b];
        ec += (*pc)[b];
      }
    }
    if (r != er || c != ec)
      return LoweringError(m, op.loc, "this MMA lane layout is not linear in the lane bits");
  }
  return absl::OkStatus();
}

}  // namespace

Value* Emitter::EmitLanePart(const std::vector<int>& weight, Value* lane) {
  Value* r = C64(0);
  int n = static_cast<int>(weight.size());
  for (int b = 0; b < n;) {
    if (weight[b] == 0) {
      ++b;
      continue;
    }
    int e = b + 1;
    while (e < n && weight[e] == 2 * weight[e - 1]) ++e;
    Value* bits = b_.CreateAnd(b_.CreateLShr(lane, b), C32((1 << (e - b)) - 1));
    r = b_.CreateAdd(r, b_.CreateMul(b_.CreateZExt(bits, b_.getInt64Ty()), C64(weight[b])));
    b = e;
  }
  return r;
}

absl::Status Emitter::FragCoord(const ir::Op& op, int v, int e, Value** row, Value** col) {
  dsl::FragGeom g = VT(v).frag.Geom();
  int ws = g.mma->warp_size;
  int r0, c0;
  g.Coord(0, 0, e, &r0, &c0);
  std::vector<int> pr, pc;
  RETURN_IF_ERROR(LaneWeights(m_, op, g, e, &pr, &pc));
  Value* lane = ws == f_.warp_size ? Lane() : b_.CreateURem(Tid(), C32(ws));
  Value* warp = ws == f_.warp_size && g.first == 0 ? Warp() : WarpGroupUnit(g);
  Value* wr = C64(0);
  Value* wc = C64(0);
  if (g.role != dsl::FragRole::kB)
    wr = b_.CreateMul(b_.CreateZExt(b_.CreateUDiv(warp, C32(g.wn)), b_.getInt64Ty()),
                      C64(g.bm / g.wm));
  if (g.role != dsl::FragRole::kA)
    wc = b_.CreateMul(b_.CreateZExt(b_.CreateURem(warp, C32(g.wn)), b_.getInt64Ty()),
                      C64(g.bn / g.wn));
  *row = b_.CreateAdd(b_.CreateAdd(wr, C64(r0)), EmitLanePart(pr, lane));
  *col = b_.CreateAdd(b_.CreateAdd(wc, C64(c0)), EmitLanePart(pc, lane));
  return absl::OkStatus();
}

absl::Status Emitter::FragCoordFrom(const ir::Op& op, int v, int e, Value* r0, Value* c0,
                                    Value** row, Value** col) {
  RETURN_IF_ERROR(FragCoord(op, v, e, row, col));
  *row = b_.CreateSub(*row, r0);
  *col = b_.CreateSub(*col, c0);
  return absl::OkStatus();
}

void Emitter::FragSetHalves(int v, int e, Value* word) {
  FragSet(v, e, b_.CreateTrunc(word, b_.getInt16Ty()));
  FragSet(v, e + 1, b_.CreateTrunc(b_.CreateLShr(word, 16), b_.getInt16Ty()));
}

absl::Status Emitter::LoadFragmentScalar(const ir::Op& op, const Root& r, const ViewVals& vv) {
  int fv = op.result;
  DType ab = VT(fv).frag.Geom().mma->ab;
  int n = VT(fv).frag.Geom().PerLane();
  for (int e = 0; e < n; ++e) {
    Value *row, *col;
    RETURN_IF_ERROR(FragCoord(op, fv, e, &row, &col));
    Value* x = LoadElem(r, Linear(vv, {row, col}));
    x = Convert(x, r.dt, ab);
    FragSet(fv, e, b_.CreateBitCast(x, b_.getInt16Ty()));
  }
  return absl::OkStatus();
}

// ldmatrix (x4, .trans for B) where the shared tile fits: 16-bit elements,
// unit column stride, rows of 8 elements 16-byte aligned, swizzle keeping
// 8-element chunks together; the element-wise path where it does not, or
// where the view's offset turns out unaligned at run time.
absl::Status Emitter::LoadFragment(const ir::Op& op) {
  int sv = op.operands[0];
  dsl::FragGeom g = VT(op.result).frag.Geom();
  ASSIGN_OR_RETURN(Root r, RootOf(op, sv));
  ViewVals vv = LoadView(sv);
  const ViewFact& f = facts_[sv];
  bool nv16 = !amd_ && g.mma->m == 16 && g.mma->n == 8 && g.mma->k == 16;
  bool base_ok = nv16 && r.kind == ViewFact::Root::kShared && r.dt == g.mma->ab &&
                 f.stride.size() == 2 && (!r.swz.active() || r.swz.m >= 3) &&
                 (g.role == dsl::FragRole::kA || g.TilesN() % 2 == 0);
  bool fits = base_ok && f.stride[1] == 1 && f.stride[0] > 0 && f.stride[0] % 8 == 0;
  // A transposed B view (B[k][n] at n * ld + k, e.g. K^T of a row-major K tile):
  // k runs contiguously, so plain (non-.trans) ldmatrix gives the B layout.
  bool fits_t = base_ok && g.role == dsl::FragRole::kB && f.stride[0] == 1 && f.stride[1] > 0 &&
                f.stride[1] % 8 == 0;
  if (fits_t) fits = true;
  if (!fits) return LoadFragmentScalar(op, r, vv);
  BasicBlock* lm = BasicBlock::Create(ctx_, "ldmatrix", fn_);
  BasicBlock* sc = BasicBlock::Create(ctx_, "ldfrag.scalar", fn_);
  BasicBlock* done = BasicBlock::Create(ctx_, "ldfrag.done", fn_);
  b_.CreateCondBr(b_.CreateICmpEQ(b_.CreateAnd(vv.off, C64(7)), C64(0)), lm, sc);
  b_.SetInsertPoint(sc);
  RETURN_IF_ERROR(LoadFragmentScalar(op, r, vv));
  b_.CreateBr(done);
  b_.SetInsertPoint(lm);
  Value* lane = Lane();
  MatrixLanes l;
  l.warp = Warp();
  l.l8 = b_.CreateZExt(b_.CreateAnd(lane, C32(7)), b_.getInt64Ty());
  l.lb3 = b_.CreateZExt(b_.CreateAnd(b_.CreateLShr(lane, 3), C32(1)), b_.getInt64Ty());
  l.lb4 = b_.CreateZExt(b_.CreateLShr(lane, 4), b_.getInt64Ty());
  if (g.role == dsl::FragRole::kA)
    LoadMatrixA(op, r, vv, l);
  else
    LoadMatrixB(op, r, vv, l, fits_t);
  b_.CreateBr(done);
  b_.SetInsertPoint(done);
  return absl::OkStatus();
}

void Emitter::LoadMatrixA(const ir::Op& op, const Root& r, const ViewVals& vv,
                          const MatrixLanes& l) {
  int fv = op.result;
  dsl::FragGeom g = VT(fv).frag.Geom();
  Value* wr = b_.CreateMul(b_.CreateZExt(b_.CreateUDiv(l.warp, C32(g.wn)), b_.getInt64Ty()),
                           C64(g.bm / g.wm));
  for (int tm = 0; tm < g.TilesM(); ++tm) {
    for (int tk = 0; tk < g.TilesK(); ++tk) {
      Value* row = b_.CreateAdd(b_.CreateAdd(wr, C64(tm * 16)),
                                b_.CreateAdd(l.l8, b_.CreateMul(l.lb3, C64(8))));
      Value* col = b_.CreateAdd(C64(tk * 16), b_.CreateMul(l.lb4, C64(8)));
      Value* res = Call(I::nvvm_ldmatrix_sync_aligned_m8n8_x4_b16,
                        {ElemPtr(r, Linear(vv, {row, col}))}, {r.base->getType()});
      int base = (tm * g.TilesK() + tk) * 8;
      for (int j = 0; j < 4; ++j) FragSetHalves(fv, base + 2 * j, b_.CreateExtractValue(res, j));
    }
  }
}

void Emitter::LoadMatrixB(const ir::Op& op, const Root& r, const ViewVals& vv, const MatrixLanes& l,
                          bool trans_view) {
  int fv = op.result;
  dsl::FragGeom g = VT(fv).frag.Geom();
  Value* wc = b_.CreateMul(b_.CreateZExt(b_.CreateURem(l.warp, C32(g.wn)), b_.getInt64Ty()),
                           C64(g.bn / g.wn));
  for (int tk = 0; tk < g.TilesK(); ++tk) {
    for (int tn = 0; tn < g.TilesN(); tn += 2) {
      Value* row;
      Value* col;
      if (trans_view) {  // lane l addresses memory row n = tn*8 + 8*lb4 + l8, k = tk*16 + 8*lb3
        row = b_.CreateAdd(C64(tk * 16), b_.CreateMul(l.lb3, C64(8)));
        col = b_.CreateAdd(b_.CreateAdd(wc, C64(tn * 8)),
                           b_.CreateAdd(l.l8, b_.CreateMul(l.lb4, C64(8))));
      } else {
        row = b_.CreateAdd(C64(tk * 16), b_.CreateAdd(l.l8, b_.CreateMul(l.lb3, C64(8))));
        col = b_.CreateAdd(b_.CreateAdd(wc, C64(tn * 8)), b_.CreateMul(l.lb4, C64(8)));
      }
      Value* res = Call(trans_view ? I::nvvm_ldmatrix_sync_aligned_m8n8_x4_b16
                                   : I::nvvm_ldmatrix_sync_aligned_m8n8_x4_trans_b16,
                        {ElemPtr(r, Linear(vv, {row, col}))}, {r.base->getType()});
      for (int j = 0; j < 4; ++j) {
        int t = tk * g.TilesN() + tn + j / 2;
        FragSetHalves(fv, t * 4 + 2 * (j % 2), b_.CreateExtractValue(res, j));
      }
    }
  }
}

absl::Status Emitter::StoreFragment(const ir::Op& op) {
  int fv = op.operands[0], dv = op.operands[1];
  dsl::FragGeom g = VT(fv).frag.Geom();
  int n = g.PerLane();
  if (op.operands.size() == 2) {
    std::vector<int> all(n);
    for (int e = 0; e < n; ++e) all[e] = e;
    return StoreFragElems(op, all, C64(0), C64(0));
  }
  // store(acc, dst, at=(i, j)): a switch over the sub-tile within this
  // thread's warp group's part; each case stores the elements (known at
  // compile time) that lie in it. Threads outside the part store nothing.
  const ir::Type& dt = VT(dv);
  int h = static_cast<int>(dt.shape[0]), w = static_cast<int>(dt.shape[1]);
  std::vector<int> part;
  if (!g.PartIndex(h, w, &part))
    return LoweringError(m_, op.loc, "internal: sub-tile not aligned to the accumulator");
  int ni = g.bm / g.wm / h, nj = g.bn / g.wn / w;
  Value* unit = WarpGroupUnit(g);
  Value* i = Get(op.operands[2]);
  Value* j = Get(op.operands[3]);
  Value* li = b_.CreateSub(i, b_.CreateMul(b_.CreateUDiv(unit, C32(g.wn)), C32(ni)));
  Value* lj = b_.CreateSub(j, b_.CreateMul(b_.CreateURem(unit, C32(g.wn)), C32(nj)));
  Value* inside =
      b_.CreateAnd(b_.CreateAnd(b_.CreateICmpSGE(li, C32(0)), b_.CreateICmpSLT(li, C32(ni))),
                   b_.CreateAnd(b_.CreateICmpSGE(lj, C32(0)), b_.CreateICmpSLT(lj, C32(nj))));
  inside = b_.CreateAnd(inside, b_.CreateICmpULT(unit, C32(g.wm * g.wn)));
  Value* sel = b_.CreateSelect(inside, b_.CreateAdd(b_.CreateMul(li, C32(nj)), lj), C32(-1));
  Value* r0 = b_.CreateMul(b_.CreateSExt(i, b_.getInt64Ty()), C64(h));
  Value* c0 = b_.CreateMul(b_.CreateSExt(j, b_.getInt64Ty()), C64(w));
  BasicBlock* done = BasicBlock::Create(ctx_, "store.part.done", fn_);
  llvm::SwitchInst* sw = b_.CreateSwitch(sel, done, ni * nj);
  for (int p = 0; p < ni * nj; ++p) {
    BasicBlock* bb = BasicBlock::Create(ctx_, "store.part", fn_);
    sw->addCase(b_.getInt32(p), bb);
    b_.SetInsertPoint(bb);
    std::vector<int> elems;
    for (int e = 0; e < n; ++e) {
      if (part[e] == p) elems.push_back(e);
    }
    RETURN_IF_ERROR(StoreFragElems(op, elems, r0, c0));
    b_.CreateBr(done);
  }
  b_.SetInsertPoint(done);
  return absl::OkStatus();
}

absl::Status Emitter::StoreFragScalar(const ir::Op& op, const Root& r, const ViewVals& vv,
                                      const std::vector<int>& elems, Value* r0, Value* c0) {
  int fv = op.operands[0];
  for (int e : elems) {
    Value *row, *col;
    RETURN_IF_ERROR(FragCoordFrom(op, fv, e, r0, c0, &row, &col));
    Value* x = Convert(FragGet(fv, e), DType::kF32, r.dt);
    b_.CreateStore(ToMem(x, r.dt), ElemPtr(r, Linear(vv, {row, col})));
  }
  return absl::OkStatus();
}

// Element pairs (e, e+1) at (row, col), (row, col+1) with col even for
// every lane (the C layouts of mma.sync and wgmma) can become one 2-element
// store. A swizzle that moves chunks of 2+ elements keeps each pair together.
bool Emitter::StorePairs(const ir::Op& op, const Root& r, const std::vector<int>& elems) {
  dsl::FragGeom g = VT(op.operands[0]).frag.Geom();
  bool pairs = elems.size() % 2 == 0 && (!r.swz.active() || r.swz.m >= 1) && r.dt != DType::kBool;
  for (size_t k = 0; pairs && k < elems.size(); k += 2) {
    int e = elems[k];
    pairs = elems[k + 1] == e + 1 && e % 2 == 0;
    for (int l = 0; pairs && l < g.mma->warp_size; ++l) {
      int rr0, cc0, rr1, cc1;
      g.Coord(0, l, e, &rr0, &cc0);
      g.Coord(0, l, e + 1, &rr1, &cc1);
      pairs = rr1 == rr0 && cc1 == cc0 + 1 && cc0 % 2 == 0;
    }
  }
  return pairs;
}

// Paired stores run when the destination has unit column stride and even
// offset and row stride (checked at run time): whole 32-byte sectors per quad
// of lanes.
absl::Status Emitter::StoreFragElems(const ir::Op& op, const std::vector<int>& elems, Value* r0,
                                     Value* c0) {
  int fv = op.operands[0], dv = op.operands[1];
  ASSIGN_OR_RETURN(Root r, RootOf(op, dv));
  ViewVals vv = LoadView(dv);
  if (!StorePairs(op, r, elems) || vv.stride.size() != 2)
    return StoreFragScalar(op, r, vv, elems, r0, c0);
  Value* ok = b_.CreateAnd(
      b_.CreateICmpEQ(vv.stride[1], C64(1)),
      b_.CreateICmpEQ(b_.CreateAnd(b_.CreateOr(vv.off, vv.stride[0]), C64(1)), C64(0)));
  BasicBlock* vec = BasicBlock::Create(ctx_, "store.v2", fn_);
  BasicBlock* sc = BasicBlock::Create(ctx_, "store.scalar", fn_);
  BasicBlock* done = BasicBlock::Create(ctx_, "store.done", fn_);
  b_.CreateCondBr(ok, vec, sc);
  b_.SetInsertPoint(vec);
  Type* vt = llvm::FixedVectorType::get(MemTy(r.dt), 2);
  for (size_t k = 0; k < elems.size(); k += 2) {
    int e = elems[k];
    Value *row, *col;
    RETURN_IF_ERROR(FragCoordFrom(op, fv, e, r0, c0, &row, &col));
    Value* x = llvm::UndefValue::get(vt);
    for (int i = 0; i < 2; ++i)
      x = b_.CreateInsertElement(x, Convert(FragGet(fv, e + i), DType::kF32, r.dt), uint64_t(i));
    b_.CreateAlignedStore(x, ElemPtr(r, Linear(vv, {row, col})), llvm::Align(2 * Bytes(r.dt)));
  }
  b_.CreateBr(done);
  b_.SetInsertPoint(sc);
  RETURN_IF_ERROR(StoreFragScalar(op, r, vv, elems, r0, c0));
  b_.CreateBr(done);
  b_.SetInsertPoint(done);
  return absl::OkStatus();
}

}  // namespace argus::codegen::emit
