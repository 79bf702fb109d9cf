// Layout builtins: the compile-time objects Swizzle, Layout and
// thread_layout, and the buffers shared(...) and local(...) with their
// per-block and per-thread memory budgets.
#include "absl/strings/str_cat.h"
#include "base/status.h"
#include "dsl/sema/lowering.h"

namespace argus::dsl::sema {

using ir::OpCode;
using ir::Type;

absl::StatusOr<Val> FnLowering::MakeSwizzle(const BuiltinCall& c) {
  const auto& a = c.args;
  Val v = Val::Object(Val::K::kSwizzle, c.loc);
  ASSIGN_OR_RETURN(int64_t b, ConstInt(*a[0], "Swizzle B"));
  ASSIGN_OR_RETURN(int64_t m, ConstInt(*a[1], "Swizzle M"));
  ASSIGN_OR_RETURN(int64_t s, ConstInt(*a[2], "Swizzle S"));
  if (b < 0 || b > 8 || m < 0 || m > 8 || s < b || s > 12) {
    return Err(c.loc, absl::StrCat("Swizzle(", b, ", ", m, ", ", s, ") is not a valid swizzle"),
               "need 0 <= B <= 8, 0 <= M <= 8, B <= S <= 12 (CuTe: |S| >= B)");
  }
  v.swz = Swizzle{static_cast<int>(b), static_cast<int>(m), static_cast<int>(s)};
  return v;
}

absl::StatusOr<Val> FnLowering::MakeLayout(const BuiltinCall& c) {
  const auto& a = c.args;
  Val v = Val::Object(Val::K::kLayout, c.loc);
  ASSIGN_OR_RETURN(v.layout.shape, ConstShape(*a[0], "layout shape"));
  ASSIGN_OR_RETURN(Val st, Eval(*a[1]));
  std::vector<int64_t> stride;
  if (st.k == Val::K::kInt) {
    stride.push_back(st.i);
  } else if (st.k == Val::K::kTuple) {
    for (const Val& x : st.elems) {
      ASSIGN_OR_RETURN(int64_t s, ConstIntVal(x, a[1]->loc, "layout stride"));
      if (s < 0) return Err(a[1]->loc, "layout strides must be non-negative", "use strides >= 0");
      stride.push_back(s);
    }
  } else {
    return Err(a[1]->loc, "layout stride must be a tuple of integers", "write e.g. (1, 64)");
  }
  if (stride.size() != v.layout.shape.size()) {
    return Err(a[1]->loc, "layout shape and stride differ in rank", "give one stride per dim");
  }
  v.layout.stride = stride;
  return v;
}

absl::StatusOr<Val> FnLowering::ThreadLayout(const BuiltinCall& c) {
  const auto& a = c.args;
  Val v = Val::Object(Val::K::kThreadLayout, c.loc);
  ASSIGN_OR_RETURN(v.layout.shape, ConstShape(*a[0], "thread layout shape"));
  if (v.layout.shape.size() > 2)
    return Err(a[0]->loc, "thread layouts have rank 1 or 2", "use (threads,) or (rows, cols)");
  v.layout.stride.assign(v.layout.shape.size(), 1);
  if (v.layout.shape.size() == 2) v.layout.stride[0] = v.layout.shape[1];
  if (a[1]) {
    ASSIGN_OR_RETURN(v.layout.vec, ConstInt(*a[1], "vec"));
    if (v.layout.vec <= 0 || v.layout.vec > 16)
      return Err(a[1]->loc, "vec must be 1..16", "use 1, 2, 4 or 8");
  }
  if (f_->is_kernel && v.layout.Size() > f_->threads) {
    return Err(a[0]->loc,
               absl::StrCat("thread layout has ", v.layout.Size(), " threads, the block has ",
                            f_->threads),
               "use at most threads= threads");
  }
  return v;
}

// shared(dtype, shape, layout=, swizzle=) / local(dtype, shape).
absl::StatusOr<Val> FnLowering::Alloc(const BuiltinCall& c) {
  const auto& a = c.args;
  bool shared = c.name == "shared";
  ASSIGN_OR_RETURN(Val dt, Eval(*a[0]));
  if (dt.k != Val::K::kDType)
    return Err(a[0]->loc, absl::StrCat("dtype expected, found ", KindName(dt)), "write e.g. bf16");
  ASSIGN_OR_RETURN(std::vector<int64_t> shape, ConstShape(*a[1], "buffer shape"));
  ir::Layout lay;
  lay.shape = shape;
  lay.stride.assign(shape.size(), 1);
  for (int d = static_cast<int>(shape.size()) - 2; d >= 0; --d)
    lay.stride[d] = lay.stride[d + 1] * shape[d + 1];
  if (shared) {
    ASSIGN_OR_RETURN(lay, SharedLayout(c, lay));
  }
  RETURN_IF_ERROR(ChargeBuffer(shared, lay.Cosize() * DTypeBytes(dt.dt), c.loc));
  int r = NewVar(Type::View(shared ? Space::kShared : Space::kLocal, dt.dt, shape));
  Emit(shared ? OpCode::kAllocShared : OpCode::kAllocLocal, c.loc, r).layout = lay;
  return Val::Var(r, c.loc);
}

absl::StatusOr<ir::Layout> FnLowering::SharedLayout(const BuiltinCall& c, ir::Layout lay) {
  const auto& a = c.args;
  if (a[2]) {
    ASSIGN_OR_RETURN(Val l, Eval(*a[2]));
    if (l.k != Val::K::kLayout)
      return Err(a[2]->loc, "layout= needs Layout(shape, stride)",
                 "write layout=Layout((64, 32), (1, 64))");
    if (l.layout.shape != lay.shape)
      return Err(a[2]->loc, "the layout's shape differs from the buffer's", "use the same shape");
    lay.stride = l.layout.stride;
  }
  if (a[3]) {
    ASSIGN_OR_RETURN(Val s, Eval(*a[3]));
    if (s.k != Val::K::kSwizzle)
      return Err(a[3]->loc, "swizzle= needs Swizzle(B, M, S)", "write swizzle=Swizzle(3, 3, 3)");
    lay.swizzle = s.swz;
  }
  return lay;
}

absl::Status FnLowering::ChargeBuffer(bool shared, int64_t bytes, Loc loc) {
  if (shared) {
    shared_bytes_ += bytes;
    int64_t limit = f_->arch == "gfx942" ? 64 * 1024 : 227 * 1024;
    if (shared_bytes_ > limit) {
      return Err(loc,
                 absl::StrCat("shared memory use ", shared_bytes_, " bytes exceeds ", limit, " on ",
                              f_->arch),
                 "use smaller tiles or fewer stages");
    }
    return absl::OkStatus();
  }
  local_bytes_ += bytes;
  if (local_bytes_ > 16 * 1024) {
    return Err(loc,
               absl::StrCat("local arrays use ", local_bytes_, " bytes per thread (limit 16384)"),
               "use smaller arrays");
  }
  return absl::OkStatus();
}

}  // namespace argus::dsl::sema
