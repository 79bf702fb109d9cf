// Tag builtins (checked by the verifier, no code at run time): tag() binds a
// custom tag to a buffer, assert_tag() states what a value must hold,
// assert_tag_eq() that two values hold the same, reset_tags() forgets. The
// tag functions are lambdas lowered into the op's region.
#include <optional>

#include "absl/strings/str_cat.h"
#include "base/status.h"
#include "dsl/sema/lowering.h"

namespace argus::dsl::sema {

using ir::OpCode;
using ir::Type;

absl::StatusOr<int> FnLowering::Tagged(const Expr& x, const char* what) {
  ASSIGN_OR_RETURN(Val v, Eval(x));
  if (v.k == Val::K::kVar && (TypeOf(v.var).is_view() || TypeOf(v.var).is_frag())) return v.var;
  return Err(x.loc, absl::StrCat(what, " must be a view or a fragment, found ", KindName(v)),
             "tag memory or fragments");
}

absl::StatusOr<Val> FnLowering::ResetTags(const BuiltinCall& c) {
  ASSIGN_OR_RETURN(int b, Tagged(*c.args[0], "reset_tags() argument"));
  Emit(OpCode::kResetTags, c.loc, -1, {b});
  return Val::None(c.loc);
}

absl::StatusOr<Val> FnLowering::AssertTagEq(const BuiltinCall& c) {
  ASSIGN_OR_RETURN(int x, Tagged(*c.args[0], "assert_tag_eq() argument"));
  ASSIGN_OR_RETURN(int y, Tagged(*c.args[1], "assert_tag_eq() argument"));
  auto shape_of = [&](int v) {
    const Type t = TypeOf(v);
    return t.is_frag() ? std::vector<int64_t>{t.frag.rows, t.frag.cols} : t.shape;
  };
  if (shape_of(x) != shape_of(y))
    return Err(c.loc, "assert_tag_eq() arguments differ in shape", "compare values of one shape");
  Emit(OpCode::kAssertTagEq, c.loc, -1, {x, y});
  return Val::None(c.loc);
}

// tag(buf, fn, name) / assert_tag(x, fn, name=): fn is a lambda of one index
// per dim (a fragment counts as 2-D). Without a name, assert_tag's lambda
// names a tensor element (a data tag).
absl::StatusOr<Val> FnLowering::TagLambda(const BuiltinCall& c) {
  const auto& a = c.args;
  bool is_tag = c.name == "tag";
  ASSIGN_OR_RETURN(int x, Tagged(*a[0], absl::StrCat(c.name, "() target").c_str()));
  if (is_tag && !TypeOf(x).is_view())
    return Err(a[0]->loc, "tag() binds tags to memory views", "tag a buffer");
  ir::Op op;
  op.code = is_tag ? OpCode::kTag : OpCode::kAssertTag;
  op.loc = c.loc;
  op.operands = {x};
  if (a[2]) {
    ASSIGN_OR_RETURN(op.name, ConstStr(*a[2], "tag name"));
  }
  if (a[2] && op.name.empty())
    return Err(a[2]->loc, "tag name must not be empty", "name the tag, e.g. \"stage\"");
  int tensor = -1;
  int rank = TypeOf(x).is_frag() ? 2 : TypeOf(x).rank();
  RETURN_IF_ERROR(LowerLambda(*a[1], rank, &op, op.name.empty() ? 0 : -1, &tensor));
  if (tensor >= 0) op.ints = {tensor};
  cur_->push_back(std::move(op));
  return Val::None(c.loc);
}

absl::Status FnLowering::LowerLambda(const Expr& lam, int rank, ir::Op* op, int want_tensor_rank,
                                     int* tensor_index) {
  if (lam.kind != ExprKind::kLambda) {
    return Err(lam.loc, "expected a lambda", "write lambda i, j: ...");
  }
  if (static_cast<int>(lam.params.size()) != rank) {
    return Err(lam.loc,
               absl::StrCat("the lambda takes ", lam.params.size(), " parameters, the value has ",
                            rank, " dims"),
               "take one parameter per dim");
  }
  // The parameters shadow same-named variables for the body only.
  std::map<std::string, std::optional<Val>> saved;
  ir::Block body;
  ir::Block* saved_cur = cur_;
  cur_ = &body;
  for (const std::string& p : lam.params) {
    auto it = env_.find(p);
    saved[p] = it == env_.end() ? std::nullopt : std::optional<Val>(it->second);
    int v = NewVar(Type::Scalar(DType::kI32), p);
    op->region_params.push_back(v);
    env_[p] = Val::Var(v, lam.loc, false);
  }
  absl::StatusOr<std::vector<int>> yields =
      LambdaYields(*lam.args[0], want_tensor_rank, tensor_index);
  if (yields.ok()) Emit(OpCode::kYield, lam.loc, -1, *yields);
  cur_ = saved_cur;
  for (auto& [k, v] : saved) {
    if (v)
      env_[k] = *v;
    else
      env_.erase(k);
  }
  RETURN_IF_ERROR(yields.status());
  op->regions.push_back(std::move(body));
  return absl::OkStatus();
}

absl::StatusOr<std::vector<int>> FnLowering::LambdaYields(const Expr& b, int want_tensor_rank,
                                                          int* tensor_index) {
  std::vector<int> yields;
  if (want_tensor_rank < 0) {
    ASSIGN_OR_RETURN(Val v, Eval(b));
    ASSIGN_OR_RETURN(int x, AsIndex(v, b.loc, "custom tag value"));
    yields.push_back(x);
    return yields;
  }
  // Must be T(e0, e1, ...) for a tensor parameter T.
  const ir::TensorParam* tp = nullptr;
  if (b.kind == ExprKind::kCall && b.args[0]->kind == ExprKind::kName) {
    for (size_t i = 0; i < f_->tensors.size(); ++i) {
      if (f_->tensors[i].name == b.args[0]->name) {
        tp = &f_->tensors[i];
        *tensor_index = static_cast<int>(i);
      }
    }
  }
  if (!tp) {
    return Err(b.loc, "a data tag must name a tensor parameter: lambda i, j: A(row, col)",
               "write the tensor element the value must hold, e.g. A(r0 + i, c0 + j)");
  }
  if (b.args.size() - 1 != tp->shape.size() || !b.kwargs.empty()) {
    return Err(b.loc,
               absl::StrCat("tensor ", tp->name, " has ", tp->shape.size(), " dims, the tag gives ",
                            b.args.size() - 1),
               "give one coordinate per dim");
  }
  for (size_t i = 1; i < b.args.size(); ++i) {
    ASSIGN_OR_RETURN(Val v, Eval(*b.args[i]));
    ASSIGN_OR_RETURN(int x, AsIndex(v, b.args[i]->loc, "tag coordinate"));
    yields.push_back(x);
  }
  return yields;
}

}  // namespace argus::dsl::sema
