// verifier/walk_call.cc: calls — a kernel's call of a @device function is a
// term over its arguments (DeviceCallValue), and the integer and bool
// operators both the walker and that evaluator use.
#include <functional>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "verifier/walker.h"

namespace argus::verifier::engine {

void Walker::StepCall(const Op& op) {
  if (op.code == OpCode::kReturn) {
    Unsupported(op, "return inside a kernel");
    return;
  }
  if (op.result < 0) return;
  std::optional<expr> v = CallValue(
      op, f_,
      [&](int x) { return f_.vars[x].type.dtype == dsl::DType::kBool ? BoolOf(x) : IntOf(x); }, 0);
  if (v && IsIntType(f_.vars[op.result].type)) {
    SetScalar(op.result, *v);
  } else {
    Havoc(op.result);
  }
}

expr Walker::BoolBinary(dsl::ir::BinOp op, const expr& a, const expr& b) {
  using dsl::ir::BinOp;
  return op == BinOp::kAnd ? (a && b) : op == BinOp::kOr ? (a || b) : (a != b);
}

expr Walker::IntBinary(dsl::ir::BinOp op, const expr& a, const expr& b) {
  using dsl::ir::BinOp;
  auto bv = [&](const expr& x) { return z3::int2bv(32, x); };
  switch (op) {
    case BinOp::kAdd:
      return a + b;
    case BinOp::kSub:
      return a - b;
    case BinOp::kMul:
      return a * b;
    case BinOp::kDiv:
    case BinOp::kFloorDiv:
      return a / b;
    case BinOp::kMod:
      return z3::mod(a, b);
    case BinOp::kMin:
      return z3::ite(a < b, a, b);
    case BinOp::kMax:
      return z3::ite(a > b, a, b);
    case BinOp::kShl:
      return z3::bv2int(z3::shl(bv(a), bv(b)), false);
    case BinOp::kShr:
      return z3::bv2int(z3::lshr(bv(a), bv(b)), false);
    case BinOp::kAnd:
      return z3::bv2int(bv(a) & bv(b), false);
    case BinOp::kOr:
      return z3::bv2int(bv(a) | bv(b), false);
    case BinOp::kXor:
      return z3::bv2int(bv(a) ^ bv(b), false);
  }
  return Fresh("binop");
}

std::optional<expr> Walker::CallValue(const Op& call, const Function& caller,
                                      const std::function<expr(int)>& scalar_of, int depth) {
  if (call.ints.size() != 1 || call.ints[0] < 0 ||
      call.ints[0] >= static_cast<int64_t>(mod_.functions.size()))
    return std::nullopt;
  std::vector<std::optional<expr>> args;
  for (int x : call.operands) {
    if (IsIntType(caller.vars[x].type)) {
      args.push_back(scalar_of(x));
    } else {
      args.push_back(std::nullopt);  // a float: no term
    }
  }
  return DeviceCallValue(mod_.functions[call.ints[0]], args, depth);
}

// A @device function is scalar code that touches no memory (docs/dsl.md):
// its integer or bool result is a term over the arguments, so bounds that
// flow through a helper (a tile scheduler) are kept. Early returns select by
// their path conditions; a loop in it, or nesting deeper than 8 calls, makes
// the result unknown (a fresh value), and so do floats, thread indexes and
// warp operations for the values they feed.
std::optional<expr> Walker::DeviceCallValue(const Function& fn,
                                            const std::vector<std::optional<expr>>& args,
                                            int depth) {
  using dsl::ir::BinOp;
  using dsl::ir::CmpOp;
  if (depth > 8 || args.size() != fn.params.size()) return std::nullopt;
  struct State {
    expr pc, done;
    std::optional<expr> ret;
    bool opaque = false;
  };
  std::map<int, expr> env;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i]) env.insert_or_assign(fn.params[i], *args[i]);
  }
  auto is_bool = [&](int v) {
    const auto& t = fn.vars[v].type;
    return t.is_scalar() && t.dtype == dsl::DType::kBool;
  };
  auto is_int = [&](int v) { return IsIntType(fn.vars[v].type) && !is_bool(v); };
  auto get = [&](int v) -> expr {
    auto it = env.find(v);
    if (it != env.end()) return it->second;
    return is_bool(v) ? Fresh("dcond", true) : Fresh("dval");
  };
  auto as_int = [&](int v) {
    expr e = get(v);
    return e.is_bool() ? z3::ite(e, I(1), I(0)) : e;
  };
  auto as_bool = [&](int v) {
    expr e = get(v);
    return e.is_bool() ? e : e != 0;
  };
  State st{c_.bool_val(true), c_.bool_val(false), std::nullopt, false};
  std::function<void(const Block&)> eval = [&](const Block& b) {
    for (const Op& op : b) {
      if (st.opaque) return;
      const int r = op.result;
      switch (op.code) {
        case OpCode::kConst:
          if (r >= 0 && is_bool(r)) env.insert_or_assign(r, c_.bool_val(op.ints[0] != 0));
          if (r >= 0 && is_int(r)) env.insert_or_assign(r, I(op.ints[0]));
          break;
        case OpCode::kMov:
        case OpCode::kCast:
          if (r >= 0 && is_int(r) && IsIntType(fn.vars[op.operands[0]].type))
            env.insert_or_assign(r, as_int(op.operands[0]));
          else if (r >= 0 && is_bool(r) && is_bool(op.operands[0]))
            env.insert_or_assign(r, as_bool(op.operands[0]));
          else if (r >= 0)
            env.erase(r);
          break;
        case OpCode::kBinary:
          if (r >= 0 && is_bool(r)) {
            env.insert_or_assign(r, BoolBinary(static_cast<BinOp>(op.sub), as_bool(op.operands[0]),
                                               as_bool(op.operands[1])));
          } else if (r >= 0 && is_int(r)) {
            env.insert_or_assign(r, IntBinary(static_cast<BinOp>(op.sub), as_int(op.operands[0]),
                                              as_int(op.operands[1])));
          } else if (r >= 0) {
            env.erase(r);
          }
          break;
        case OpCode::kUnary: {
          auto u = static_cast<dsl::ir::UnaryOp>(op.sub);
          if (r >= 0 && u == dsl::ir::UnaryOp::kNot && is_bool(r))
            env.insert_or_assign(r, !as_bool(op.operands[0]));
          else if (r >= 0 && u == dsl::ir::UnaryOp::kNeg && is_int(r))
            env.insert_or_assign(r, -as_int(op.operands[0]));
          else if (r >= 0)
            env.erase(r);
          break;
        }
        case OpCode::kCompare:
          if (r >= 0 && IsIntType(fn.vars[op.operands[0]].type))
            env.insert_or_assign(r, ApplyCmp(static_cast<CmpOp>(op.sub), as_int(op.operands[0]),
                                             as_int(op.operands[1])));
          else if (r >= 0)
            env.erase(r);
          break;
        case OpCode::kSelect:
          if (r >= 0 && is_int(r))
            env.insert_or_assign(r, z3::ite(as_bool(op.operands[0]), as_int(op.operands[1]),
                                            as_int(op.operands[2])));
          else if (r >= 0 && is_bool(r))
            env.insert_or_assign(r, z3::ite(as_bool(op.operands[0]), as_bool(op.operands[1]),
                                            as_bool(op.operands[2])));
          else if (r >= 0)
            env.erase(r);
          break;
        case OpCode::kCall: {
          std::optional<expr> v = CallValue(
              op, fn, [&](int x) { return is_bool(x) ? as_bool(x) : as_int(x); }, depth + 1);
          if (r >= 0 && v) {
            env.insert_or_assign(r, *v);
          } else if (r >= 0) {
            env.erase(r);
          }
          break;
        }
        case OpCode::kReturn:
          if (!op.operands.empty()) {
            int x = op.operands[0];
            expr v = !IsIntType(fn.vars[x].type) ? Fresh("dret")
                     : is_bool(x)                ? as_bool(x)
                                                 : as_int(x);
            st.ret = st.ret ? z3::ite(st.pc && !st.done, v, *st.ret) : v;
          }
          st.done = st.done || st.pc;
          break;
        case OpCode::kIf: {
          expr cond = as_bool(op.operands[0]);
          expr pc0 = st.pc;
          std::map<int, expr> before = env;
          st.pc = pc0 && cond;
          eval(op.regions[0]);
          std::map<int, expr> then_env = std::move(env);
          env = before;
          st.pc = pc0 && !cond;
          if (op.regions.size() > 1) eval(op.regions[1]);
          st.pc = pc0;
          // Each variable is the branch's value on its side; one a branch
          // leaves unset is unknown there.
          std::map<int, expr> merged;
          std::set<int> vars;
          for (const auto& [v, e] : then_env) vars.insert(v);
          for (const auto& [v, e] : env) vars.insert(v);
          for (int v : vars) {
            auto t = then_env.find(v), e = env.find(v);
            expr tv = t != then_env.end() ? t->second : get(v);
            expr ev = e != env.end() ? e->second : get(v);
            if (tv.is_bool() != ev.is_bool()) continue;
            merged.insert_or_assign(v, z3::eq(tv, ev) ? tv : z3::ite(cond, tv, ev));
          }
          env = std::move(merged);
          break;
        }
        case OpCode::kFor:
        case OpCode::kWhile:
          st.opaque = true;  // loops are not followed here
          return;
        default:
          if (r >= 0) env.erase(r);  // floats, thread indexes, warp operations: unknown
          break;
      }
    }
  };
  eval(fn.body);
  if (st.opaque || !st.ret) return std::nullopt;
  // A path that falls off the end returns nothing the caller may use.
  expr done = st.done.simplify();
  if (done.is_true()) return *st.ret;
  return z3::ite(done, *st.ret, st.ret->is_bool() ? Fresh("dret", true) : Fresh("dret"));
}

}  // namespace argus::verifier::engine
