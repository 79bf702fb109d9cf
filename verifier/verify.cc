#include "verifier/verify.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status.h"
#include "verifier/solver.h"

namespace argus::verifier {
namespace {

using dsl::Loc;
using dsl::ir::Block;
using dsl::ir::Function;
using dsl::ir::Op;
using dsl::ir::OpCode;
using z3::expr;

constexpr int kMaxRank = 4;

struct Tag {  // kind: 0 opaque, 1 data (tensor + coords), 2 custom value (c[0])
  int kind = 0;
  int tensor = -1;
  std::vector<expr> c;
};

struct DimMap {
  bool fixed = true;
  int vdim = -1;  // view dim when !fixed
  std::optional<expr> off;
};

struct View {
  dsl::Space space = dsl::Space::kGlobal;
  int base = -1;  // tensor index / alloc index / -1 local
  std::vector<DimMap> map;
  std::vector<int64_t> ext;  // static extents (-1 dynamic)
  bool ok = false;
};

struct Val {
  enum K { kNone, kInt, kBool, kView, kFrag } k = kNone;
  std::optional<expr> e;
  // data tag of a scalar loaded from global
  int tensor = -1;
  std::vector<expr> coords;
  View view;
  int read_event = -1;  // fragments: the read of their source
  std::optional<dsl::FragGeom> geom;
  bool frag_global = false;
};

struct Event {
  int id = 0, alloc = -1;
  bool write = false, async = false, is_virtual = false;
  std::string field;  // "" data, "*" reset
  const Op* op = nullptr;
  int pos = 0;
  std::vector<int> loops;
  std::optional<expr> guard, thread, bar, commit;
  std::vector<expr> coords;
  std::vector<expr> elem;
  std::vector<int64_t> elem_ext;
  std::vector<int> elem_dim;  // alloc dim that elem j maps to (-1: none)
  std::vector<expr> elem_off;
  Tag value;
  bool has_wait = false;
  std::optional<expr> wait_commit, wait_bar;
  int64_t wait_n = 0;
  std::optional<dsl::FragGeom> geom;  // fragment reads
};

struct LoopInfo {
  const Op* op;
  std::string name;
  std::optional<expr> var, lo;
  int64_t step = 1;
  int pos_begin = 0, pos_end = 0;
};

struct Cand {
  const Event* w;
  expr body, excl;  // body: free writer vars; excl: closed (exists) form
  bool qf;
  Tag tag;
  std::optional<expr> commit, thread;
  std::vector<std::pair<std::string, expr>> iters;  // writer loop vars for the report
  bool window;
};

class Engine {
 public:
  Engine(const dsl::ir::Module& m, const Function& f, const VerifyOptions& o, Report* r)
      : mod_(m), f_(f), opt_(o), rep_(r), solver_(o.solver_timeout_ms), c_(solver_.ctx()) {}

  absl::Status Run();

 private:
  // ---- variables
  expr Fresh(const std::string& name, bool is_bool = false) {
    std::string n = absl::StrCat(name, "#", fresh_++);
    expr v = is_bool ? c_.bool_const(n.c_str()) : c_.int_const(n.c_str());
    inst_.push_back(v);
    return v;
  }
  expr I(int64_t v) { return c_.int_val(static_cast<int64_t>(v)); }

  // An instance: every per-thread variable renamed, some pinned.
  struct Inst {
    z3::expr_vector from, to;
    explicit Inst(z3::context& c) : from(c), to(c) {}
  };
  Inst MakeInst(const std::map<unsigned, expr>& pins) {
    Inst in(c_);
    int id = inst_count_++;
    for (const expr& v : inst_) {
      in.from.push_back(v);
      auto it = pins.find(v.id());
      if (it != pins.end()) {
        in.to.push_back(it->second);
      } else {
        std::string n = absl::StrCat(v.decl().name().str(), "!", id);
        in.to.push_back(v.is_bool() ? c_.bool_const(n.c_str()) : c_.int_const(n.c_str()));
      }
    }
    return in;
  }
  expr Sub(const Inst& in, const expr& e) {
    return const_cast<expr&>(e).substitute(in.from, in.to);
  }

  // ---- helpers
  std::string Src(Loc l) const { return std::string(mod_.source ? mod_.source->Line(l.line) : ""); }
  void Unsupported(const Op& op, const std::string& what) {
    Finding f;
    f.severity = Severity::kUnknown;
    f.check = "unsupported";
    f.message = absl::StrCat("unsupported: ", what, " (the verifier cannot prove this kernel)");
    f.loc = op.loc;
    f.source_line = Src(op.loc);
    rep_->findings.push_back(f);
  }
  expr IntOf(int var) {
    Val& v = vals_[var];
    if (v.k == Val::kInt && v.e) return *v.e;
    if (v.k == Val::kBool && v.e) return z3::ite(*v.e, I(1), I(0));
    expr x = Fresh("opaque");
    return x;
  }
  expr BoolOf(int var) {
    Val& v = vals_[var];
    if (v.k == Val::kBool && v.e) return *v.e;
    if (v.k == Val::kInt && v.e) return *v.e != 0;
    return Fresh("cond", true);
  }
  bool IsIntType(const dsl::ir::Type& t) const {
    return t.is_scalar() && (dsl::IsInt(t.dtype) || t.dtype == dsl::DType::kBool);
  }
  void SetScalar(int var, std::optional<expr> e) {
    Val v;
    const dsl::ir::Type& t = f_.vars[var].type;
    if (e && t.is_scalar() && t.dtype == dsl::DType::kBool) {
      v.k = Val::kBool;
      v.e = e->is_bool() ? *e : (*e != 0);
    } else if (e && IsIntType(t)) {
      v.k = Val::kInt;
      v.e = e->is_bool() ? z3::ite(*e, I(1), I(0)) : *e;
    }
    vals_[var] = v;
  }
  void Havoc(int var) {
    const dsl::ir::Type& t = f_.vars[var].type;
    if (t.is_scalar() && t.dtype == dsl::DType::kBool) {
      SetScalar(var, Fresh(f_.vars[var].name.empty() ? "h" : f_.vars[var].name, true));
    } else if (IsIntType(t)) {
      SetScalar(var, Fresh(f_.vars[var].name.empty() ? "h" : f_.vars[var].name));
    } else if (t.is_scalar()) {
      vals_[var] = Val{};
    }  // views/fragments keep their value (re-bound before use in loops)
  }
  void Assigned(const Block& b, std::set<int>* out) {
    for (const Op& op : b) {
      if (op.result >= 0) out->insert(op.result);
      for (const Block& r : op.regions) Assigned(r, out);
    }
  }
  int CountOps(const Block& b, OpCode code, bool* in_if, bool* dynamic, bool under_if = false) {
    int n = 0;
    for (const Op& op : b) {
      if (op.code == code || (code == OpCode::kBarrier && op.code == OpCode::kBlockReduce)) {
        ++n;
        if (under_if) *in_if = true;
      }
      if (op.code == OpCode::kFor) {
        int inner = CountOps(op.regions[0], code, in_if, dynamic, under_if);
        if (inner) {
          auto lo = ConstOf(op.operands[0]), hi = ConstOf(op.operands[1]);
          if (!lo || !hi) {
            *dynamic = true;
          } else {
            int64_t st = op.ints.empty() ? 1 : op.ints[0];
            n += inner * std::max<int64_t>(0, (*hi - *lo + st - 1) / st);
          }
        }
      } else if (op.code == OpCode::kIf) {
        for (const Block& r : op.regions) n += CountOps(r, code, in_if, dynamic, true);
      } else if (op.code == OpCode::kWhile) {
        for (const Block& r : op.regions) {
          if (CountOps(r, code, in_if, dynamic, true)) *dynamic = true;
        }
      }
    }
    return n;
  }
  std::optional<int64_t> ConstOf(int var) {
    Val& v = vals_[var];
    if (v.k != Val::kInt || !v.e) return std::nullopt;
    expr s = v.e->simplify();
    int64_t x;
    if (s.is_numeral_i64(x)) return x;
    return std::nullopt;
  }

