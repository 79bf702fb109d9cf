// dsl/sema/value.h: what an expression evaluates to while the checker lowers
// it — a compile-time constant, an IR var, or a compile-time object (tuple,
// dtype, string, lambda, swizzle, layout, thread layout, function name).
//
// Constants stay folded until something needs a run-time value; untyped
// literals are "weak" and take the type of what they meet (values.cc's
// Coerce and PromoteStrong hold the rules).
//
// Thread safety: plain data and pure functions.
#ifndef ARGUS_DSL_SEMA_VALUE_H_
#define ARGUS_DSL_SEMA_VALUE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "dsl/ast.h"
#include "dsl/ir.h"
#include "dsl/source.h"
#include "dsl/types.h"

namespace argus::dsl::sema {

struct Val {
  enum class K {
    kNone,
    kInt,
    kFloat,
    kBool,
    kVar,
    kTuple,
    kDType,
    kStr,
    kLambda,
    kSwizzle,
    kLayout,
    kThreadLayout,
    kFunc
  };
  K k = K::kNone;
  int64_t i = 0;
  double f = 0;
  DType dt = DType::kI32;
  bool weak = true;  // untyped literal
  int var = -1;
  bool fresh = false;  // a temporary nobody else refers to
  std::vector<Val> elems;
  std::string s;
  const Expr* lambda = nullptr;
  ir::Layout layout;
  Swizzle swz;
  Loc loc;

  bool is_const() const { return k == K::kInt || k == K::kFloat || k == K::kBool; }
  static Val Int(int64_t v, Loc l) {
    Val x;
    x.k = K::kInt;
    x.i = v;
    x.loc = l;
    return x;
  }
  static Val Float(double v, Loc l) {
    Val x;
    x.k = K::kFloat;
    x.f = v;
    x.dt = DType::kF32;
    x.loc = l;
    return x;
  }
  static Val Bool(bool v, Loc l) {
    Val x;
    x.k = K::kBool;
    x.i = v;
    x.dt = DType::kBool;
    x.weak = false;
    x.loc = l;
    return x;
  }
  static Val Var(int v, Loc l, bool fresh = true) {
    Val x;
    x.k = K::kVar;
    x.var = v;
    x.fresh = fresh;
    x.loc = l;
    return x;
  }
  static Val None(Loc l) {
    Val x;
    x.loc = l;
    return x;
  }
  // A compile-time object of kind `k` (dtype, string, function name, ...).
  static Val Object(K k, Loc l) {
    Val x;
    x.k = k;
    x.loc = l;
    return x;
  }
};

// "an integer constant", "a tuple", ...: what diagnostics call a value's kind.
const char* KindName(const Val& v);

// The common type of two typed (non-weak) operands.
DType PromoteStrong(DType a, DType b);

// The type of a binary operation on a and b (of types ta, tb): a weak literal
// takes the other side's type (a float literal makes an int side f32).
DType ResultType(const Val& a, DType ta, const Val& b, DType tb);

// The type of a value that is either a or b (select, conditional
// expressions): a weak literal takes the other side's type; two bools stay bool.
DType JoinType(const Val& a, DType ta, const Val& b, DType tb);

}  // namespace argus::dsl::sema

#endif  // ARGUS_DSL_SEMA_VALUE_H_
