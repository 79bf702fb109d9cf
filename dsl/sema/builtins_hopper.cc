// Hopper (sm_90a) builtins: warp group ids, mbarriers, TMA loads and the TMA
// store epilogue (docs/dsl.md "TMA store epilogue"), warp-group and named
// barriers, the async-proxy fence and register reallocation.
#include "absl/strings/str_cat.h"
#include "base/status.h"
#include "dsl/sema/lowering.h"

namespace argus::dsl::sema {

using ir::OpCode;
using ir::Type;

absl::StatusOr<FnLowering::TmaTile> FnLowering::TmaTensorTile(const Expr& se, const char* what,
                                                              const char* hint) {
  TmaTile tt;
  if (se.kind == ExprKind::kCall && !se.args.empty() && se.args[0]->kind == ExprKind::kAttr &&
      se.args[0]->name == "tile" && se.args[0]->args.size() == 1 &&
      se.args[0]->args[0]->kind == ExprKind::kName) {
    for (size_t i = 0; i < f_->tensors.size(); ++i) {
      if (f_->tensors[i].name == se.args[0]->args[0]->name) tt.tensor = static_cast<int>(i);
    }
  }
  if (tt.tensor < 0)
    return Err(se.loc,
               absl::StrCat(what, " must be T.tile((rows, cols), (i, j)) of a tensor parameter"),
               hint);
  ASSIGN_OR_RETURN(Val sv, Eval(se));
  ASSIGN_OR_RETURN(tt.view, ViewVar(sv, se.loc, what));
  // The tile op just emitted holds [tensor, i, j] and the box shape.
  ir::Op* tile = nullptr;
  for (auto it = cur_->rbegin(); it != cur_->rend(); ++it) {
    if (it->result == tt.view) {
      tile = &*it;
      break;
    }
  }
  const Type st = TypeOf(tt.view);
  if (!tile || tile->code != OpCode::kTile || tile->operands.size() != 3 || st.rank() != 2)
    return Err(se.loc, "a TMA copies 2-D tiles of a rank-2 tensor",
               "write T.tile((rows, cols), (i, j))");
  if (st.shape[0] > 256 || st.shape[1] > 256)
    return Err(se.loc, absl::StrCat("a TMA box is at most 256 per dim, got ", st.ToString()),
               "split the tile into several TMAs");
  // The box may reach past the tensor's edge: the copy engine fills those
  // elements with zeros (loads) or drops them (stores), so ragged shapes need
  // no masking (docs/dsl.md, TMA).
  tile->sub = 1;
  tt.coord0 = tile->operands[1];
  tt.coord1 = tile->operands[2];
  tt.box0 = st.shape[0];
  tt.box1 = st.shape[1];
  return tt;
}

absl::Status FnLowering::TmaSharedSide(const TmaTile& tt, int view, Loc loc, const char* what,
                                       const char* hint) {
  const Type st = TypeOf(tt.view), dt = TypeOf(view);
  if (dt.space != Space::kShared || dt.rank() != 2 || dt.shape != st.shape ||
      dt.dtype != st.dtype) {
    return Err(
        loc,
        absl::StrCat(what, " must be a shared ", st.ToString(), " view, found ", dt.ToString()),
        hint);
  }
  return absl::OkStatus();
}

absl::StatusOr<std::pair<int, int>> FnLowering::BarrierArg(const Expr& e) {
  const Expr* base = &e;
  const Expr* index = nullptr;
  if (e.kind == ExprKind::kSubscript) {
    if (e.args.size() != 2) return Err(e.loc, "a barrier array takes one index", "write bars[s]");
    base = e.args[0].get();
    index = e.args[1].get();
  }
  ASSIGN_OR_RETURN(Val b, Eval(*base));
  if (b.k != Val::K::kVar || !TypeOf(b.var).is_barrier()) {
    return Err(base->loc, absl::StrCat("an mbarrier expected, found ", Found(b)),
               "pass bars[i] of bars = mbarrier(n)");
  }
  int64_t n = TypeOf(b.var).shape[0];
  if (!index) {
    if (n != 1)
      return Err(e.loc, absl::StrCat("an array of ", n, " barriers needs an index"),
                 "write bars[s]");
    ASSIGN_OR_RETURN(int z, Materialize(Val::Int(0, e.loc), e.loc));
    return std::make_pair(b.var, z);
  }
  ASSIGN_OR_RETURN(Val x, Eval(*index));
  if (x.k == Val::K::kInt && (x.i < 0 || x.i >= n))
    return Err(index->loc, absl::StrCat("barrier index ", x.i, " out of range (", n, " barriers)"),
               "index within the array");
  ASSIGN_OR_RETURN(int v, AsIndex(x, index->loc, "barrier index"));
  return std::make_pair(b.var, v);
}

absl::StatusOr<Val> FnLowering::WarpgroupId(const BuiltinCall& c) {
  RETURN_IF_ERROR(RequireHopper(c.loc, c.name));
  return Special(ir::SpecialOp::kWarpGroupId, -1, c.loc);
}

absl::StatusOr<Val> FnLowering::Mbarrier(const BuiltinCall& c) {
  const auto& a = c.args;
  ASSIGN_OR_RETURN(int64_t n, ConstInt(*a[0], "mbarrier count"));
  int64_t arrivals = 1;
  if (a[1]) {
    ASSIGN_OR_RETURN(arrivals, ConstInt(*a[1], "arrivals"));
  }
  if (n < 1 || n > 64)
    return Err(a[0]->loc, absl::StrCat("mbarrier count must be 1..64, got ", n),
               "one barrier per pipeline stage");
  if (arrivals < 1 || arrivals > 1024)
    return Err(a[1]->loc, absl::StrCat("arrivals must be 1..1024, got ", arrivals),
               "count the threads (or warp groups) that arrive per phase");
  if (cur_ != &f_->body)
    return Err(c.loc, "mbarrier() must be called at the kernel's top level",
               "allocate barriers before any if/for, like shared()");
  shared_bytes_ += 8 * n;
  Type t;
  t.kind = ir::TypeKind::kBarrier;
  t.shape = {n};
  int r = NewVar(t);
  Emit(OpCode::kMbarrier, c.loc, r).ints = {n, arrivals};
  return Val::Var(r, c.loc);
}

// mbarrier_arrive(bar) / mbarrier_arrive_expect_tx(bar, nbytes) /
// mbarrier_wait(bar, parity).
absl::StatusOr<Val> FnLowering::MbarrierOp(const BuiltinCall& c) {
  const auto& a = c.args;
  bool wait = c.name == "mbarrier_wait";
  ASSIGN_OR_RETURN(auto bar, BarrierArg(*a[0]));
  std::vector<int> ops = {bar.first, bar.second};
  if (a.size() > 1) {
    ASSIGN_OR_RETURN(Val x, Eval(*a[1]));
    if (x.k == Val::K::kInt && wait && x.i != 0 && x.i != 1)
      return Err(a[1]->loc, absl::StrCat("parity must be 0 or 1, got ", x.i),
                 "write (k // STAGES) % 2");
    if (x.k == Val::K::kInt && !wait && (x.i < 0 || x.i >= (1 << 20)))
      return Err(a[1]->loc, absl::StrCat("transaction bytes must be 0..2^20-1, got ", x.i),
                 "count the bytes of the TMA loads that complete on this barrier");
    ASSIGN_OR_RETURN(int v, Coerce(x, DType::kI32, x.loc, wait ? "parity" : "byte count"));
    ops.push_back(v);
  }
  Emit(c.name == "mbarrier_arrive" ? OpCode::kMbarArrive
       : wait                      ? OpCode::kMbarWait
                                   : OpCode::kMbarArriveTx,
       c.loc, -1, ops);
  return Val::None(c.loc);
}

absl::StatusOr<Val> FnLowering::TmaLoad(const BuiltinCall& c) {
  const auto& a = c.args;
  ASSIGN_OR_RETURN(TmaTile tt,
                   TmaTensorTile(*a[0], "tma_load's source",
                                 "write tma_load(A.tile((BM, BK), (bm, k)), sA[s], full[s])"));
  ASSIGN_OR_RETURN(Val dv, Eval(*a[1]));
  ASSIGN_OR_RETURN(int dst, ViewVar(dv, a[1]->loc, "tma_load destination"));
  ASSIGN_OR_RETURN(auto bar, BarrierArg(*a[2]));
  RETURN_IF_ERROR(
      TmaSharedSide(tt, dst, a[1]->loc, "tma_load destination", "index the stage: sA[s]"));
  std::vector<int> ops = {tt.view, dst, bar.first, bar.second, tt.coord0, tt.coord1};
  Emit(OpCode::kTmaLoad, c.loc, -1, ops).ints = {tt.tensor, tt.box0, tt.box1};
  return Val::None(c.loc);
}

absl::StatusOr<Val> FnLowering::TmaStore(const BuiltinCall& c) {
  const auto& a = c.args;
  // reduce="add": the copy engine adds the tile into the destination
  // (cp.reduce.async.bulk.tensor ... .add), for f32 partial sums (split-K).
  uint8_t reduce = 0;
  if (a[2]) {
    ASSIGN_OR_RETURN(std::string r, ConstStr(*a[2], "reduce="));
    if (r != "add")
      return Err(a[2]->loc, absl::StrCat("unknown tma_store reduction '", r, "'"),
                 "the one reduction is reduce=\"add\" (f32 partial sums)");
    reduce = 1;
  }
  ASSIGN_OR_RETURN(Val sv, Eval(*a[0]));
  ASSIGN_OR_RETURN(int src, ViewVar(sv, a[0]->loc, "tma_store source"));
  ASSIGN_OR_RETURN(TmaTile tt, TmaTensorTile(*a[1], "tma_store's destination",
                                             "write tma_store(sC[b], C.tile((64, 32), (i, j)))"));
  RETURN_IF_ERROR(
      TmaSharedSide(tt, src, a[0]->loc, "tma_store source", "store the sub-tile first"));
  if (reduce && TypeOf(tt.view).dtype != DType::kF32)
    return Err(a[1]->loc,
               absl::StrCat("tma_store(reduce=\"add\") adds into f32 tensors only, found ",
                            TypeOf(tt.view).ToString()),
               "accumulate partial sums in an f32 output (cast afterwards)");
  ir::Op& op = Emit(OpCode::kTmaStore, c.loc, -1, {src, tt.view, tt.coord0, tt.coord1});
  op.sub = reduce;
  op.ints = {tt.tensor, tt.box0, tt.box1};
  return Val::None(c.loc);
}

absl::StatusOr<Val> FnLowering::TmaStoreCommit(const BuiltinCall& c) {
  return EmitBare(OpCode::kTmaStoreCommit, c.loc);
}

absl::StatusOr<Val> FnLowering::TmaStoreWait(const BuiltinCall& c) {
  ASSIGN_OR_RETURN(int64_t n, ConstInt(*c.args[0], "tma_store_wait count"));
  if (n < 0 || n > 63)
    return Err(c.args[0]->loc, absl::StrCat("tma_store_wait count must be 0..63, got ", n),
               "the number of store groups left in flight, e.g. BUFS - 1");
  Emit(OpCode::kTmaStoreWait, c.loc).ints = {n};
  return Val::None(c.loc);
}

absl::StatusOr<Val> FnLowering::WarpgroupBarrier(const BuiltinCall& c) {
  if (f_->threads % 128 != 0)
    return Err(c.loc,
               absl::StrCat("warpgroup_barrier() needs whole warp groups: threads=", f_->threads,
                            " is not a multiple of 128"),
               "launch 128, 256, 384, ... threads");
  return EmitBare(OpCode::kWarpgroupBarrier, c.loc);
}

// named_barrier_sync(id, threads) / named_barrier_arrive(id, threads).
absl::StatusOr<Val> FnLowering::NamedBarrier(const BuiltinCall& c) {
  const auto& a = c.args;
  ASSIGN_OR_RETURN(Val idv, Eval(*a[0]));
  if (idv.k == Val::K::kInt && (idv.i < 1 || idv.i > 15))
    return Err(a[0]->loc, absl::StrCat("named barrier ids are 1..15, got ", idv.i),
               "0 is barrier()'s; warpgroup_barrier() takes 1 + warpgroup_id()");
  ASSIGN_OR_RETURN(int id, Coerce(idv, DType::kI32, idv.loc, "barrier id"));
  ASSIGN_OR_RETURN(int64_t n, ConstInt(*a[1], "named barrier thread count"));
  if (n < 32 || n % 32 != 0 || n > f_->threads)
    return Err(a[1]->loc,
               absl::StrCat("a named barrier counts whole warps: threads must be a multiple of "
                            "32 in 32..",
                            f_->threads, ", got ", n),
               "count every thread that syncs or arrives, e.g. 256 for two warp groups");
  Emit(OpCode::kNamedBarrier, c.loc, -1, {id}).ints = {n, c.name == "named_barrier_sync" ? 1 : 0};
  return Val::None(c.loc);
}

absl::StatusOr<Val> FnLowering::FenceProxyAsync(const BuiltinCall& c) {
  return EmitBare(OpCode::kFenceProxyAsync, c.loc);
}

absl::StatusOr<Val> FnLowering::SetMaxNReg(const BuiltinCall& c) {
  ASSIGN_OR_RETURN(int64_t n, ConstInt(*c.args[0], "register count"));
  if (n < 24 || n > 256 || n % 8 != 0)
    return Err(c.args[0]->loc, absl::StrCat("setmaxnreg takes 24..256 in steps of 8, got ", n),
               "e.g. 40 for a producer, 232 for consumers");
  Emit(OpCode::kSetMaxNReg, c.loc).ints = {n};
  return Val::None(c.loc);
}

}  // namespace argus::dsl::sema
