// verifier/walker.cc: the walker's core — terms, obligations, scalar values,
// the dispatch of an op to its family's handler and to the analyses, and the
// run of one kernel (the walk, then the analyses' checks after it).
#include "verifier/walker.h"

#include <algorithm>
#include <cstdio>

#include "absl/strings/str_cat.h"
#include "base/status.h"
#include "verifier/arith_norm.h"

namespace argus::verifier::engine {

using dsl::ir::OpFamily;

Walker::Walker(const dsl::ir::Module& m, const Function& f, const VerifyOptions& o, Report* r)
    : mod_(m),
      f_(f),
      opt_(o),
      rep_(r),
      solver_(o.solver_timeout_ms, o.solver_rlimit),
      c_(solver_.ctx()) {}

void Walker::Add(Analysis* a) {
  analyses_.push_back(a);
  const FamilySet fs = a->Families();
  for (size_t i = 0; i < by_family_.size(); ++i) {
    if (fs.Has(static_cast<OpFamily>(i))) by_family_[i].push_back(a);
  }
}

// ---- terms

expr Walker::Fresh(const std::string& name, bool is_bool) {
  std::string n = absl::StrCat(name, "#", fresh_++);
  expr v = is_bool ? c_.bool_const(n.c_str()) : c_.int_const(n.c_str());
  inst_.push_back(v);
  inst_ids_.insert(v.id());
  return v;
}

Inst Walker::MakeInst(const std::map<unsigned, expr>& pins) {
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

void Walker::FreeInstVars(const expr& e, std::set<unsigned>* out) {
  std::set<unsigned> seen;
  std::function<void(const expr&)> go = [&](const expr& x) {
    if (!seen.insert(x.id()).second) return;
    if (x.is_const()) {
      if (inst_ids_.count(x.id())) out->insert(x.id());
      return;
    }
    if (x.is_app()) {
      for (unsigned i = 0; i < x.num_args(); ++i) go(x.arg(i));
    } else if (x.is_quantifier()) {
      go(x.body());
    }
  };
  go(e);
}

// ---- obligations

std::string Walker::Src(Loc l) const {
  return std::string(mod_.source ? mod_.source->Line(l.line) : "");
}

std::string Walker::Where(Loc l) const {
  return absl::StrCat(mod_.source ? mod_.source->name() : "", ":", l.line);
}

void Walker::Unsupported(const Op& op, const std::string& what) {
  if (stopped_) return;
  if (deadline_hit_) {  // a query cut short by the deadline, not the construct
    Expired(op);
    return;
  }
  Finding f;
  f.severity = Severity::kUnknown;
  f.check = "unsupported";
  f.message = absl::StrCat("unsupported: ", dsl::ir::OpCodeName(op.code), " at ", Where(op.loc),
                           ": ", what, " (the verifier cannot prove this kernel; it stopped here)");
  f.loc = op.loc;
  f.source_line = Src(op.loc);
  rep_->findings.push_back(f);
  stopped_ = true;
}

bool Walker::Expired(const Op& op) {
  if (stopped_) return true;
  if (!deadline_hit_ && (opt_.deadline_ms <= 0 || NowMs() <= deadline_)) return false;
  Finding f;
  f.severity = Severity::kUnknown;
  f.check = "deadline";
  f.message =
      absl::StrCat("unknown: deadline of ", opt_.deadline_ms, " ms reached at ", Where(op.loc),
                   " (", dsl::ir::OpCodeName(op.code), "); the rest of the kernel was not checked");
  f.loc = op.loc;
  f.source_line = Src(op.loc);
  rep_->findings.push_back(f);
  stopped_ = true;
  return true;
}

absl::StatusOr<ProofResult> Walker::ProveIn(const expr& ob, const Watch& watch) {
  unsigned t = opt_.solver_timeout_ms;
  if (opt_.deadline_ms > 0) {
    int64_t left = std::max<int64_t>(1, deadline_ - NowMs());
    if (left < static_cast<int64_t>(t)) t = static_cast<unsigned>(left);
  }
  solver_.set_timeout_ms(t);
  // Flat div/mod terms (arith_norm.h): the Hopper checks compose loop
  // nests and barrier rounds into nested ones that Z3 is slow on.
  auto r = solver_.Prove(NormalizeDivMod(ob.simplify()), facts_, watch);
  if (r.ok()) rep_->max_steps = std::max(rep_->max_steps, r->steps);
  // An unknown under a timeout cut by the deadline is the deadline's.
  if (t < opt_.solver_timeout_ms && r.ok() && r->verdict == Verdict::kUnknown) deadline_hit_ = true;
  return r;
}

void Walker::Obligation(const std::string& check, const Op& op, const expr& bad, const Watch& watch,
                        const std::function<void(const ProofResult&, Finding*)>& explain,
                        std::optional<expr> rest) {
  if (Expired(op)) return;
  rep_->obligations++;
  auto r = ProveIn(!bad, watch);
  if (deadline_hit_ && Expired(op)) return;
  if (trace_ && r.ok()) {
    std::fprintf(stderr, "[verifier] %s %d:%d %s %.3fs %llu steps\n", check.c_str(), op.loc.line,
                 op.loc.col, VerdictName(r->verdict), r->seconds,
                 static_cast<unsigned long long>(r->steps));
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
    auto r2 = ProveIn(!*rest, watch);
    if (deadline_hit_ && Expired(op)) return;
    if (r2.ok() && r2->verdict == Verdict::kRefuted && opt_.window < 16) {
      needs_window_ = true;
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

Watch Walker::BaseWatch() {
  Watch w;
  w.emplace_back("@tid", tid_base_);
  for (size_t d = 0; d < blk_.size(); ++d) w.emplace_back(absl::StrCat("@b", d), blk_[d]);
  for (int l : loop_stack_) {
    w.emplace_back("@loop:" + loops_[l].name, *loops_[l].var);
    w.emplace_back(absl::StrCat("@n", l), (*loops_[l].var - *loops_[l].lo) / I(loops_[l].step));
  }
  return w;
}

expr Walker::Within() {
  expr w = c_.bool_val(true);
  for (int l : loop_stack_)
    w = w && (*loops_[l].var - *loops_[l].lo) / I(loops_[l].step) < I(opt_.window);
  return w;
}

void Walker::FillThread(const ProofResult& r, Counterexample* cx) {
  cx->thread = M(r, "@tid");
  cx->warp = cx->thread / f_.warp_size;
  cx->lane = cx->thread % f_.warp_size;
  for (size_t d = 0; d < blk_.size(); ++d) cx->block.push_back(M(r, absl::StrCat("@b", d)));
  for (const auto& [k, v] : r.model) {
    if (k.rfind("@loop:", 0) == 0) cx->iterations[k.substr(6)] = v;
  }
}

// ---- values

expr Walker::IntOf(int var) {
  Val& v = vals_[var];
  if (v.k == Val::kInt && v.e) return *v.e;
  if (v.k == Val::kBool && v.e) return z3::ite(*v.e, I(1), I(0));
  expr x = Fresh("opaque");
  return x;
}

expr Walker::BoolOf(int var) {
  Val& v = vals_[var];
  if (v.k == Val::kBool && v.e) return *v.e;
  if (v.k == Val::kInt && v.e) return *v.e != 0;
  return Fresh("cond", true);
}

void Walker::SetScalar(int var, std::optional<expr> e) {
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

void Walker::Havoc(int var) {
  const dsl::ir::Type& t = f_.vars[var].type;
  if (t.is_scalar() && t.dtype == dsl::DType::kBool) {
    SetScalar(var, Fresh(f_.vars[var].name.empty() ? "h" : f_.vars[var].name, true));
  } else if (IsIntType(t)) {
    SetScalar(var, Fresh(f_.vars[var].name.empty() ? "h" : f_.vars[var].name));
  } else if (t.is_scalar()) {
    vals_[var] = Val{};
  }  // views/fragments keep their value (re-bound before use in loops)
}

// ---- the walk

absl::Status Walker::Walk(const Block& b) {
  for (const Op& op : b) {
    ++pos_;
    if (Expired(op)) return absl::CancelledError("verification stopped");
    RETURN_IF_ERROR(Step(op));
    if (stopped_) return absl::CancelledError("verification stopped");
  }
  return absl::OkStatus();
}

absl::Status Walker::Step(const Op& op) {
  if (in_while_) {
    if (std::optional<std::string> why = UnsupportedInWhile(op)) {
      Unsupported(op, *why);
      return absl::OkStatus();
    }
  }
  const std::vector<Analysis*>& subs = by_family_[static_cast<int>(dsl::ir::Info(op.code).family)];
  for (Analysis* a : subs) a->Before(op);
  RETURN_IF_ERROR(Dispatch(op));
  if (stopped_) return absl::OkStatus();
  for (Analysis* a : subs) a->After(op);
  return absl::OkStatus();
}

absl::Status Walker::Dispatch(const Op& op) {
  switch (dsl::ir::Info(op.code).family) {
    case OpFamily::kScalar:
      StepScalar(op);
      return absl::OkStatus();
    case OpFamily::kView:
      StepView(op);
      return absl::OkStatus();
    case OpFamily::kMemory:
      StepMemory(op);
      return absl::OkStatus();
    case OpFamily::kFragment:
      StepFragment(op);
      return absl::OkStatus();
    case OpFamily::kFragmentMath:
      StepFragmentMath(op);
      return absl::OkStatus();
    case OpFamily::kMbarrier:
      StepMbarrier(op);
      return absl::OkStatus();
    case OpFamily::kTma:
      StepTma(op);
      return absl::OkStatus();
    case OpFamily::kWgmma:
      StepWgmma(op);
      return absl::OkStatus();
    case OpFamily::kBarrier:
      StepBarrier(op);
      return absl::OkStatus();
    case OpFamily::kCollective:
      StepCollective(op);
      return absl::OkStatus();
    case OpFamily::kHint:
      return absl::OkStatus();  // scheduling only: no data flow
    case OpFamily::kTag:
      return StepTag(op);
    case OpFamily::kCall:
      StepCall(op);
      return absl::OkStatus();
    case OpFamily::kControl:
      return StepControl(op);
  }
  return absl::OkStatus();
}

void Walker::Accessed(const Op& op, const View& v, const std::vector<expr>& coords,
                      const expr& guard, const std::vector<expr>& elem) {
  const Access a{op, v, coords, guard, elem};
  for (Analysis* x : analyses_) x->Accessed(a);
}

void Walker::Read(const Event& rd) {
  if (defer_reads_ && !post_) {
    deferred_reads_.push_back(rd.id);
    return;
  }
  for (Analysis* x : analyses_) x->Read(rd);
}

// ---- one kernel

void Walker::Start() {
  vals_.assign(f_.vars.size(), Val{});
  for (size_t d = 0; d < f_.dims.size(); ++d) {
    auto it = opt_.dims.find(f_.dims[d]);
    expr v = c_.int_const(("dim:" + f_.dims[d]).c_str());
    if (it != opt_.dims.end()) {
      facts_.push_back(v == I(it->second));
      fixed_dims_.from.push_back(v);
      fixed_dims_.to.push_back(I(it->second));
    } else {
      facts_.push_back(v >= 1 && v <= I(opt_.max_dim));
    }
    // A fixed dim is its value in every term (constant folding keeps the
    // queries linear, e.g. tile loops over cdiv(K, BK) iterations).
    expr dv = it != opt_.dims.end() ? I(it->second) : v;
    dim_.push_back(dv);
    SetScalar(f_.dim_vars[d], dv);
  }
  for (size_t t = 0; t < f_.tensors.size(); ++t) {
    Val v;
    v.k = Val::kView;
    v.view = BaseView(f_.tensors[t], static_cast<int>(t));
    vals_[f_.tensors[t].var] = v;
  }
  FindWrittenTensors();
  for (const auto& s : f_.scalars) Havoc(s.var);
  tid_base_ = Fresh("tid");
  fi_ = c_.int_const("frag:i");
  fj_ = c_.int_const("frag:j");
  tid_ = tid_base_;
  pc_ = tid_base_ >= 0 && tid_base_ < I(f_.threads);
  bar_ = I(0);
  commit_ = I(0);
  for (Analysis* a : analyses_) a->Start();
  ctx_keep_.push_back(*pc_);
  ctx_ = {pc_->id()};
  std::function<void(const Block&)> scan = [&](const Block& b) {
    for (const Op& o : b) {
      if (o.code == OpCode::kTmaLoad) defer_reads_ = true;
      for (const Block& r : o.regions) scan(r);
    }
  };
  scan(f_.body);
}

void Walker::Finish() {
  post_ = true;
  for (Analysis* a : analyses_) {
    if (!stopped_) a->AfterWalk();
  }
  for (int id : deferred_reads_) {
    if (stopped_) break;
    loop_stack_ = events_[id].loops;
    Read(events_[id]);
  }
  loop_stack_.clear();
  for (Analysis* a : analyses_) {
    if (!stopped_) a->AfterReads();
  }
  for (Analysis* a : analyses_) a->Review(rep_);
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
}

absl::Status Walker::Run() {
  Start();
  // launch: the grid, uniform
  for (const Op& op : f_.launch) RETURN_IF_ERROR(Step(op));
  for (size_t d = 0; d < f_.grid.size(); ++d) {
    expr g = IntOf(f_.grid[d]);
    expr b = c_.int_const(absl::StrCat("block", d).c_str());
    facts_.push_back(b >= 0 && b < g);
    blk_.push_back(b);
    grid_.push_back(g);
  }
  // A stopped walk (deadline, unsupported construct) has said why in its
  // finding; the checks after the walk would rest on a partial kernel.
  if (absl::Status w = Walk(f_.body); !w.ok() && !stopped_) return w;
  Finish();
  return absl::OkStatus();
}

}  // namespace argus::verifier::engine