  // ---- views
  View BaseView(const dsl::ir::TensorParam& t, int idx) {
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
  expr SymExt(const dsl::ir::SymInt& s) {
    expr e = I(s.coeff);
    for (int d : s.syms) e = e * dim_[d];
    return e;
  }
  expr BaseExtent(const View& v, int d) {
    if (v.space == dsl::Space::kGlobal) return SymExt(f_.tensors[v.base].shape[d]);
    return I(allocs_[v.base].shape[d]);
  }
  // Base coordinates of view element `idx`.
  std::vector<expr> Coords(const View& v, const std::vector<expr>& idx) {
    std::vector<expr> out;
    for (const DimMap& m : v.map) out.push_back(m.fixed ? *m.off : *m.off + idx[m.vdim]);
    return out;
  }
  expr InBounds(const View& v, const std::vector<expr>& coords) {
    expr ok = c_.bool_val(true);
    for (size_t d = 0; d < coords.size(); ++d)
      ok = ok && coords[d] >= 0 && coords[d] < BaseExtent(v, d);
    return ok;
  }

  // ---- events
  Event& NewEvent(const Op& op, const View& v, bool write) {
    events_.emplace_back();
    Event& e = events_.back();
    e.id = static_cast<int>(events_.size()) - 1;
    e.alloc = v.base;
    e.write = write;
    e.op = &op;
    e.pos = pos_;
    e.loops = loop_stack_;
    e.bar = bar_;
    e.commit = commit_;
    e.thread = tid_;
    e.has_wait = wait_.has_value();
    if (wait_) {
      e.wait_commit = wait_->commit;
      e.wait_bar = wait_->bar;
      e.wait_n = wait_->n;
    }
    return e;
  }
  // Elements of a whole view: fresh index vars with ranges.
  std::vector<expr> ElemVars(const View& v, const std::string& stem, std::vector<int64_t>* ext,
                             expr* range) {
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
  void FillInverse(Event& e, const View& v) {
    e.elem_dim.assign(e.elem.size(), -1);
    e.elem_off.clear();
    for (size_t j = 0; j < e.elem.size(); ++j) e.elem_off.push_back(I(0));
    for (size_t d = 0; d < v.map.size(); ++d) {
      if (!v.map[d].fixed) {
        e.elem_dim[v.map[d].vdim] = static_cast<int>(d);
        e.elem_off[v.map[d].vdim] = *v.map[d].off;
      }
    }
  }

  // ---- checks
  void Obligation(const std::string& check, const Op& op, const expr& bad,
                  const std::vector<std::pair<std::string, expr>>& watch,
                  const std::function<void(const ProofResult&, Finding*)>& explain,
                  std::optional<expr> rest = std::nullopt) {
    rep_->obligations++;
    if (opt_.deadline_ms > 0 && NowMs() > deadline_) {
      if (!deadline_reported_) {
        Finding f;
        f.severity = Severity::kUnknown;
        f.check = check;
        f.message = "unknown: deadline exceeded before this and later obligations were decided";
        f.loc = op.loc;
        rep_->findings.push_back(f);
        deadline_reported_ = true;
      }
      return;
    }
    auto r = solver_.Prove(!bad, facts_, watch);
    if (trace_ && r.ok()) {
      std::fprintf(stderr, "[verifier] %s %d:%d %s %.3fs\n", check.c_str(), op.loc.line, op.loc.col,
                   VerdictName(r->verdict), r->seconds);
    }
    auto unknown = [&](const std::string& why) {
      Finding f;
      f.severity = Severity::kUnknown;
      f.check = check;
      f.message = absl::StrCat("unknown: ", why);
      f.loc = op.loc;
      f.source_line = Src(op.loc);
      rep_->findings.push_back(f);
    };
    if (!r.ok()) return unknown(std::string(r.status().message()));
    if (r->verdict == Verdict::kProved && rest) {
      // `bad` covered the refutations that need no value older than the
      // window; `rest` adds those that do: widen the window before reporting.
      auto r2 = solver_.Prove(!*rest, facts_, watch);
      if (r2.ok() && r2->verdict == Verdict::kRefuted && opt_.window < 16) {
        needs_window = true;
        rep_->proved++;
        return;
      }
      r = std::move(r2);
      if (!r.ok()) return unknown(std::string(r.status().message()));
    }
    if (r->verdict == Verdict::kProved) {
      rep_->proved++;
      return;
    }
    Finding f;
    f.check = check;
    f.loc = op.loc;
    f.source_line = Src(op.loc);
    if (r->verdict == Verdict::kUnknown) {
      f.severity = Severity::kUnknown;
      f.message = absl::StrCat("unknown: the solver gave up (", r->reason, ")");
    } else {
      f.has_cex = true;
      FillThread(*r, &f.cex);
      explain(*r, &f);
    }
    rep_->findings.push_back(f);
  }
  std::vector<std::pair<std::string, expr>> BaseWatch() {
    std::vector<std::pair<std::string, expr>> w;
    w.emplace_back("@tid", tid_base_);
    for (size_t d = 0; d < blk_.size(); ++d) w.emplace_back(absl::StrCat("@b", d), blk_[d]);
    for (int l : loop_stack_) {
      w.emplace_back("@loop:" + loops_[l].name, *loops_[l].var);
      w.emplace_back(absl::StrCat("@n", l), (*loops_[l].var - *loops_[l].lo) / I(loops_[l].step));
    }
    return w;
  }
  // Every enclosing loop is within its first `window` iterations.
  expr Within() {
    expr w = c_.bool_val(true);
    for (int l : loop_stack_)
      w = w && (*loops_[l].var - *loops_[l].lo) / I(loops_[l].step) < I(opt_.window);
    return w;
  }
  void FillThread(const ProofResult& r, Counterexample* cx) {
    auto g = [&](const std::string& k) {
      auto it = r.model.find(k);
      return it == r.model.end() ? int64_t{0} : it->second;
    };
    cx->thread = g("@tid");
    cx->warp = cx->thread / f_.warp_size;
    cx->lane = cx->thread % f_.warp_size;
    for (size_t d = 0; d < blk_.size(); ++d) cx->block.push_back(g(absl::StrCat("@b", d)));
    for (const auto& [k, v] : r.model) {
      if (k.rfind("@loop:", 0) == 0) cx->iterations[k.substr(6)] = v;
    }
  }
  static int64_t M(const ProofResult& r, const std::string& k) {
    auto it = r.model.find(k);
    return it == r.model.end() ? 0 : it->second;
  }
  std::string TagText(const ProofResult& r, const std::string& p, const Tag& t,
                      const std::string& field) {
    if (t.kind == 2) return absl::StrCat(field, "=", M(r, absl::StrCat(p, 0)));
    if (t.kind == 0 && !field.empty())
      return absl::StrCat("no '", field, "' tag (never bound, or reset)");
    int tensor = t.tensor;
    if (t.kind != 1 || tensor < 0)
      return "no tensor tag (reset by reset_tags, or a computed value)";
    std::vector<int64_t> cs;
    for (size_t d = 0; d < f_.tensors[tensor].shape.size(); ++d)
      cs.push_back(M(r, absl::StrCat(p, d)));
    return absl::StrCat(f_.tensors[tensor].name, "(", absl::StrJoin(cs, ","), ")");
  }

  // Writers that may provide the value of alloc element `L` read by `rd`.
  std::vector<Cand> Candidates(const Event& rd, const std::vector<expr>& L,
                               const std::string& field);
  void CheckRead(const Event& rd);
  void CheckAssert(const Op& op);
  void CheckMmaK(const Op& op);
  void CheckRaces();
  void CheckDivergence(const Op& op, const char* what);
  void CheckOob(const Op& op, const View& v, const std::vector<expr>& coords, expr guard,
                const std::vector<expr>& elem);

  absl::Status Walk(const Block& b);
  absl::Status Step(const Op& op);
  absl::Status DoCopy(const Op& op);
  absl::Status DoLoadFragment(const Op& op);

  const dsl::ir::Module& mod_;
  const Function& f_;
  const VerifyOptions& opt_;
  Report* rep_;
  Solver solver_;
  z3::context& c_;
  int fresh_ = 0, inst_count_ = 0, pos_ = 0;
  std::vector<expr> inst_;  // per-thread / per-iteration variables
  std::vector<expr> facts_;
  std::vector<Val> vals_;
  std::vector<expr> dim_;
  std::vector<expr> blk_, grid_;
  std::optional<expr> tid_, pc_, bar_, commit_;
  expr tid_base_{c_};
  std::vector<dsl::ir::Layout> allocs_;
  std::vector<std::string> alloc_names_;
  std::deque<Event> events_;
  std::vector<LoopInfo> loops_;
  std::vector<int> loop_stack_;
  struct Wait {
    expr commit, bar;
    int64_t n;
  };
  std::optional<Wait> wait_;
  bool counts_ok_ = true;

 public:
  // A refutation relied on a value older than the exact window: rerun wider.
  bool needs_window = false;

 private:
  bool deadline_reported_ = false;
  int64_t deadline_ = NowMs() + opt_.deadline_ms;
  static int64_t NowMs() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }
  bool trace_ = std::getenv("ARGUS_VERIFIER_TRACE") != nullptr;
};

std::vector<Cand> Engine::Candidates(const Event& rd, const std::vector<expr>& L,
                                     const std::string& field) {
  std::vector<Cand> out;
  std::vector<const Event*> ws;
  for (const Event& w : events_) {
    if (!w.write || w.alloc != rd.alloc) continue;
    if (!(w.field == field || w.field == "*")) continue;
    ws.push_back(&w);
  }
  std::optional<expr> bind_extra;  // a writer-iteration variable of a "rest" candidate
  auto build = [&](const Event& w, const std::map<unsigned, expr>& pins, expr extra, bool window) {
    // first instance: pins only, to rename offsets
    Inst in = MakeInst(pins);
    std::map<unsigned, expr> pins2 = pins;
    for (size_t j = 0; j < w.elem.size(); ++j) {
      if (w.elem_dim[j] >= 0)
        pins2.emplace(w.elem[j].id(), L[w.elem_dim[j]] - Sub(in, w.elem_off[j]));
    }
    Inst in2 = MakeInst(pins2);
    expr body = Sub(in2, *w.guard) && extra;
    for (size_t d = 0; d < L.size(); ++d) body = body && Sub(in2, w.coords[d]) == L[d];
    Cand c{&w, body, body, true, w.value, Sub(in2, *w.commit), Sub(in2, *w.thread), {}, window};
    c.tag.c.clear();
    for (const expr& x : w.value.c) c.tag.c.push_back(Sub(in2, x));
    for (int l : w.loops) c.iters.emplace_back(loops_[l].name, Sub(in2, *loops_[l].var));
    // free writer variables -> exists
    std::set<unsigned> fresh;
    for (unsigned i = 0; i < in2.to.size(); ++i) {
      if (!pins2.count(in2.from[i].id())) fresh.insert(in2.to[i].id());
    }
    z3::expr_vector bound(c_);
    std::function<void(const expr&)> collect = [&](const expr& e) {
      if (e.is_const() && fresh.count(e.id())) {
        bool dup = false;
        for (unsigned i = 0; i < bound.size(); ++i) dup |= bound[i].id() == e.id();
        if (!dup) bound.push_back(e);
        return;
      }
      if (e.is_app()) {
        for (unsigned i = 0; i < e.num_args(); ++i) collect(e.arg(i));
      }
    };
    collect(body);
    if (bind_extra) bound.push_back(*bind_extra);
    if (bound.size() > 0) {
      c.qf = false;
      c.excl = z3::exists(bound, body);
    }
    out.push_back(c);
  };
  // common loops
  for (int d = 0; d <= opt_.window; ++d) {
    for (auto it = ws.rbegin(); it != ws.rend(); ++it) {
      const Event& w = **it;
      size_t common = 0;
      while (common < w.loops.size() && common < rd.loops.size() &&
             w.loops[common] == rd.loops[common])
        ++common;
      std::map<unsigned, expr> pins;
      for (size_t i = 0; i + 1 < common; ++i)
        pins.emplace(loops_[w.loops[i]].var->id(), *loops_[w.loops[i]].var);
      if (common == 0) {
        if (d > 0 || w.pos >= rd.pos || !w.loops.empty()) continue;
        build(w, pins, c_.bool_val(true), true);
        continue;
      }
      const LoopInfo& lc = loops_[w.loops[common - 1]];
      if (d == 0 && w.pos >= rd.pos) continue;
      if (w.loops.size() != common) continue;  // inner loop of the writer: not exact
      pins.emplace(lc.var->id(), *lc.var - I(d * lc.step));
      build(w, pins, c_.bool_val(true), true);
    }
  }
  // everything older, in no particular order
  for (const Event* wp : ws) {
    const Event& w = *wp;
    size_t common = 0;
    while (common < w.loops.size() && common < rd.loops.size() &&
           w.loops[common] == rd.loops[common])
      ++common;
    Inst probe = MakeInst({});
    (void)probe;
    std::map<unsigned, expr> pins;
    if (common == 0) {
      if (w.pos >= rd.pos || w.loops.empty()) continue;  // straight-line ones are in the window
      build(w, pins, c_.bool_val(true), false);
      continue;
    }
    for (size_t i = 0; i + 1 < common; ++i)
      pins.emplace(loops_[w.loops[i]].var->id(), *loops_[w.loops[i]].var);
    const LoopInfo& lc = loops_[w.loops[common - 1]];
    // writer's instance of the common loop var, older than the window (or
    // any older iteration when the writer sits in an inner loop)
    expr kw = Fresh("kw");
    pins.emplace(lc.var->id(), kw);
    bool inner = w.loops.size() != common;
    expr lim = inner ? (w.pos < rd.pos ? kw <= *lc.var : kw < *lc.var)
                     : kw <= *lc.var - I((opt_.window + 1) * lc.step);
    bind_extra = kw;
    build(w, pins, lim, false);
    bind_extra.reset();
  }
  // writers before the common loop of... (covered above: common==0 with loops)
  return out;
}

void Engine::CheckRead(const Event& rd) {
  // read of async data before its wait_group, and reads of unwritten memory
  std::vector<expr> L = rd.coords;
  auto cands = Candidates(rd, L, "");
  expr none = *rd.guard;
  expr early = c_.bool_val(false), early_def = c_.bool_val(false);
  std::vector<std::pair<std::string, expr>> watch = BaseWatch();
  for (size_t j = 0; j < rd.elem.size(); ++j) watch.emplace_back(absl::StrCat("@e", j), rd.elem[j]);
  watch.emplace_back("@rt", *rd.thread);
  expr prior = c_.bool_val(true);
  for (size_t i = 0; i < cands.size(); ++i) {
    const Cand& c = cands[i];
    if (c.w->async) {
      expr landed = c_.bool_val(false);
      if (rd.has_wait) {
        landed = *c.commit < *rd.wait_commit - I(rd.wait_n) &&
                 (*c.thread == *rd.thread || *rd.bar > *rd.wait_bar);
      }
      expr ind = *rd.guard && prior && c.body && !landed;
      watch.emplace_back(absl::StrCat("@early", i), ind);
      early = early || ind;
      early_def = early_def || (c.window ? ind : ind && Within());
    }
    none = none && !c.excl;
    if (c.window) prior = prior && !c.excl;
  }
  const Op& op = *rd.op;
  Obligation(
      "read_before_wait", op, early_def, watch,
      [&](const ProofResult& r, Finding* f) {
        f->message =
            "shared memory read before the async copy that writes it has landed (missing or too "
            "weak "
            "wait_group, or no barrier after it)";
        for (size_t j = 0; j < rd.elem.size(); ++j)
          f->cex.coordinates.push_back(M(r, absl::StrCat("@e", j)));
        f->cex.thread = M(r, "@rt");
        f->cex.warp = f->cex.thread / f_.warp_size;
        f->cex.lane = f->cex.thread % f_.warp_size;
        for (size_t i = 0; i < cands.size(); ++i) {
          if (M(r, absl::StrCat("@early", i))) {
            f->cex.written_at = cands[i].w->op->loc;
            f->cex.written_source = Src(cands[i].w->op->loc);
            break;
          }
        }
      },
      early);
  bool all_qf = true;
  for (const Cand& c : cands) all_qf &= c.qf;
  (void)all_qf;  // quantified covers are fine here: Z3 decides them or says unknown
  {
    Obligation(
        "uninitialized_read", op, none && Within(), watch,
        [&](const ProofResult& r, Finding* f) {
          f->message = absl::StrCat("read of shared memory '", alloc_names_[rd.alloc],
                                    "' that no earlier write reaches");
          for (size_t j = 0; j < rd.elem.size(); ++j)
            f->cex.coordinates.push_back(M(r, absl::StrCat("@e", j)));
          f->cex.thread = M(r, "@rt");
          f->cex.warp = f->cex.thread / f_.warp_size;
          f->cex.lane = f->cex.thread % f_.warp_size;
          f->cex.actual = "uninitialized";
        },
        none);
  }
}

void Engine::CheckOob(const Op& op, const View& v, const std::vector<expr>& coords, expr guard,
                      const std::vector<expr>& elem) {
  if (v.space == dsl::Space::kLocal || !v.ok) return;
  expr bad = guard && !InBounds(v, coords);
  auto watch = BaseWatch();
  for (size_t d = 0; d < coords.size(); ++d) watch.emplace_back(absl::StrCat("@c", d), coords[d]);
  for (size_t j = 0; j < elem.size(); ++j) watch.emplace_back(absl::StrCat("@e", j), elem[j]);
  std::string name =
      v.space == dsl::Space::kGlobal ? f_.tensors[v.base].name : alloc_names_[v.base];
  Obligation("oob", op, bad, watch, [&, name](const ProofResult& r, Finding* f) {
    std::vector<int64_t> cs;
    for (size_t d = 0; d < coords.size(); ++d) cs.push_back(M(r, absl::StrCat("@c", d)));
    for (size_t j = 0; j < elem.size(); ++j)
      f->cex.coordinates.push_back(M(r, absl::StrCat("@e", j)));
    f->message = absl::StrCat("out-of-bounds access to ",
                              v.space == dsl::Space::kGlobal ? "tensor " : "shared buffer ", name,
                              " at (", absl::StrJoin(cs, ","), ")");
    f->cex.expected = "an index within the shape";
    f->cex.actual = absl::StrCat(name, "(", absl::StrJoin(cs, ","), ")");
  });
}

void Engine::CheckDivergence(const Op& op, const char* what) {
  std::map<unsigned, expr> pins;
  for (int l : loop_stack_) pins.emplace(loops_[l].var->id(), *loops_[l].var);
  Inst in = MakeInst(pins);
  expr t2 = Sub(in, tid_base_);
  expr bad = *pc_ && t2 >= 0 && t2 < I(f_.threads) && !Sub(in, *pc_);
  auto watch = BaseWatch();
  watch.emplace_back("@t2", t2);
  Obligation("barrier_divergence", op, bad, watch, [&](const ProofResult& r, Finding* f) {
    f->message = absl::StrCat(
        what,
        " under thread-dependent control flow: some threads of the block reach it, others do not");
    int64_t t = M(r, "@t2");
    f->cex.other = absl::StrCat("thread ", t, " (warp ", t / f_.warp_size, ", lane ",
                                t % f_.warp_size, ") does not reach it");
  });
}

void Engine::CheckRaces() {
  if (!counts_ok_) return;
  for (size_t a = 0; a < events_.size(); ++a) {
    const Event& w = events_[a];
    if (!w.write || w.field != "" || w.is_virtual) continue;
    for (size_t b = 0; b < events_.size(); ++b) {
      const Event& x = events_[b];
      if (x.alloc != w.alloc || x.is_virtual || (x.write && x.field != "")) continue;
      if (x.write && b < a) continue;
      Inst i1 = MakeInst({}), i2 = MakeInst({});
      expr bad = Sub(i1, *w.guard) && Sub(i2, *x.guard) && Sub(i1, *w.bar) == Sub(i2, *x.bar) &&
                 Sub(i1, *w.thread) != Sub(i2, *x.thread);
      for (size_t d = 0; d < w.coords.size(); ++d)
        bad = bad && Sub(i1, w.coords[d]) == Sub(i2, x.coords[d]);
      std::vector<std::pair<std::string, expr>> watch;
      watch.emplace_back("@tid", Sub(i1, *w.thread));
      watch.emplace_back("@t2", Sub(i2, *x.thread));
      for (size_t d = 0; d < blk_.size(); ++d) watch.emplace_back(absl::StrCat("@b", d), blk_[d]);
      for (size_t d = 0; d < w.coords.size(); ++d)
        watch.emplace_back(absl::StrCat("@c", d), Sub(i1, w.coords[d]));
      for (int l : w.loops) watch.emplace_back("@loop:" + loops_[l].name, Sub(i1, *loops_[l].var));
      for (int l : x.loops) watch.emplace_back("@x:" + loops_[l].name, Sub(i2, *loops_[l].var));
      Obligation("shared_race", *x.op, bad, watch, [&](const ProofResult& r, Finding* f) {
        std::vector<int64_t> cs;
        for (size_t d = 0; d < w.coords.size(); ++d) cs.push_back(M(r, absl::StrCat("@c", d)));
        f->message =
            absl::StrCat("data race on shared buffer '", alloc_names_[w.alloc], "' element (",
                         absl::StrJoin(cs, ","), "): ", x.write ? "written" : "read",
                         " here while another thread writes it, with no barrier between");
        f->cex.coordinates = cs;
        f->cex.written_at = w.op->loc;
        f->cex.written_source = Src(w.op->loc);
        std::vector<std::string> wi;
        for (int l : w.loops)
          wi.push_back(absl::StrCat(loops_[l].name, "=", M(r, "@loop:" + loops_[l].name)));
        f->cex.written_iteration = absl::StrJoin(wi, ",");
        f->cex.iterations.clear();
        for (int l : x.loops) f->cex.iterations[loops_[l].name] = M(r, "@x:" + loops_[l].name);
        int64_t t2 = M(r, "@t2");
        f->cex.thread = t2;
        f->cex.warp = t2 / f_.warp_size;
        f->cex.lane = t2 % f_.warp_size;
        int64_t t1 = M(r, "@tid");
        f->cex.other =
            absl::StrCat("racing write by thread ", t1, " (warp ", t1 / f_.warp_size, ", lane ",
                         t1 % f_.warp_size, ")", w.async ? ", an async copy in flight" : "");
      });
    }
  }
}

// One side of a tag comparison: the tag an element (index `idx`) of a
// fragment or view holds, as candidates (condition, tag) in recency order.
struct Side {
  bool ok = false;
  std::vector<expr> idx;
  std::optional<expr> guard, thread, none;
  std::vector<std::pair<expr, Tag>> cands;  // condition, tag
  std::vector<const Cand*> src;             // writer of each candidate (or null)
  std::vector<Cand> store;
  std::optional<dsl::FragGeom> geom;
};

void Engine::CheckAssert(const Op& op) {
  bool eq = op.code == OpCode::kAssertTagEq;
  std::string field = eq ? "" : op.name;
  auto side = [&](int var, const std::vector<expr>* pin, Side* s) {
    Val& x = vals_[var];
    const Event* rd = nullptr;
    bool global = false;
    View gview;
    if (x.k == Val::kFrag && x.read_event >= 0) {
      rd = &events_[x.read_event];
      global = x.frag_global;
      gview = x.view;
    } else if (x.k == Val::kView && x.view.ok && x.view.space != dsl::Space::kLocal) {
      Event& e = NewEvent(op, x.view, false);
      e.is_virtual = true;
      std::vector<int64_t> ext;
      expr range(c_);
      e.elem = ElemVars(x.view, "i", &ext, &range);
      e.coords = Coords(x.view, e.elem);
      e.guard = *pc_ && range;
      global = x.view.space == dsl::Space::kGlobal;
      if (global) e.alloc = -2;
      gview = x.view;
      rd = &e;
    } else {
      return;
    }
    z3::expr_vector from(c_), to(c_);
    if (pin) {
      if (pin->size() != rd->elem.size()) return;
      for (size_t j = 0; j < pin->size(); ++j) {
        from.push_back(rd->elem[j]);
        to.push_back((*pin)[j]);
      }
    }
    auto P = [&](const expr& e) { return pin ? const_cast<expr&>(e).substitute(from, to) : e; };
    s->ok = true;
    s->geom = rd->geom;
    for (const expr& e : rd->elem) s->idx.push_back(P(e));
    s->guard = P(*rd->guard);
    s->thread = P(*rd->thread);
    if (global) {
      Tag t;
      t.kind = field.empty() ? 1 : 0;
      t.tensor = gview.base;
      for (const expr& c : Coords(gview, rd->elem)) t.c.push_back(P(c));
      s->cands.emplace_back(c_.bool_val(true), t);
      s->src.push_back(nullptr);
      s->none = c_.bool_val(false);
      return;
    }
    s->store = Candidates(*rd, rd->coords, field);
    expr prior = c_.bool_val(true), none = c_.bool_val(true);
    for (const Cand& c : s->store) {
      Tag t = c.tag;
      for (expr& e : t.c) e = P(e);
      s->cands.emplace_back(P(prior && c.body), t);
      s->src.push_back(&c);
      if (c.window) prior = prior && !c.excl;
      none = none && !c.excl;
    }
    s->none = P(none);
  };
  Side a;
  side(op.operands[0], nullptr, &a);
  if (!a.ok) {
    Unsupported(op, "assert_tag on a value the verifier does not track (only fragments and views)");
    return;
  }
  Side b;
  if (eq) {
    side(op.operands[1], &a.idx, &b);
    if (!b.ok) {
      Unsupported(op, "assert_tag_eq on a value the verifier does not track");
      return;
    }
  } else {
    // expected, from the lambda
    if (op.regions.empty() || op.regions[0].empty()) return;
    for (size_t p = 0; p < op.region_params.size() && p < a.idx.size(); ++p)
      SetScalar(op.region_params[p], a.idx[p]);
    for (const Op& o : op.regions[0]) {
      if (o.code != OpCode::kYield) (void)Step(o);
    }
    const Op& y = op.regions[0].back();
    Tag t;
    t.kind = field.empty() ? 1 : 2;
    t.tensor = field.empty() ? static_cast<int>(op.ints.empty() ? -1 : op.ints[0]) : -1;
    for (int v : y.operands) t.c.push_back(IntOf(v));
    b.ok = true;
    b.cands.emplace_back(c_.bool_val(true), t);
    b.src.push_back(nullptr);
    b.none = c_.bool_val(false);
  }
  auto watch = BaseWatch();
  for (size_t j = 0; j < a.idx.size(); ++j) watch.emplace_back(absl::StrCat("@e", j), a.idx[j]);
  watch.emplace_back("@rt", *a.thread);
  auto differ = [&](const Tag& x, const Tag& y) {
    if (x.kind != y.kind || (x.kind == 1 && x.tensor != y.tensor)) return c_.bool_val(true);
    if (x.kind == 0) return c_.bool_val(false);
    expr d = c_.bool_val(false);
    for (size_t i = 0; i < x.c.size() && i < y.c.size(); ++i) d = d || x.c[i] != y.c[i];
    return d;
  };
  expr bad = *a.guard && (*a.none || *b.none);
  expr within = Within();
  expr bad_def = bad && within;
  auto exact = [](const Cand* c) { return !c || c->window; };
  watch.emplace_back("@nonea", *a.guard && *a.none);
  for (size_t i = 0; i < a.cands.size(); ++i) {
    for (size_t j = 0; j < b.cands.size(); ++j) {
      expr ind = *a.guard && a.cands[i].first && b.cands[j].first &&
                 differ(a.cands[i].second, b.cands[j].second);
      watch.emplace_back(absl::StrCat("@w", i, "_", j), ind);
      bad = bad || ind;
      bad_def = bad_def || ((exact(a.src[i]) && exact(b.src[j])) ? ind : ind && within);
    }
    for (size_t d = 0; d < a.cands[i].second.c.size(); ++d)
      watch.emplace_back(absl::StrCat("@a", i, "_", d), a.cands[i].second.c[d]);
  }
  for (size_t j = 0; j < b.cands.size(); ++j) {
    for (size_t d = 0; d < b.cands[j].second.c.size(); ++d)
      watch.emplace_back(absl::StrCat("@b", j, "_", d), b.cands[j].second.c[d]);
  }
  for (size_t i = 0; i < a.src.size(); ++i) {
    if (!a.src[i]) continue;
    for (const auto& [n, v] : a.src[i]->iters)
      watch.emplace_back(absl::StrCat("@wi", i, ":", n), v);
  }
  Obligation(
      eq ? "tag_assert_eq" : "tag_assert", op, bad_def, watch,
      [&](const ProofResult& r, Finding* f) {
        std::vector<int64_t> cs;
        for (size_t j = 0; j < a.idx.size(); ++j) cs.push_back(M(r, absl::StrCat("@e", j)));
        f->cex.coordinates = cs;
        if (a.geom) {
          int64_t t = M(r, "@rt");
          int warp = static_cast<int>(t / f_.warp_size);
          f->cex.thread = t;
          f->cex.warp = warp;
          f->cex.lane = t % f_.warp_size;
          for (int e = 0; e < a.geom->PerLane(); ++e) {
            int rr, cc;
            a.geom->Coord(warp, static_cast<int>(f->cex.lane), e, &rr, &cc);
            if (cs.size() == 2 && rr == cs[0] && cc == cs[1]) {
              f->cex.element = e;
              break;
            }
          }
        }
        f->message = eq ? "assert_tag_eq does not hold: the two sides carry different tags"
                        : "tag assertion does not hold";
        f->cex.actual = "uninitialized (no write reaches it)";
        f->cex.expected = b.cands.size() == 1 ? TagText(r, "@b0_", b.cands[0].second, field)
                                              : "(see the second operand)";
        for (size_t i = 0; i < a.cands.size(); ++i) {
          for (size_t j = 0; j < b.cands.size(); ++j) {
            if (!M(r, absl::StrCat("@w", i, "_", j))) continue;
            f->cex.actual = TagText(r, absl::StrCat("@a", i, "_"), a.cands[i].second, field);
            f->cex.expected = TagText(r, absl::StrCat("@b", j, "_"), b.cands[j].second, field);
            if (const Cand* c = a.src[i]) {
              f->cex.written_at = c->w->op->loc;
              f->cex.written_source = Src(c->w->op->loc);
              std::vector<std::string> wi;
              for (const auto& [n, v] : c->iters)
                wi.push_back(absl::StrCat(n, "=", M(r, absl::StrCat("@wi", i, ":", n))));
              f->cex.written_iteration = absl::StrJoin(wi, ",");
              if (c->w->async) f->message += " (value from an async copy)";
            }
            return;
          }
        }
      },
      bad);
}

void Engine::CheckMmaK(const Op& op) {
  Val& a = vals_[op.operands[1]];
  Val& b = vals_[op.operands[2]];
  if (a.k != Val::kFrag || b.k != Val::kFrag || a.read_event < 0 || b.read_event < 0) return;
  const Event& ra = events_[a.read_event];
  const Event& rb = events_[b.read_event];
  if (ra.elem.size() != 2 || rb.elem.size() != 2 || a.frag_global || b.frag_global) return;
  // A(i, kk) and B(kk, j) for the same kk: instance the B read at the same iteration.
  std::map<unsigned, expr> pins;
  for (int l : loop_stack_) pins.emplace(loops_[l].var->id(), *loops_[l].var);
  pins.emplace(rb.elem[0].id(), ra.elem[1]);
  auto chain = [&](const Event& rd, const std::vector<expr>& L, const Inst* in, expr* kc,
                   expr* ok) {
    auto cands = Candidates(rd, L, "");
    expr val = I(-1), known = c_.bool_val(false);
    for (auto it = cands.rbegin(); it != cands.rend(); ++it) {
      if (!it->window || !it->qf || it->tag.kind != 1) continue;
      const auto& t = it->tag.c;
      // The K coordinate is A's column / B's row of a 2-D tensor; rank-3 tensors
      // (attention's [BH, S, D]) place it elsewhere: no claim about them.
      if (t.size() != 2) continue;
      expr kcoord = &rd == &ra ? t[1] : t[0];
      val = z3::ite(it->body, kcoord, val);
      known = known || it->body;
    }
    (void)in;
    *kc = val;
    *ok = known;
  };
  expr ka(c_), kb(c_), oka(c_), okb(c_);
  chain(ra, ra.coords, nullptr, &ka, &oka);
  Inst in = MakeInst(pins);
  std::vector<expr> Lb;
  for (const expr& x : rb.coords) Lb.push_back(Sub(in, x));
  // resolve B at the renamed coordinates
  Event rb2 = rb;
  rb2.coords = Lb;
  rb2.guard = Sub(in, *rb.guard);
  chain(rb2, Lb, nullptr, &kb, &okb);
  expr bad = *ra.guard && *rb2.guard && oka && okb && ka != kb;
  auto watch = BaseWatch();
  watch.emplace_back("@ka", ka);
  watch.emplace_back("@kb", kb);
  watch.emplace_back("@i", ra.elem[0]);
  watch.emplace_back("@kk", ra.elem[1]);
  Obligation("mma_k_mismatch", op, bad, watch, [&](const ProofResult& r, Finding* f) {
    f->message = "MMA operands disagree on K: the A and B fragments come from different K slices";
    f->cex.coordinates = {M(r, "@i"), M(r, "@kk")};
    f->cex.expected = absl::StrCat("A column k=", M(r, "@ka"));
    f->cex.actual = absl::StrCat("B row k=", M(r, "@kb"));
  });
}

absl::Status Engine::Walk(const Block& b) {
  for (const Op& op : b) {
    ++pos_;
    RETURN_IF_ERROR(Step(op));
  }
  return absl::OkStatus();
}

absl::Status Engine::DoCopy(const Op& op) {
  Val& s = vals_[op.operands[0]];
  Val& d = vals_[op.operands[1]];
  if (s.k != Val::kView || d.k != Val::kView || !s.view.ok || !d.view.ok) {
    Unsupported(op, "copy between views the verifier cannot follow");
    return absl::OkStatus();
  }
  std::vector<int64_t> ext;
  expr range(c_);
  std::vector<expr> el = ElemVars(d.view, "e", &ext, &range);
  const dsl::ir::Layout& tl = op.layout;
  expr t(c_);
  int64_t vec = std::max<int64_t>(1, tl.vec);
  if (tl.shape.size() == 2 && el.size() == 2) {
    t = z3::mod(el[0], I(tl.shape[0])) * I(tl.shape[1]) + z3::mod(el[1] / I(vec), I(tl.shape[1]));
  } else if (tl.shape.size() == 1 && el.size() == 1) {
    t = z3::mod(el[0] / I(vec), I(tl.shape[0]));
  } else {
    Unsupported(op, "copy with this thread-layout rank");
    return absl::OkStatus();
  }
  z3::expr_vector from(c_), to(c_);
  from.push_back(tid_base_);
  to.push_back(t);
  expr g = const_cast<expr&>(*pc_).substitute(from, to) && range && t < I(f_.threads);
  auto sc = Coords(s.view, el);
  auto dc = Coords(d.view, el);
  CheckOob(op, s.view, sc, g, el);
  CheckOob(op, d.view, dc, g, el);
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
    CheckRead(events_[events_.size() - (d.view.space == dsl::Space::kShared ? 2 : 1)]);
  return absl::OkStatus();
}

absl::Status Engine::DoLoadFragment(const Op& op) {
  Val& s = vals_[op.operands[0]];
  Val out;
  out.k = Val::kFrag;
  const dsl::ir::Type& ty = f_.vars[op.result].type;
  dsl::FragGeom g = ty.frag.Geom();
  out.geom = g;
  if (s.k != Val::kView || !s.view.ok) {
    vals_[op.result] = out;
    return absl::OkStatus();
  }
  std::vector<int64_t> ext;
  expr range(c_);
  std::vector<expr> el = ElemVars(s.view, "f", &ext, &range);
  auto coords = Coords(s.view, el);
  // the reading thread of element (i, j): the lane tables of mma.h
  expr thread = Fresh("reader");
  if (el.size() == 2 && g.mma && (g.role == dsl::FragRole::kA || g.role == dsl::FragRole::kB)) {
    const dsl::MmaInfo* mi = g.mma;
    bool isA = g.role == dsl::FragRole::kA;
    int tr = isA ? mi->m : mi->k, tc = isA ? mi->k : mi->n;
    z3::sort is = c_.int_sort();
    int regs = isA ? mi->regs_a : mi->regs_b;
    std::vector<int> table(tr * tc, 0);
    for (int lane = 0; lane < mi->warp_size; ++lane) {
      for (int r = 0; r < regs; ++r) {
        int row, col;
        (isA ? mi->a_coord : mi->b_coord)(lane, r, &row, &col);
        table[row * tc + col] = lane;
      }
    }
    // lane = table[(i % tr) * tc + j % tc], as a balanced ite over the index bits
    expr ix = z3::mod(el[0], I(tr)) * I(tc) + z3::mod(el[1], I(tc));
    std::function<expr(int, int)> tree = [&](int lo, int hi) -> expr {
      if (hi - lo == 1) return I(table[lo]);
      int mid = (lo + hi) / 2;
      return z3::ite(ix < I(mid), tree(lo, mid), tree(mid, hi));
    };
    expr lane = tree(0, tr * tc);
    (void)is;
    expr other = Fresh("wfree");
    expr warp(c_);
    if (isA) {
      warp = (el[0] / I(g.bm / g.wm)) * I(g.wn) + other;
      range = range && other >= 0 && other < I(g.wn);
    } else {
      warp = other * I(g.wn) + el[1] / I(g.bn / g.wn);
      range = range && other >= 0 && other < I(g.wm);
    }
    thread = warp * I(mi->warp_size) + lane;
  }
  CheckOob(op, s.view, coords, *pc_ && range, el);
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
    CheckRead(e);
  }
  vals_[op.result] = out;
  return absl::OkStatus();
}

absl::Status Engine::Step(const Op& op) {
  using dsl::ir::BinOp;
  using dsl::ir::CmpOp;
  using dsl::ir::SpecialOp;
  auto opnd = [&](int i) -> Val& { return vals_[op.operands[i]]; };
  switch (op.code) {
    case OpCode::kConst: {
      const dsl::ir::Type& t = f_.vars[op.result].type;
      if (IsIntType(t)) {
        SetScalar(op.result,
                  t.dtype == dsl::DType::kBool ? c_.bool_val(op.ints[0] != 0) : I(op.ints[0]));
      } else {
        vals_[op.result] = Val{};
      }
      return absl::OkStatus();
    }
    case OpCode::kMov:
      vals_[op.result] = opnd(0);
      return absl::OkStatus();
    case OpCode::kBinary: {
      if (!IsIntType(f_.vars[op.result].type)) {
        vals_[op.result] = Val{};
        return absl::OkStatus();
      }
      if (f_.vars[op.result].type.dtype == dsl::DType::kBool) {
        expr a = BoolOf(op.operands[0]), b = BoolOf(op.operands[1]);
        auto bo = static_cast<BinOp>(op.sub);
        SetScalar(op.result, bo == BinOp::kAnd ? (a && b) : bo == BinOp::kOr ? (a || b) : (a != b));
        return absl::OkStatus();
      }
      expr a = IntOf(op.operands[0]), b = IntOf(op.operands[1]);
      std::optional<expr> r;
      auto bv = [&](const expr& x) { return z3::int2bv(32, x); };
      switch (static_cast<BinOp>(op.sub)) {
        case BinOp::kAdd:
          r = a + b;
          break;
        case BinOp::kSub:
          r = a - b;
          break;
        case BinOp::kMul:
          r = a * b;
          break;
        case BinOp::kDiv:
        case BinOp::kFloorDiv:
          r = a / b;
          break;
        case BinOp::kMod:
          r = z3::mod(a, b);
          break;
        case BinOp::kMin:
          r = z3::ite(a < b, a, b);
          break;
        case BinOp::kMax:
          r = z3::ite(a > b, a, b);
          break;
        case BinOp::kShl:
          r = z3::bv2int(z3::shl(bv(a), bv(b)), false);
          break;
        case BinOp::kShr:
          r = z3::bv2int(z3::lshr(bv(a), bv(b)), false);
          break;
        case BinOp::kAnd:
          r = z3::bv2int(bv(a) & bv(b), false);
          break;
        case BinOp::kOr:
          r = z3::bv2int(bv(a) | bv(b), false);
          break;
        case BinOp::kXor:
          r = z3::bv2int(bv(a) ^ bv(b), false);
          break;
      }
      SetScalar(op.result, r);
      return absl::OkStatus();
    }
    case OpCode::kUnary: {
      if (!IsIntType(f_.vars[op.result].type)) {
        vals_[op.result] = Val{};
        return absl::OkStatus();
      }
      auto u = static_cast<dsl::ir::UnaryOp>(op.sub);
      if (u == dsl::ir::UnaryOp::kNot) {
        SetScalar(op.result, !BoolOf(op.operands[0]));
      } else if (u == dsl::ir::UnaryOp::kNeg) {
        SetScalar(op.result, -IntOf(op.operands[0]));
      } else {
        SetScalar(op.result, Fresh("bitnot"));
      }
      return absl::OkStatus();
    }
    case OpCode::kCompare: {
      if (!IsIntType(f_.vars[op.operands[0]].type)) {
        SetScalar(op.result, Fresh("fcmp", true));
        return absl::OkStatus();
      }
      expr a = IntOf(op.operands[0]), b = IntOf(op.operands[1]);
      std::optional<expr> r;
      r = ApplyCmp(static_cast<CmpOp>(op.sub), a, b);
      SetScalar(op.result, r);
      return absl::OkStatus();
    }
    case OpCode::kSelect: {
      if (!IsIntType(f_.vars[op.result].type)) {
        vals_[op.result] = Val{};
        return absl::OkStatus();
      }
      SetScalar(op.result,
                z3::ite(BoolOf(op.operands[0]), IntOf(op.operands[1]), IntOf(op.operands[2])));
      return absl::OkStatus();
    }
    case OpCode::kCast: {
      const dsl::ir::Type& t = f_.vars[op.result].type;
      if (IsIntType(t) && IsIntType(f_.vars[op.operands[0]].type)) {
        SetScalar(op.result, IntOf(op.operands[0]));
      } else {
        Havoc(op.result);
      }
      return absl::OkStatus();
    }
    case OpCode::kMath:
    case OpCode::kShfl:
    case OpCode::kWarpReduce:
    case OpCode::kCall:
      if (op.result >= 0) Havoc(op.result);
      return absl::OkStatus();
    case OpCode::kBlockReduce:
      CheckDivergence(op, "block_reduce (an implied barrier)");
      bar_ = *bar_ + 1;
      Havoc(op.result);
      return absl::OkStatus();
    case OpCode::kSpecial: {
      switch (static_cast<SpecialOp>(op.sub)) {
        case SpecialOp::kThreadId:
          SetScalar(op.result, *tid_);
          break;
        case SpecialOp::kBlockId: {
          size_t d = static_cast<size_t>(op.ints.empty() ? 0 : op.ints[0]);
          SetScalar(op.result, d < blk_.size() ? blk_[d] : I(0));
          break;
        }
        case SpecialOp::kGridDim: {
          size_t d = static_cast<size_t>(op.ints.empty() ? 0 : op.ints[0]);
          SetScalar(op.result, d < grid_.size() ? grid_[d] : I(1));
          break;
        }
        case SpecialOp::kWarpId:
          SetScalar(op.result, *tid_ / I(f_.warp_size));
          break;
        case SpecialOp::kLaneId:
          SetScalar(op.result, z3::mod(*tid_, I(f_.warp_size)));
          break;
        case SpecialOp::kWarpSize:
          SetScalar(op.result, I(f_.warp_size));
          break;
        case SpecialOp::kWarpGroupId:
          SetScalar(op.result, *tid_ / I(128));
          break;
      }
      return absl::OkStatus();
    }
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
      return absl::OkStatus();
    }
    case OpCode::kAllocLocal: {
      Val v;
      v.k = Val::kView;
      v.view.space = dsl::Space::kLocal;
      v.view.ok = false;
      vals_[op.result] = v;
      return absl::OkStatus();
    }
    case OpCode::kTile:
    case OpCode::kIndex:
    case OpCode::kSlice:
    case OpCode::kTranspose: {
      Val v = opnd(0);
      if (v.k != Val::kView || !v.view.ok) {
        vals_[op.result] = v;
        return absl::OkStatus();
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
        CheckOob(op, w, {}, c_.bool_val(false), {});  // counts nothing
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
      return absl::OkStatus();
    }
    case OpCode::kReshape: {
      Val v = opnd(0);
      if (v.k == Val::kView && v.view.ok) {
        Unsupported(op, "reshape of a tracked view");
        v.view.ok = false;
      }
      vals_[op.result] = v;
      return absl::OkStatus();
    }
    case OpCode::kExtent: {
      Val& v = opnd(0);
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
      return absl::OkStatus();
    }
    case OpCode::kLoad:
    case OpCode::kBufferLoad:
    case OpCode::kStore: {
      Val v = opnd(0);
      bool store = op.code == OpCode::kStore;
      size_t first = store ? 2 : 1;
      Val value = store ? opnd(1) : Val{};
      if (!store) Havoc(op.result);
      if (v.k != Val::kView || !v.view.ok) return absl::OkStatus();
      std::vector<expr> idx;
      for (size_t i = first; i < op.operands.size(); ++i) idx.push_back(IntOf(op.operands[i]));
      if (idx.size() != v.view.ext.size()) return absl::OkStatus();
      auto cs = Coords(v.view, idx);
      if (op.code != OpCode::kBufferLoad) CheckOob(op, v.view, cs, *pc_, {});
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
        if (!store) CheckRead(e);
      } else if (v.view.space == dsl::Space::kGlobal && !store) {
        vals_[op.result].tensor = v.view.base;
        vals_[op.result].coords = cs;
      }
      return absl::OkStatus();
    }
    case OpCode::kCopy:
      return DoCopy(op);
    case OpCode::kCommitGroup:
      commit_ = *commit_ + 1;
      return absl::OkStatus();
    case OpCode::kWaitGroup:
      wait_ = Wait{*commit_, *bar_, op.ints.empty() ? 0 : op.ints[0]};
      return absl::OkStatus();
    case OpCode::kFragment: {
      Val v;
      v.k = Val::kFrag;
      vals_[op.result] = v;
      return absl::OkStatus();
    }
    case OpCode::kLoadFragment:
      return DoLoadFragment(op);
    case OpCode::kMma:
      CheckMmaK(op);
      return absl::OkStatus();
    case OpCode::kStoreFragment: {
      Val& d = opnd(1);
      if (d.k == Val::kView && d.view.ok) {
        std::vector<int64_t> ext;
        expr range(c_);
        auto el = ElemVars(d.view, "s", &ext, &range);
        CheckOob(op, d.view, Coords(d.view, el), *pc_ && range, el);
      }
      return absl::OkStatus();
    }
    case OpCode::kBarrier:
      CheckDivergence(op, "barrier");
      bar_ = *bar_ + 1;
      return absl::OkStatus();
    case OpCode::kHint:
    case OpCode::kYield:
      return absl::OkStatus();
    case OpCode::kTag: {
      Val& v = opnd(0);
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
      Val& v = opnd(0);
      if (v.k == Val::kView && v.view.ok && v.view.space == dsl::Space::kShared) {
        std::vector<int64_t> ext;
        expr range(c_);
        Event& e = NewEvent(op, v.view, true);
        e.field = "*";
        e.is_virtual = true;
        e.elem = ElemVars(v.view, "r", &ext, &range);
        e.coords = Coords(v.view, e.elem);
        e.guard = *pc_ && range;
        FillInverse(e, v.view);
      }
      return absl::OkStatus();
    }
    case OpCode::kAssertTag:
      CheckAssert(op);
      return absl::OkStatus();
    case OpCode::kAssertTagEq:
      CheckAssert(op);
      return absl::OkStatus();
    case OpCode::kReturn:
      Unsupported(op, "return inside a kernel");
      return absl::OkStatus();
    case OpCode::kFor: {
      std::set<int> as;
      Assigned(op.regions[0], &as);
      for (int v : as) {
        if (v != op.result) Havoc(v);
      }
      expr lo = IntOf(op.operands[0]), hi = IntOf(op.operands[1]);
      int64_t step = op.ints.empty() ? 1 : op.ints[0];
      LoopInfo li;
      li.op = &op;
      li.name = f_.vars[op.result].name.empty() ? "it" : f_.vars[op.result].name;
      li.var = Fresh(li.name);
      li.lo = lo;
      li.step = step;
      li.pos_begin = pos_;
      int id = static_cast<int>(loops_.size());
      loops_.push_back(li);
      expr k = *li.var;
      expr range = step > 0 ? (k >= lo && k < hi) : (k <= lo && k > hi);
      if (step != 1) range = range && z3::mod(k - lo, I(std::abs(step))) == 0;
      bool in_if = false, dyn = false;
      int nb = CountOps(op.regions[0], OpCode::kBarrier, &in_if, &dyn);
      int nc = CountOps(op.regions[0], OpCode::kCommitGroup, &in_if, &dyn);
      if ((nb || nc) && (in_if || dyn)) counts_ok_ = false;
      expr n = (k - lo) / I(step);
      expr trip = z3::ite(hi > lo, (hi - lo + I(step - 1)) / I(step), I(0));
      if (step < 0) trip = z3::ite(lo > hi, (lo - hi + I(-step - 1)) / I(-step), I(0));
      expr bar0 = *bar_, com0 = *commit_;
      auto saved_pc = pc_;
      auto saved_wait = wait_;
      bool has_wait = false;
      std::function<void(const Block&)> fw = [&](const Block& b) {
        for (const Op& o : b) {
          if (o.code == OpCode::kWaitGroup) has_wait = true;
          for (const Block& r : o.regions) fw(r);
        }
      };
      fw(op.regions[0]);
      if (has_wait) wait_.reset();
      bar_ = bar0 + n * I(nb);
      commit_ = com0 + n * I(nc);
      pc_ = *pc_ && range;
      SetScalar(op.result, k);
      loop_stack_.push_back(id);
      RETURN_IF_ERROR(Walk(op.regions[0]));
      loop_stack_.pop_back();
      loops_[id].pos_end = pos_;
      pc_ = saved_pc;
      bar_ = bar0 + trip * I(nb);
      commit_ = com0 + trip * I(nc);
      if (has_wait)
        wait_.reset();
      else
        wait_ = saved_wait;
      for (int v : as) Havoc(v);
      return absl::OkStatus();
    }
    case OpCode::kIf: {
      expr cond = BoolOf(op.operands[0]);
      auto saved_pc = pc_;
      std::vector<Val> before = vals_;
      auto wait0 = wait_;
      pc_ = *saved_pc && cond;
      RETURN_IF_ERROR(Walk(op.regions[0]));
      std::vector<Val> then_vals = vals_;
      auto wait1 = wait_;
      vals_ = before;
      wait_ = wait0;
      if (op.regions.size() > 1) {
        pc_ = *saved_pc && !cond;
        RETURN_IF_ERROR(Walk(op.regions[1]));
      }
      pc_ = saved_pc;
      bool waits_differ = (wait1.has_value() != wait_.has_value()) ||
                          (wait1 && wait_ && !z3::eq(wait1->commit, wait_->commit));
      if (waits_differ) wait_.reset();
      for (size_t v = 0; v < vals_.size(); ++v) {
        Val& a = then_vals[v];
        Val& b = vals_[v];
        if (a.k == b.k && (a.k == Val::kInt || a.k == Val::kBool) && a.e && b.e) {
          if (!z3::eq(*a.e, *b.e)) b.e = z3::ite(cond, *a.e, *b.e);
          if (a.tensor != b.tensor) b.tensor = -1;
        } else if (a.k == Val::kFrag || a.k == Val::kView) {
          if (b.k == Val::kNone) b = a;
        } else if (a.k != b.k) {
          Havoc(static_cast<int>(v));
        }
      }
      return absl::OkStatus();
    }
    case OpCode::kMbarrier:
    case OpCode::kMbarArrive:
    case OpCode::kMbarArriveTx:
    case OpCode::kMbarWait:
    case OpCode::kTmaLoad:
    case OpCode::kWgmmaOperand:
    case OpCode::kWgmma:
    case OpCode::kWgmmaCommit:
    case OpCode::kWgmmaWait:
      // Hopper pipelines: not modelled yet (docs/dsl.md lists the invariants).
      if (op.result >= 0) Havoc(op.result);
      Unsupported(op, absl::StrCat(dsl::ir::OpCodeName(op.code), " (Hopper pipelines)"));
      return absl::OkStatus();
    case OpCode::kFragEw:
    case OpCode::kFragRowReduce:
    case OpCode::kFragCoord:
    case OpCode::kFragRowFill:
    case OpCode::kToOperand:
      // Fragment math (flash attention): not modelled yet.
      if (op.result >= 0) Havoc(op.result);
      Unsupported(op, absl::StrCat(dsl::ir::OpCodeName(op.code), " (fragment math)"));
      return absl::OkStatus();
    case OpCode::kFenceProxyAsync:
    case OpCode::kSetMaxNReg:
      return absl::OkStatus();
    case OpCode::kWhile: {
      std::set<int> as;
      for (const Block& r : op.regions) Assigned(r, &as);
      for (int v : as) Havoc(v);
      bool in_if = false, dyn = false;
      bool sync = false;
      for (const Block& r : op.regions) {
        sync |= CountOps(r, OpCode::kBarrier, &in_if, &dyn) > 0 ||
                CountOps(r, OpCode::kCommitGroup, &in_if, &dyn) > 0;
      }
      if (sync) counts_ok_ = false;
      RETURN_IF_ERROR(Walk(op.regions[0]));
      expr cond = BoolOf(op.operands[0]);
      auto saved_pc = pc_;
      pc_ = *pc_ && cond;
      RETURN_IF_ERROR(Walk(op.regions[1]));
      pc_ = saved_pc;
      for (int v : as) Havoc(v);
      return absl::OkStatus();
    }
  }
  return absl::OkStatus();
}

absl::Status Engine::Run() {
  vals_.assign(f_.vars.size(), Val{});
  for (size_t d = 0; d < f_.dims.size(); ++d) {
    auto it = opt_.dims.find(f_.dims[d]);
    expr v = c_.int_const(("dim:" + f_.dims[d]).c_str());
    if (it != opt_.dims.end()) {
      facts_.push_back(v == I(it->second));
    } else {
      facts_.push_back(v >= 1 && v <= I(opt_.max_dim));
    }
    dim_.push_back(v);
    SetScalar(f_.dim_vars[d], v);
  }
  for (size_t t = 0; t < f_.tensors.size(); ++t) {
    Val v;
    v.k = Val::kView;
    v.view = BaseView(f_.tensors[t], static_cast<int>(t));
    vals_[f_.tensors[t].var] = v;
  }
  for (const auto& s : f_.scalars) Havoc(s.var);
  tid_base_ = Fresh("tid");
  tid_ = tid_base_;
  pc_ = tid_base_ >= 0 && tid_base_ < I(f_.threads);
  bar_ = I(0);
  commit_ = I(0);
  // launch: the grid, uniform
  for (const Op& op : f_.launch) RETURN_IF_ERROR(Step(op));
  for (size_t d = 0; d < f_.grid.size(); ++d) {
    expr g = IntOf(f_.grid[d]);
    expr b = c_.int_const(absl::StrCat("block", d).c_str());
    facts_.push_back(b >= 0 && b < g);
    blk_.push_back(b);
    grid_.push_back(g);
  }
  RETURN_IF_ERROR(Walk(f_.body));
  CheckRaces();
  if (!counts_ok_) {
    Finding f;
    f.severity = Severity::kUnknown;
    f.check = "unsupported";
    f.message =
        "unsupported: barriers or commit_group under a conditional, or inside a loop of run-time "
        "trip count nested in "
        "another loop; races and async waits cannot be proved";
    f.loc = f_.loc;
    rep_->findings.push_back(f);
  }
  return absl::OkStatus();
}

std::mutex cache_mu;
std::map<std::string, Report>& Cache() {
  static auto* c = new std::map<std::string, Report>();
  return *c;
}

}  // namespace

