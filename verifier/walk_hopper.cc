// verifier/walk_hopper.cc: the Hopper ops' data flow — mbarrier arrays (a
// value naming the array), TMA loads (async writes of a global tile into a
// shared buffer) and stores (reads of a shared buffer), the proxy fence, and
// wgmma operand reads; and the block barriers and collectives that count
// barrier intervals. Their phases, groups and epilogue are the analyses'.
#include "absl/strings/str_cat.h"
#include "verifier/walker.h"

namespace argus::verifier::engine {
namespace {

// Whether a TMA box element at `coords` lies inside the tensor of extents
// `ext` (boxes may reach past the edge; a negative coordinate stays out of
// bounds).
expr Below(const std::vector<expr>& coords, const std::vector<expr>& ext) {
  expr in = coords[0] < ext[0];
  for (size_t d = 1; d < coords.size(); ++d) in = in && coords[d] < ext[d];
  return in;
}

}  // namespace

std::optional<std::string> Walker::UnsupportedInWhile(const Op& op) {
  // The phase, group and epilogue models count these per iteration of a for
  // loop; a while loop has no iteration variable.
  switch (op.code) {
    case OpCode::kMbarArrive:
    case OpCode::kMbarArriveTx:
    case OpCode::kMbarWait:
      return "an mbarrier operation inside a while loop";
    case OpCode::kTmaLoad:
      return "a TMA load inside a while loop";
    case OpCode::kWgmma:
      return "wgmma inside a while loop";
    case OpCode::kTmaStore:
    case OpCode::kTmaStoreCommit:
    case OpCode::kTmaStoreWait:
    case OpCode::kWarpgroupBarrier:
      return absl::StrCat(dsl::ir::OpCodeName(op.code), " inside a while loop");
    default:
      return std::nullopt;
  }
}

void Walker::StepMbarrier(const Op& op) {
  if (op.code != OpCode::kMbarrier) return;  // arrive and wait: mbarrier_phases'
  // Initialization implies a barrier.
  bar_ = *bar_ + 1;
  Val v;
  v.k = Val::kBar;
  v.bar = mbarrier_arrays_++;
  vals_[op.result] = v;
}

void Walker::StepTma(const Op& op) {
  switch (op.code) {
    case OpCode::kTmaLoad:
      StepTmaLoad(op);
      return;
    case OpCode::kTmaStore:
      StepTmaStore(op);
      return;
    case OpCode::kFenceProxyAsync:
      // Orders this thread's earlier ordinary shared writes (in an enclosing
      // control context) before later async-proxy reads.
      for (Event& e : events_) {
        if (!e.write || e.tma || e.is_virtual || e.alloc < 0 || e.fence_bar) continue;
        if (e.loops.size() < loop_stack_.size() ||
            !std::equal(loop_stack_.begin(), loop_stack_.end(), e.loops.begin()))
          continue;
        if (std::find(e.ctx.begin(), e.ctx.end(), pc_->id()) == e.ctx.end()) continue;
        e.fence_bar = *bar_;
      }
      return;
    default:  // bulk groups: the epilogue's
      return;
  }
}

void Walker::StepTmaLoad(const Op& op) {
  Val& d = vals_[op.operands[1]];
  Val& bv = vals_[op.operands[2]];
  if (op.ints.size() < 3 || op.operands.size() < 6 || bv.k != Val::kBar || d.k != Val::kView ||
      !d.view.ok || d.view.space != dsl::Space::kShared || d.view.ext.size() != 2) {
    Unsupported(op, "a TMA load the verifier cannot follow (its destination or barrier)");
    return;
  }
  View sv = TmaTileView(op, 4);
  std::vector<int64_t> ext;
  expr range(c_);
  std::vector<expr> el = ElemVars(d.view, "t", &ext, &range);
  expr g = *pc_ && range;
  auto sc = Coords(sv, el);
  auto dc = Coords(d.view, el);
  // The box may reach past the tensor's edge: the copy engine fills those
  // elements with zeros, which keep their (padded) coordinates as tags, so
  // only the elements inside the tensor are reads of it; all must fit the
  // shared buffer.
  Accessed(op, sv, sc, g && Below(sc, {BaseExtent(sv, 0), BaseExtent(sv, 1)}), el);
  Accessed(op, d.view, dc, g, el);
  Event& e = NewEvent(op, d.view, true);
  e.async = true;
  e.tma = true;
  e.elem = el;
  e.elem_ext = ext;
  e.coords = dc;
  e.guard = g;
  e.thread = tid_;
  FillInverse(e, d.view);
  e.value.kind = 1;
  e.value.tensor = sv.base;
  e.value.c = sc;
}

void Walker::StepTmaStore(const Op& op) {
  Val& s = vals_[op.operands[0]];
  if (op.ints.size() < 3 || op.operands.size() < 4 || s.k != Val::kView || !s.view.ok ||
      s.view.space != dsl::Space::kShared || s.view.ext.size() != 2) {
    Unsupported(op, "a TMA store the verifier cannot follow (its source)");
    return;
  }
  View gv = TmaTileView(op, 2);
  std::vector<int64_t> ext;
  expr range(c_);
  std::vector<expr> el = ElemVars(s.view, "u", &ext, &range);
  expr g = *pc_ && range;
  std::vector<expr> gc = Coords(gv, el);
  Accessed(op, gv, gc, g && Below(gc, {BaseExtent(gv, 0), BaseExtent(gv, 1)}),
           el);  // the copy engine clips the rest
  Accessed(op, s.view, Coords(s.view, el), g, el);
}

void Walker::StepWgmma(const Op& op) {
  if (op.code == OpCode::kWgmmaOperand) StepWgmmaOperand(op);
}

void Walker::StepWgmmaOperand(const Op& op) {
  Val& s = vals_[op.operands[0]];
  Val out;
  out.k = Val::kFrag;
  const dsl::ir::Type& ty = f_.vars[op.result].type;
  bool isA = ty.frag.role == dsl::FragRole::kA;
  if (s.k != Val::kView || !s.view.ok || s.view.space != dsl::Space::kShared) {
    Unsupported(op, "a wgmma operand from a view the verifier does not track");
    vals_[op.result] = out;
    return;
  }
  int rows = ty.frag.rows, cols = ty.frag.cols;
  expr i = Fresh("w0"), j = Fresh("w1");
  expr range = i >= 0 && i < I(rows) && j >= 0 && j < I(cols);
  std::vector<expr> idx;
  if (s.view.ext.size() == 2) {
    idx = {i, j};
  } else if (s.view.ext.size() == 3 && !isA) {
    idx = {j / I(64), i, z3::mod(j, I(64))};  // (BN/64, BK, 64) column blocks
  } else {
    Unsupported(op, "a wgmma operand view of this rank");
    vals_[op.result] = out;
    return;
  }
  auto coords = Coords(s.view, idx);
  // The warp group that consumes element (i, j) (the symbolic thread is one
  // of its threads): A rows and B columns are split like the accumulator.
  expr other = Fresh("wgfree");
  expr wg(c_);
  int wm = std::max(1, ty.frag.wm), wn = std::max(1, ty.frag.wn);
  int bm = std::max(1, ty.frag.bm), bn = std::max(1, ty.frag.bn);
  if (isA) {
    wg = I(ty.frag.first) + (i / I(std::max(1, bm / wm))) * I(wn) + other;
    range = range && other >= 0 && other < I(wn);
  } else {
    wg = I(ty.frag.first) + other * I(wn) + j / I(std::max(1, bn / wn));
    range = range && other >= 0 && other < I(wm);
  }
  expr guard = *pc_ && range && tid_base_ / I(128) == wg;
  Accessed(op, s.view, coords, guard, {i, j});
  Event& e = NewEvent(op, s.view, false);
  e.elem = {i, j};
  e.coords = coords;
  e.guard = guard;
  e.thread = tid_;
  e.wgmma_read = true;
  out.read_event = e.id;
  Read(e);
  vals_[op.result] = out;
}

void Walker::StepBarrier(const Op& op) {
  if (op.code == OpCode::kBarrier) bar_ = *bar_ + 1;
}

void Walker::StepCollective(const Op& op) {
  if (op.code == OpCode::kBlockReduce) {  // an implied barrier
    bar_ = *bar_ + 1;
    Havoc(op.result);
    return;
  }
  if (op.result >= 0) Havoc(op.result);
}

}  // namespace argus::verifier::engine
