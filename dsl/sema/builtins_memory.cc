// Memory builtins: tile copies (copy, copy_async, cp_async), per-thread
// vector copies (thread_copy), cp.async group commits and waits, and AMD
// buffer loads.
#include "absl/strings/str_cat.h"
#include "base/status.h"
#include "dsl/sema/lowering.h"

namespace argus::dsl::sema {

using ir::OpCode;
using ir::Type;

absl::StatusOr<Val> FnLowering::Copy(const BuiltinCall& c) {
  const auto& a = c.args;
  ASSIGN_OR_RETURN(std::vector<Val> v, EvalAll(a));
  ASSIGN_OR_RETURN(int src, ViewVar(v[0], a[0]->loc, "copy source"));
  ASSIGN_OR_RETURN(int dst, ViewVar(v[1], a[1]->loc, "copy destination"));
  const Val& tl = v[2];
  if (tl.k != Val::K::kThreadLayout) {
    return Err(a[2]->loc, absl::StrCat("thread layout expected, found ", KindName(tl)),
               "pass thread_layout((rows, cols))");
  }
  const Type st = TypeOf(src), dt = TypeOf(dst);
  RETURN_IF_ERROR(CheckCopyShapes(c, st, dt, tl.layout));
  bool async = c.name != "copy";
  if (async) RETURN_IF_ERROR(CheckAsyncCopy(c, st, dt, tl.layout));
  ir::Op& op = Emit(OpCode::kCopy, c.loc, -1, {src, dst});
  op.layout = tl.layout;
  op.ints = {async ? 1 : 0};
  op.name = c.name;
  return Val::None(c.loc);
}

// thread_copy(src, dst): each thread moves a small tile of constant shape by
// itself (e.g. 8 bf16 of a row into registers), so that codegen can use one
// 16-byte access instead of eight 2-byte ones. Bytes are moved, not
// converted: both views have one dtype.
absl::StatusOr<Val> FnLowering::ThreadCopy(const BuiltinCall& c) {
  constexpr int64_t kMaxBytes = 256;  // a register-sized tile per thread
  const auto& a = c.args;
  ASSIGN_OR_RETURN(std::vector<Val> v, EvalAll(a));
  ASSIGN_OR_RETURN(int src, ViewVar(v[0], a[0]->loc, "thread_copy source"));
  ASSIGN_OR_RETURN(int dst, ViewVar(v[1], a[1]->loc, "thread_copy destination"));
  const Type st = TypeOf(src), dt = TypeOf(dst);
  if (st.rank() != dt.rank() || st.rank() < 1 || st.rank() > 2) {
    return Err(c.loc,
               absl::StrCat("thread_copy takes views of one rank, 1 or 2; found ", st.rank(),
                            " and ", dt.rank()),
               "slice both sides to a row: X[r, j:j + 8]");
  }
  int64_t elems = 1;
  for (int d = 0; d < st.rank(); ++d) {
    if (st.shape[d] < 0 || st.shape[d] != dt.shape[d]) {
      return Err(c.loc,
                 absl::StrCat("thread_copy needs one constant shape on both sides; found ",
                              st.ToString(), " and ", dt.ToString()),
                 "slice with a constant extent: X[r, j:j + 8]");
    }
    elems *= st.shape[d];
  }
  if (st.dtype != dt.dtype) {
    return Err(c.loc,
               absl::StrCat("thread_copy moves bytes and cannot convert ", DTypeName(st.dtype),
                            " to ", DTypeName(dt.dtype)),
               "copy into a local of the source's dtype, then convert element by element");
  }
  if (elems * DTypeBytes(st.dtype) > kMaxBytes) {
    return Err(c.loc,
               absl::StrCat("thread_copy of ", elems * DTypeBytes(st.dtype),
                            " bytes per thread; at most ", kMaxBytes),
               "copy a smaller tile per call");
  }
  ir::Op& op = Emit(OpCode::kThreadCopy, c.loc, -1, {src, dst});
  op.layout.shape.assign(st.rank(), 1);
  op.layout.stride.assign(st.rank(), 1);
  op.layout.vec = st.shape[st.rank() - 1];
  op.ints = {0};  // never async
  op.name = c.name;
  return Val::None(c.loc);
}

absl::Status FnLowering::CheckCopyShapes(const BuiltinCall& c, const Type& st, const Type& dt,
                                         const ir::Layout& tl) {
  if (st.rank() != dt.rank() || st.rank() != static_cast<int>(tl.shape.size())) {
    return Err(c.loc,
               absl::StrCat("copy ranks differ: source ", st.rank(), ", destination ", dt.rank(),
                            ", thread layout ", tl.shape.size()),
               "copy between views of one rank with a layout of that rank");
  }
  for (int d = 0; d < st.rank(); ++d) {
    if (st.shape[d] >= 0 && dt.shape[d] >= 0 && st.shape[d] != dt.shape[d]) {
      return Err(c.loc,
                 absl::StrCat("copy shapes differ: source ", st.ToString(), ", destination ",
                              dt.ToString()),
                 "tile the views to the same shape");
    }
    int64_t ext = st.shape[d] >= 0 ? st.shape[d] : dt.shape[d];
    int64_t per = tl.shape[d] * (d == st.rank() - 1 ? tl.vec : 1);
    if (ext >= 0 && ext % per != 0) {
      return Err(c.args[2]->loc,
                 absl::StrCat("tile extent ", ext, " of dim ", d,
                              " is not a multiple of the thread layout's ", per),
                 "choose a thread layout that divides the tile");
    }
  }
  return absl::OkStatus();
}

// copy_async / cp_async move bytes from global to shared memory; cp_async is
// the NVIDIA instruction, 4, 8 or 16 bytes per thread.
absl::Status FnLowering::CheckAsyncCopy(const BuiltinCall& c, const Type& st, const Type& dt,
                                        const ir::Layout& tl) {
  if (st.space != Space::kGlobal || dt.space != Space::kShared) {
    return Err(c.loc,
               absl::StrCat(c.name, "() copies global to shared, found ", SpaceName(st.space),
                            " to ", SpaceName(dt.space)),
               "use copy() for other spaces");
  }
  if (st.dtype != dt.dtype) {
    return Err(c.loc,
               absl::StrCat(c.name, "() cannot convert ", DTypeName(st.dtype), " to ",
                            DTypeName(dt.dtype)),
               "async copies move bytes; use the same dtype");
  }
  if (c.name != "cp_async") return absl::OkStatus();
  if (f_->arch != "sm_90a")
    return Err(c.loc, "cp_async is an NVIDIA instruction; this kernel targets gfx942",
               "use copy_async");
  int64_t bytes = tl.vec * DTypeBytes(st.dtype);
  if (bytes != 4 && bytes != 8 && bytes != 16) {
    return Err(c.args[2]->loc,
               absl::StrCat("cp.async moves 4, 8 or 16 bytes per thread, vec gives ", bytes),
               "set thread_layout(..., vec=...) so that vec * element size is 4, 8 or 16");
  }
  return absl::OkStatus();
}

absl::StatusOr<Val> FnLowering::CommitGroup(const BuiltinCall& c) {
  return EmitBare(OpCode::kCommitGroup, c.loc);
}

absl::StatusOr<Val> FnLowering::WaitGroup(const BuiltinCall& c) {
  ASSIGN_OR_RETURN(int64_t n, ConstInt(*c.args[0], "wait_group count"));
  if (n < 0 || n > 64)
    return Err(c.args[0]->loc, "wait_group count must be 0..64", "use a small constant");
  Emit(OpCode::kWaitGroup, c.loc).ints = {n};
  return Val::None(c.loc);
}

// buffer_load(view, i, ...): a global load whose out-of-bounds elements read
// 0 (the AMD buffer resource's hardware bounds check).
absl::StatusOr<Val> FnLowering::BufferLoad(const BuiltinCall& c) {
  const Expr& e = c.expr;
  Loc loc = c.loc;
  if (e.args.size() < 2 || !e.kwargs.empty())
    return Err(loc, "buffer_load(view, i, ...) takes a view and one index per dim",
               "write buffer_load(X, i)");
  ASSIGN_OR_RETURN(Val vv, Eval(*e.args[1]));
  ASSIGN_OR_RETURN(int view, ViewVar(vv, e.args[1]->loc, "buffer_load source"));
  const Type vt = TypeOf(view);
  if (vt.space != Space::kGlobal)
    return Err(e.args[1]->loc, "buffer_load reads global memory",
               "index shared/local views directly");
  if (static_cast<int>(e.args.size()) - 2 != vt.rank()) {
    return Err(loc,
               absl::StrCat("buffer_load needs ", vt.rank(), " indices, got ", e.args.size() - 2),
               "index every dim");
  }
  std::vector<int> ops = {view};
  for (size_t i = 2; i < e.args.size(); ++i) {
    ASSIGN_OR_RETURN(Val x, Eval(*e.args[i]));
    ASSIGN_OR_RETURN(int v, AsIndex(x, e.args[i]->loc, "index"));
    ops.push_back(v);
  }
  int r = NewVar(Type::Scalar(vt.dtype));
  Emit(OpCode::kBufferLoad, loc, r, ops);
  return Val::Var(r, loc);
}

}  // namespace argus::dsl::sema
