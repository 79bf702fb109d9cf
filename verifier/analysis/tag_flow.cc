// verifier/analysis/tag_flow.cc: where stored accumulator elements land
// (see tag_flow.h).
#include "verifier/analysis/tag_flow.h"

#include "absl/strings/str_cat.h"

namespace argus::verifier::engine {

void TagFlow::Before(const Op& op) {
  if (op.code != OpCode::kFragEw) return;
  std::set<int> accs;
  for (int x : op.operands) {
    const auto& xt = f_.vars[x].type;
    if (auto d = ew_accs_.find(x); d != ew_accs_.end()) {
      accs.insert(d->second.begin(), d->second.end());
    } else if (xt.is_frag() && xt.frag.role == dsl::FragRole::kAcc) {
      accs.insert(x);
    }
  }
  ew_accs_.insert_or_assign(op.result, accs);
}

void TagFlow::After(const Op& op) {
  if (op.code == OpCode::kWgmmaOperand) wg_operand_acc_[op.result] = op.operands[1];
}

void TagFlow::Accessed(const Access& a) {
  const Op& op = a.op;
  const View& v = a.view;
  if (op.code != OpCode::kStoreFragment || v.space != dsl::Space::kGlobal) return;
  const auto& ft = f_.vars[op.operands[0]].type;
  if (op.operands.size() == 2 && ft.is_frag() && a.elem.size() == 2 && v.ext[0] == ft.frag.rows &&
      v.ext[1] == ft.frag.cols) {
    // The whole fragment into a global tile: element (i, j) to the
    // tile's (i, j), which must be where its accumulators' tags say.
    CheckPlacement(op, op.operands[0], a.elem[0], a.elem[1], a.coords, f_.tensors[v.base].name,
                   a.guard, w_.loop_stack(), &op);
  }
}

void TagFlow::RecordOperandTag(int var, const std::vector<expr>& idx, const Tag& t) {
  auto it = wg_operand_acc_.find(var);
  if (it == wg_operand_acc_.end() || idx.size() != 2 || t.c.size() != 2) return;
  bool is_a = f_.vars[var].type.frag.role == dsl::FragRole::kA;
  OperandTag ot;
  ot.param = idx[is_a ? 0 : 1];
  // The output row (A) or column (B) is the tag coordinate that depends on
  // the operand's row (A) or column (B): A(m, k) and B(k, n) as stored, or the
  // other coordinate of an operand stored transposed (nn.Linear's B(n, k)).
  int pick = is_a ? 0 : 1;
  std::set<unsigned> fv0, fv1;
  w_.FreeInstVars(t.c[0], &fv0);
  w_.FreeInstVars(t.c[1], &fv1);
  const unsigned pid = ot.param->id();
  if (fv0.count(pid) && !fv1.count(pid)) pick = 0;
  if (fv1.count(pid) && !fv0.count(pid)) pick = 1;
  ot.coord = t.c[pick];
  ot.loops = w_.loop_stack();
  op_tags_.insert_or_assign({it->second, is_a}, ot);
}

void TagFlow::CheckPlacement(const Op& store, int stored, const expr& R, const expr& C,
                             const std::vector<expr>& gc, const std::string& tname,
                             const expr& guard, const std::vector<int>& loops,
                             const Op* written_at) {
  // Element (R, C) of an accumulator belongs at the output row of A's operand
  // row R and the column of B's operand column C (the proved assert_tags of
  // the wgmmas that accumulated it). A fragment made of accumulators element
  // by element (silu(g) * u) belongs where each of them puts it.
  std::vector<int> accs;
  if (auto d = ew_accs_.find(stored); d != ew_accs_.end()) {
    accs.assign(d->second.begin(), d->second.end());
  } else {
    accs.push_back(stored);
  }
  // The row of A may depend only on the operand row and the loops around the
  // store (not on K), the column of B likewise.
  std::set<unsigned> allowed;
  for (int l : loops) allowed.insert(w_.loops()[l].var->id());
  for (const int acc : accs) {
    auto ta = op_tags_.find({acc, true}), tb = op_tags_.find({acc, false});
    if (ta == op_tags_.end() || tb == op_tags_.end()) continue;  // nothing asserted: not checked
    bool ok = true;
    for (const auto* ot : {&ta->second, &tb->second}) {
      std::set<unsigned> fv;
      w_.FreeInstVars(*ot->coord, &fv);
      for (unsigned id : fv) ok = ok && (id == ot->param->id() || allowed.count(id));
    }
    if (!ok) {
      Unsupported(store,
                  absl::StrCat(store.code == OpCode::kTmaStore ? "TMA-store epilogue: " : "",
                               "the wgmma operand tags' output row / column depend on more than "
                               "the operand row / column and the loops around the store (tag "
                               "flow not checked)"));
      continue;
    }
    auto subst = [&](const OperandTag& ot, const expr& v) {
      z3::expr_vector from(c_), to(c_);
      from.push_back(*ot.param);
      to.push_back(v);
      return const_cast<expr&>(*ot.coord).substitute(from, to);
    };
    expr er = subst(ta->second, R), ec = subst(tb->second, C);
    auto watch = BaseWatch();
    watch.emplace_back("@R", R);
    watch.emplace_back("@C", C);
    watch.emplace_back("@er", er);
    watch.emplace_back("@ec", ec);
    watch.emplace_back("@gr", gc[0]);
    watch.emplace_back("@gc", gc[1]);
    Obligation("tag_flow", store, guard && (gc[0] != er || gc[1] != ec), watch,
               [&](const ProofResult& r, Finding* f) {
                 f->message = absl::StrCat(
                     store.code == OpCode::kTmaStore ? "tma_store" : "store", " writes element (",
                     M(r, "@R"), ", ", M(r, "@C"), ") of ",
                     f_.vars[stored].name.empty() ? std::string("the stored fragment")
                                                  : absl::StrCat("'", f_.vars[stored].name, "'"),
                     stored == acc ? ""
                                   : absl::StrCat(" (made of accumulator '", f_.vars[acc].name,
                                                  "' element by element)"),
                     " to ", tname, "(", M(r, "@gr"), ",", M(r, "@gc"),
                     "), but the wgmma operand tags put it at ", tname, "(", M(r, "@er"), ",",
                     M(r, "@ec"), ")");
                 f->cex.expected = absl::StrCat(tname, "(", M(r, "@er"), ",", M(r, "@ec"), ")");
                 f->cex.actual = absl::StrCat(tname, "(", M(r, "@gr"), ",", M(r, "@gc"), ")");
                 f->cex.written_at = written_at->loc;
                 f->cex.written_source = Src(written_at->loc);
               });
  }
}

}  // namespace argus::verifier::engine
