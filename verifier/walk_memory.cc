// verifier/walk_memory.cc: memory ops — loads, stores and tile copies (one
// event per shared access, the copy's thread layout giving the thread of each
// element), cp.async groups, fragments (load_fragment's lanes from the mma.h
// tables, stores of fragments) and tag bindings (a tag is a virtual write).
#include "absl/strings/str_cat.h"
#include "base/status.h"
#include "verifier/walker.h"

namespace argus::verifier::engine {

void Walker::StepMemory(const Op& op) {
  switch (op.code) {
    case OpCode::kLoad:
    case OpCode::kBufferLoad:
    case OpCode::kStore:
      StepLoadStore(op);
      return;
    case OpCode::kCopy:
    case OpCode::kThreadCopy:
      StepCopy(op);
      return;
    case OpCode::kCommitGroup:
      commit_ = *commit_ + 1;
      return;
    case OpCode::kWaitGroup:
      wait_ = Wait{*commit_, *bar_, op.ints.empty() ? 0 : op.ints[0]};
      return;
    default:  // not a memory op
      return;
  }
}

void Walker::StepLoadStore(const Op& op) {
  Val v = vals_[op.operands[0]];
  bool store = op.code == OpCode::kStore;
  size_t first = store ? 2 : 1;
  Val value = store ? vals_[op.operands[1]] : Val{};
  if (!store) Havoc(op.result);
  if (v.k != Val::kView) return;
  std::vector<expr> idx;
  for (size_t i = first; i < op.operands.size(); ++i) idx.push_back(IntOf(op.operands[i]));
  if (v.view.space == dsl::Space::kLocal && !v.view.ext.empty() &&
      idx.size() == v.view.ext.size()) {
    // A local array: only its bounds are checked (its values are untracked).
    Accessed(op, v.view, idx, *pc_, {});
    return;
  }
  if (!v.view.ok) return;
  if (idx.size() != v.view.ext.size()) return;
  auto cs = Coords(v.view, idx);
  if (op.code != OpCode::kBufferLoad) Accessed(op, v.view, cs, *pc_, {});
  if (v.view.space == dsl::Space::kShared) {
    Event& e = NewEvent(op, v.view, store);
    e.coords = cs;
    e.guard = *pc_;
    e.elem_dim.clear();
    if (store && value.tensor >= 0) {
      e.value.kind = 1;
      e.value.tensor = value.tensor;
      e.value.c = value.coords;
    }
    if (!store) Read(e);
  } else if (v.view.space == dsl::Space::kGlobal && !store) {
    if (IsIntType(f_.vars[op.result].type) && v.view.base >= 0 &&
        !written_tensors_.count(v.view.base)) {
      // A tensor no thread of the kernel writes holds the same value at
      // a coordinate for every thread and iteration: a function of the
      // coordinates, so that two threads that read one address (an
      // expert id read by a producer and by the consumers) agree.
      z3::sort_vector dom(c_);
      z3::expr_vector args(c_);
      for (const expr& x : cs) {
        dom.push_back(c_.int_sort());
        args.push_back(x);
      }
      z3::func_decl ld = c_.function(absl::StrCat("ld:", f_.tensors[v.view.base].name).c_str(), dom,
                                     c_.int_sort());
      SetScalar(op.result, ld(args));
    }
    vals_[op.result].tensor = v.view.base;
    vals_[op.result].coords = cs;
  }
}

void Walker::StepCopy(const Op& op) {
  Val& s = vals_[op.operands[0]];
  Val& d = vals_[op.operands[1]];
  if (s.k != Val::kView || d.k != Val::kView || !s.view.ok || !d.view.ok) {
    Unsupported(op, "copy between views the verifier cannot follow");
    return;
  }
  std::vector<int64_t> ext;
  expr range(c_);
  std::vector<expr> el = ElemVars(d.view, "e", &ext, &range);
  const dsl::ir::Layout& tl = op.layout;
  expr t(c_);
  int64_t vec = std::max<int64_t>(1, tl.vec);
  expr g(c_);
  if (op.code == OpCode::kThreadCopy) {  // every element by the thread itself
    t = tid_base_;
    g = *pc_ && range;
  } else if (tl.shape.size() == 2 && el.size() == 2) {
    t = z3::mod(el[0], I(tl.shape[0])) * I(tl.shape[1]) + z3::mod(el[1] / I(vec), I(tl.shape[1]));
  } else if (tl.shape.size() == 1 && el.size() == 1) {
    t = z3::mod(el[0] / I(vec), I(tl.shape[0]));
  } else {
    Unsupported(op, "copy with this thread-layout rank");
    return;
  }
  if (op.code == OpCode::kCopy) {  // the thread of each element, under the guard
    z3::expr_vector from(c_), to(c_);
    from.push_back(tid_base_);
    to.push_back(t);
    g = const_cast<expr&>(*pc_).substitute(from, to) && range && t < I(f_.threads);
  }
  auto sc = Coords(s.view, el);
  auto dc = Coords(d.view, el);
  Accessed(op, s.view, sc, g, el);
  Accessed(op, d.view, dc, g, el);
  bool async = !op.ints.empty() && op.ints[0] == 1;
  if (s.view.space == dsl::Space::kShared) {
    Event& e = NewEvent(op, s.view, false);
    e.elem = el;
    e.coords = sc;
    e.guard = g;
    e.thread = t;
  }
  if (d.view.space == dsl::Space::kShared) {
    Event& e = NewEvent(op, d.view, true);
    e.async = async;
    e.elem = el;
    e.elem_ext = ext;
    e.coords = dc;
    e.guard = g;
    e.thread = t;
    FillInverse(e, d.view);
    if (s.view.space == dsl::Space::kGlobal) {
      e.value.kind = 1;
      e.value.tensor = s.view.base;
      e.value.c = sc;
    }
  }
  if (s.view.space == dsl::Space::kShared)
    Read(events_[events_.size() - (d.view.space == dsl::Space::kShared ? 2 : 1)]);
}

void Walker::StepFragment(const Op& op) {
  switch (op.code) {
    case OpCode::kFragment: {
      Val v;
      v.k = Val::kFrag;
      v.ft = FragTags{};  // zero: no contributions yet
      vals_[op.result] = v;
      return;
    }
    case OpCode::kLoadFragment:
      StepLoadFragment(op);
      return;
    case OpCode::kStoreFragment:
      StepStoreFragment(op);
      return;
    default:  // mma: the accumulator's tags are fragment_tags'
      return;
  }
}

void Walker::StepLoadFragment(const Op& op) {
  Val& s = vals_[op.operands[0]];
  Val out;
  out.k = Val::kFrag;
  const dsl::ir::Type& ty = f_.vars[op.result].type;
  dsl::FragGeom g = ty.frag.Geom();
  out.geom = g;
  if (s.k != Val::kView || !s.view.ok) {
    vals_[op.result] = out;
    return;
  }
  std::vector<int64_t> ext;
  expr range(c_);
  std::vector<expr> el = ElemVars(s.view, "f", &ext, &range);
  auto coords = Coords(s.view, el);
  expr thread = FragThread(g, el, &range);
  Accessed(op, s.view, coords, *pc_ && range, el);
  if (s.view.space == dsl::Space::kGlobal) {
    out.frag_global = true;
    out.view = s.view;
    Event& e = NewEvent(op, s.view, false);
    e.is_virtual = true;
    e.alloc = -2;
    e.elem = el;
    e.guard = *pc_ && range;
    e.thread = thread;
    e.geom = g;
    out.read_event = e.id;
  } else if (s.view.space == dsl::Space::kShared) {
    Event& e = NewEvent(op, s.view, false);
    e.elem = el;
    e.coords = coords;
    e.guard = *pc_ && range;
    e.thread = thread;
    e.geom = g;
    out.read_event = e.id;
    Read(e);
  }
  vals_[op.result] = out;
}

void Walker::StepStoreFragment(const Op& op) {
  Val& d = vals_[op.operands[1]];
  if (d.k != Val::kView || !d.view.ok) return;
  std::vector<int64_t> ext;
  expr range(c_);
  auto el = ElemVars(d.view, "s", &ext, &range);
  Accessed(op, d.view, Coords(d.view, el), *pc_ && range, el);
  if (d.view.space == dsl::Space::kShared) {
    // A computed value lands in shared memory: a write (races, the
    // newest value of its elements) whose tag is no tensor's.
    const auto& at = f_.vars[op.operands[0]].type;
    Event& e = NewEvent(op, d.view, true);
    e.elem = el;
    e.elem_ext = ext;
    e.coords = Coords(d.view, el);
    e.guard = *pc_ && range;
    if (at.is_frag()) e.thread = FragThread(at.frag.Geom(), el, &*e.guard);
    FillInverse(e, d.view);
  }
}

// The result is a fragment whose tags fragment_tags binds (from the
// operands, before this op rebinds the result).
void Walker::StepFragmentMath(const Op& op) {
  Val out;
  out.k = Val::kFrag;
  const dsl::ir::Type& rt = f_.vars[op.result].type;
  if (rt.is_frag()) out.geom = rt.frag.Geom();
  vals_[op.result] = out;
}

absl::Status Walker::StepTag(const Op& op) {
  switch (op.code) {
    case OpCode::kTag: {
      Val& v = vals_[op.operands[0]];
      if (v.k != Val::kView || !v.view.ok || v.view.space != dsl::Space::kShared) {
        Unsupported(op, "tag() on a buffer that is not a tracked shared-memory view");
        return absl::OkStatus();
      }
      std::vector<int64_t> ext;
      expr range(c_);
      Event& e = NewEvent(op, v.view, true);
      e.field = op.name;
      e.is_virtual = true;
      e.elem = ElemVars(v.view, "g", &ext, &range);
      e.coords = Coords(v.view, e.elem);
      e.guard = *pc_ && range;
      FillInverse(e, v.view);
      for (size_t p = 0; p < op.region_params.size() && p < e.elem.size(); ++p)
        SetScalar(op.region_params[p], e.elem[p]);
      for (const Op& o : op.regions[0]) {
        if (o.code != OpCode::kYield) RETURN_IF_ERROR(Step(o));
      }
      const Op& y = op.regions[0].back();
      e.value.kind = 2;
      e.value.c = {y.operands.empty() ? I(0) : IntOf(y.operands[0])};
      return absl::OkStatus();
    }
    case OpCode::kResetTags: {
      Val& v = vals_[op.operands[0]];
      if (v.k == Val::kView && v.view.ok && v.view.space == dsl::Space::kShared) {
        std::vector<int64_t> ext;
        expr range(c_);
        Event& e = NewEvent(op, v.view, true);
        e.field.push_back('*');  // "*": a reset (the event is new: field empty)
        e.is_virtual = true;
        e.elem = ElemVars(v.view, "r", &ext, &range);
        e.coords = Coords(v.view, e.elem);
        e.guard = *pc_ && range;
        FillInverse(e, v.view);
      }
      return absl::OkStatus();
    }
    default:  // assertions are tag_asserts'; yield ends a region
      return absl::OkStatus();
  }
}

}  // namespace argus::verifier::engine
