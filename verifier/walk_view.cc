// verifier/walk_view.cc: allocations and views — a view maps view indexes to
// base coordinates of a tensor or shared buffer (tile, index, slice,
// transpose), with static extents; views move no data.
#include "absl/strings/str_cat.h"
#include "verifier/walker.h"

namespace argus::verifier::engine {

void Walker::StepView(const Op& op) {
  switch (op.code) {
    case OpCode::kAllocShared: {
      Val v;
      v.k = Val::kView;
      v.view.space = dsl::Space::kShared;
      v.view.base = static_cast<int>(allocs_.size());
      v.view.ok = true;
      allocs_.push_back(op.layout);
      alloc_names_.push_back(f_.vars[op.result].name);
      for (size_t d = 0; d < op.layout.shape.size(); ++d) {
        DimMap m;
        m.fixed = false;
        m.vdim = static_cast<int>(d);
        m.off = I(0);
        v.view.map.push_back(m);
        v.view.ext.push_back(op.layout.shape[d]);
      }
      vals_[op.result] = v;
      return;
    }
    case OpCode::kAllocLocal: {
      Val v;
      v.k = Val::kView;
      v.view.space = dsl::Space::kLocal;
      v.view.ok = false;
      // Not tracked as memory (a thread's registers), but indexed in bounds:
      // the extents let the bounds check see a direct index past the end.
      v.view.ext.assign(op.layout.shape.begin(), op.layout.shape.end());
      vals_[op.result] = v;
      return;
    }
    case OpCode::kTile:
    case OpCode::kIndex:
    case OpCode::kSlice:
    case OpCode::kTranspose:
      StepSubview(op);
      return;
    case OpCode::kReshape: {
      Val v = vals_[op.operands[0]];
      if (v.k == Val::kView && v.view.ok) {
        Unsupported(op, "reshape of a tracked view");
        v.view.ok = false;
      }
      vals_[op.result] = v;
      return;
    }
    case OpCode::kExtent:
      StepExtent(op);
      return;
    default:  // not a view op
      return;
  }
}

void Walker::StepSubview(const Op& op) {
  Val v = vals_[op.operands[0]];
  if (v.k != Val::kView || !v.view.ok) {
    // A sub-view of a local array has no extents of its own here.
    if (v.k == Val::kView && v.view.space == dsl::Space::kLocal) v.view.ext.clear();
    vals_[op.result] = v;
    return;
  }
  View& w = v.view;
  if (op.code == OpCode::kTile) {
    for (DimMap& m : w.map) {
      if (m.fixed) continue;
      int j = m.vdim;
      m.off = *m.off + IntOf(op.operands[1 + j]) * I(op.ints[j]);
    }
    w.ext.assign(op.ints.begin(), op.ints.end());
  } else if (op.code == OpCode::kIndex) {
    int dim = static_cast<int>(op.ints[0]);
    expr i = IntOf(op.operands[1]);
    Accessed(op, w, {}, c_.bool_val(false), {});  // counts nothing
    for (DimMap& m : w.map) {
      if (m.fixed) continue;
      if (m.vdim == dim) {
        m.fixed = true;
        m.off = *m.off + i;
      } else if (m.vdim > dim) {
        m.vdim--;
      }
    }
    w.ext.erase(w.ext.begin() + dim);
  } else if (op.code == OpCode::kSlice) {
    int dim = static_cast<int>(op.ints[0]);
    if (op.ints.size() > 1 && op.ints[1] != 1) {
      Unsupported(op, "strided slices");
      w.ok = false;
    }
    for (DimMap& m : w.map) {
      if (!m.fixed && m.vdim == dim) m.off = *m.off + IntOf(op.operands[1]);
    }
    const auto& rt = f_.vars[op.result].type;
    if (dim < rt.rank()) w.ext[dim] = rt.shape[dim];
  } else {
    for (DimMap& m : w.map) {
      if (!m.fixed) m.vdim = 1 - m.vdim;
    }
    std::swap(w.ext[0], w.ext[1]);
  }
  vals_[op.result] = v;
}

void Walker::StepExtent(const Op& op) {
  Val& v = vals_[op.operands[0]];
  int d = static_cast<int>(op.ints[0]);
  if (v.k == Val::kView && v.view.ok && d < static_cast<int>(v.view.ext.size()) &&
      v.view.ext[d] >= 0) {
    SetScalar(op.result, I(v.view.ext[d]));
  } else if (v.k == Val::kView && v.view.ok && v.view.space == dsl::Space::kGlobal) {
    int bd = -1;
    for (size_t i = 0; i < v.view.map.size(); ++i) {
      if (!v.view.map[i].fixed && v.view.map[i].vdim == d) bd = static_cast<int>(i);
    }
    if (bd >= 0) {
      SetScalar(op.result, BaseExtent(v.view, bd) - *v.view.map[bd].off);
    } else {
      Havoc(op.result);
    }
  } else {
    Havoc(op.result);
  }
}

View Walker::BaseView(const dsl::ir::TensorParam& t, int idx) {
  View v;
  v.space = dsl::Space::kGlobal;
  v.base = idx;
  v.ok = true;
  for (size_t d = 0; d < t.shape.size(); ++d) {
    DimMap m;
    m.fixed = false;
    m.vdim = static_cast<int>(d);
    m.off = I(0);
    v.map.push_back(m);
    v.ext.push_back(-1);
  }
  return v;
}
// The global tile a TMA load or store moves: tensor op.ints[0], box
// op.ints[1] x op.ints[2], box coordinates in operands first_coord and the
// next one.
View Walker::TmaTileView(const Op& op, size_t first_coord) {
  const int tensor = static_cast<int>(op.ints[0]);
  const int64_t box0 = op.ints[1], box1 = op.ints[2];
  View v = BaseView(f_.tensors[tensor], tensor);
  v.map[0].off = IntOf(op.operands[first_coord]) * I(box0);
  v.map[1].off = IntOf(op.operands[first_coord + 1]) * I(box1);
  v.ext = {box0, box1};
  return v;
}
expr Walker::SymExt(const dsl::ir::SymInt& s) {
  expr e = I(s.coeff);
  for (int d : s.syms) e = e * dim_[d];
  return e;
}
expr Walker::BaseExtent(const View& v, int d) {
  if (v.space == dsl::Space::kGlobal) return SymExt(f_.tensors[v.base].shape[d]);
  return I(allocs_[v.base].shape[d]);
}
// Base coordinates of view element `idx`.
std::vector<expr> Walker::Coords(const View& v, const std::vector<expr>& idx) {
  std::vector<expr> out;
  for (const DimMap& m : v.map) out.push_back(m.fixed ? *m.off : *m.off + idx[m.vdim]);
  return out;
}
std::vector<expr> Walker::ElemVars(const View& v, const std::string& stem,
                                   std::vector<int64_t>* ext, expr* range) {
  std::vector<expr> el;
  *range = c_.bool_val(true);
  for (size_t j = 0; j < v.ext.size(); ++j) {
    expr x = Fresh(absl::StrCat(stem, j));
    el.push_back(x);
    ext->push_back(v.ext[j]);
    *range = *range && x >= 0 && x < I(v.ext[j]);
  }
  return el;
}

}  // namespace argus::verifier::engine