absl::StatusOr<Report> Verify(const dsl::ir::Module& module, const VerifyOptions& options) {
  auto start = std::chrono::steady_clock::now();
  std::string key =
      absl::StrCat(std::hash<std::string>()(dsl::ir::Dump(module)), "|", options.max_dim, "|",
                   options.solver_timeout_ms, "|", options.window);
  for (const auto& [k, v] : options.dims) absl::StrAppend(&key, "|", k, "=", v);
  if (options.use_cache) {
    std::lock_guard<std::mutex> l(cache_mu);
    auto it = Cache().find(key);
    if (it != Cache().end()) {
      Report r = it->second;
      r.cached = true;
      return r;
    }
  }
  Report rep;
  rep.file = module.source ? module.source->name() : "";
  std::vector<std::string> names;
  for (const Function& f : module.functions) {
    if (!f.is_kernel) continue;
    names.push_back(f.name);
    try {
      // Widen the exact window while a refutation rests on older values.
      VerifyOptions o = options;
      for (;;) {
        Report kr;
        Engine e(module, f, o, &kr);
        RETURN_IF_ERROR(e.Run());
        if (e.needs_window && o.window < 16) {
          o.window = std::max(1, o.window) * 2;
          continue;
        }
        rep.obligations += kr.obligations;
        rep.proved += kr.proved;
        rep.findings.insert(rep.findings.end(), kr.findings.begin(), kr.findings.end());
        break;
      }
    } catch (const z3::exception& ex) {
      Finding fd;
      fd.severity = Severity::kUnknown;
      fd.check = "solver";
      fd.message = absl::StrCat("unknown: z3 error: ", ex.msg());
      fd.loc = f.loc;
      rep.findings.push_back(fd);
    }
  }
  rep.kernel = absl::StrJoin(names, ",");
  rep.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  bool complete = true;
  for (const Finding& f : rep.findings)
    complete &= f.message.find("deadline exceeded") == std::string::npos;
  if (options.use_cache && complete) {
    std::lock_guard<std::mutex> l(cache_mu);
    Cache()[key] = rep;
  }
  return rep;
}

absl::StatusOr<Report> VerifySource(const std::string& file_name, const std::string& text,
                                    const dsl::CheckOptions& check, const VerifyOptions& options) {
  auto src = std::make_shared<const dsl::SourceFile>(file_name, text);
  ASSIGN_OR_RETURN(dsl::ir::Module m, dsl::Compile(src, check));
  return Verify(m, options);
}

}  // namespace argus::verifier
