// dsl/sema/lowering.h: the checker's per-function lowering state, shared by
// the files of dsl/sema/.
//
// FnLowering turns one FuncDef into one ir::Function: it resolves names,
// folds constants, checks types and shapes and emits ops into the current
// block. Its members are defined by concept: values.cc (coercion and
// compile-time arguments), expressions.cc, views.cc, calls.cc (calls and the
// builtin table of builtins.def), fragment_math.cc, builtins_*.cc (one file
// per builtin family), statements.cc and signatures.cc (parameters,
// decorators, grid()). module.cc drives it over a file (dsl/check.h).
//
// Thread safety: an FnLowering is used by one thread; the builtin table is
// immutable once built (FindBuiltin may be called from any thread).
#ifndef ARGUS_DSL_SEMA_LOWERING_H_
#define ARGUS_DSL_SEMA_LOWERING_H_

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "dsl/ast.h"
#include "dsl/check.h"
#include "dsl/ir.h"
#include "dsl/mma.h"
#include "dsl/sema/value.h"
#include "dsl/source.h"

namespace argus::dsl::sema {

// How often a function assigns each name: a name assigned once at the top
// level may hold a compile-time constant.
struct AssignInfo {
  int count = 0;
  bool nested = false;
};

struct ModuleCtx {
  std::shared_ptr<const SourceFile> src;
  const CheckOptions* options;
  std::map<std::string, std::string> unused_consts;
  ir::Module out;
  std::map<std::string, int> device_fns;  // name -> function index (defined so far)
};

// Traits of a builtin (builtins.def's last column), a '|' set.
namespace builtin_trait {
inline constexpr uint32_t kNone = 0;
// Only in a @kernel; checked before anything else.
inline constexpr uint32_t kKernel = 1u << 0;
// sm_90a only; checked before the arguments are bound.
inline constexpr uint32_t kHopper = 1u << 1;
// Allowed in grid(...), which is computed on the host.
inline constexpr uint32_t kHost = 1u << 2;
// A @kernel may be named after it (kernels are never called; the KB's
// `row_sum` kernel predates row_sum()).
inline constexpr uint32_t kKernelName = 1u << 3;
}  // namespace builtin_trait

class FnLowering {
 public:
  FnLowering(ModuleCtx* m, const FuncDef& def, ir::Function* f) : m_(m), def_(def), f_(f) {}
  absl::Status Run();

  // A builtin call as its handler sees it.
  struct BuiltinCall {
    const std::string& name;
    const Expr& expr;
    Loc loc;
    // The arguments bound to the row's parameters (nullptr: an optional one
    // not given); empty where the handler reads expr's arguments itself.
    std::vector<const Expr*> args;
  };
  using BuiltinHandler = absl::StatusOr<Val> (FnLowering::*)(const BuiltinCall&);
  // One row of builtins.def.
  struct BuiltinSpec {
    std::string_view name;
    BuiltinHandler handler;
    bool binds_own = false;           // the handler reads the call's arguments itself
    std::vector<std::string> params;  // else BindArgs' signature
    uint32_t traits = builtin_trait::kNone;
    bool Has(uint32_t t) const { return (traits & t) != 0; }
  };
  // The builtin named `name`, or nullptr (MMA instruction names are not rows:
  // they call the "mma" row).
  static const BuiltinSpec* FindBuiltin(std::string_view name);

 private:
  // ---- diagnostics
  absl::Status Err(Loc loc, std::string msg, std::string hint = "");
  absl::Status RequireHopper(Loc loc, const std::string& what);
  absl::Status RequireKernel(Loc loc, const std::string& what);

  // ---- emission
  int NewVar(ir::Type t, std::string name = "") {
    return f_->AddVar(std::move(name), std::move(t));
  }
  ir::Op& Emit(ir::OpCode code, Loc loc, int result = -1, std::vector<int> operands = {}) {
    ir::Op op;
    op.code = code;
    op.loc = loc;
    op.result = result;
    op.operands = std::move(operands);
    cur_->push_back(std::move(op));
    return cur_->back();
  }
  // Emits an op without operands or result (a fence, a commit, a barrier).
  Val EmitBare(ir::OpCode code, Loc loc) {
    Emit(code, loc);
    return Val::None(loc);
  }
  // By value: NewVar() may reallocate the var table.
  ir::Type TypeOf(int var) const { return f_->vars[var].type; }
  // Appends a structured-control op owning `regions` to the current block.
  ir::Op& EmitRegions(ir::OpCode code, Loc loc, std::vector<int> operands,
                      std::vector<ir::Block> regions, int result = -1);

  // ---- values (values.cc)
  absl::StatusOr<int> Materialize(const Val& v, Loc loc);
  absl::StatusOr<int> Coerce(const Val& v, DType to, Loc loc, const char* what);
  absl::StatusOr<int> AsIndex(const Val& v, Loc loc, const char* what);
  absl::StatusOr<int64_t> ConstInt(const Expr& e, const char* what);
  absl::StatusOr<int64_t> ConstIntVal(const Val& v, Loc loc, const char* what);
  absl::StatusOr<std::vector<int64_t>> ConstShape(const Expr& e, const char* what);
  absl::StatusOr<std::vector<int64_t>> ConstShapeVal(const Val& v, Loc loc, const char* what);
  absl::StatusOr<std::string> ConstStr(const Expr& e, const char* what);
  absl::StatusOr<DType> ScalarDType(const Val& v, Loc loc, const char* what);
  absl::StatusOr<int> ViewVar(const Val& v, Loc loc, const char* what);
  absl::StatusOr<int> FragVar(const Val& v, Loc loc, const char* what);
  absl::StatusOr<int> ScalarVar(const Val& v, Loc loc, const char* what);
  // What a diagnostic says was found instead: a var's type, else its kind.
  std::string Found(const Val& v) const;
  // Binds call arguments to a signature; names ending in '?' are optional.
  absl::StatusOr<std::vector<const Expr*>> BindArgs(const Expr& call, const std::string& fname,
                                                    std::vector<std::string> params);

  // ---- expressions (expressions.cc)
  absl::StatusOr<Val> Eval(const Expr& e);
  absl::StatusOr<Val> Name(const Expr& e);
  absl::StatusOr<Val> Binary(const std::string& op, const Val& a, const Val& b, Loc loc);
  absl::StatusOr<Val> FoldBinary(const std::string& op, const Val& a, const Val& b, Loc loc);
  absl::StatusOr<Val> FoldFloatBinary(const std::string& op, const Val& a, const Val& b, Loc loc);
  absl::StatusOr<Val> Unary(const Expr& e);
  absl::StatusOr<Val> Compare(const Expr& e);
  absl::StatusOr<Val> BoolOp(const Expr& e);
  absl::StatusOr<Val> IfExp(const Expr& e);
  // The bool type check of an and/or operand.
  absl::Status BoolOperand(const Expr& e, const Val& v);

  // ---- views (views.cc)
  absl::StatusOr<Val> Subscript(const Expr& e);
  absl::StatusOr<Val> Attr(const Expr& e);
  absl::StatusOr<Val> Method(const Val& recv, const std::string& name, const Expr& e);
  absl::StatusOr<Val> TileMethod(int view, const Expr& e);
  absl::StatusOr<Val> ReshapeMethod(int view, const Expr& e);
  absl::StatusOr<Val> ElementAccess(const Val& view, const Expr& e, const Val* store_value);
  absl::StatusOr<Val> SubView(int view, const Expr& e);
  // One slice `lo:hi:step` of dim d of `view`; returns the sliced view (or
  // `view` itself for a full `:`).
  absl::StatusOr<int> SliceDim(int view, int d, const Expr& ix);

  // ---- calls (calls.cc)
  absl::StatusOr<Val> Call(const Expr& e);
  absl::StatusOr<Val> Cast(DType to, const Expr& e);
  absl::StatusOr<Val> CallDevice(const ir::Function& callee, int index, const Expr& e);
  absl::StatusOr<Val> CallBuiltin(const std::string& name, const Expr& e);
  // Evaluates each of `args`.
  absl::StatusOr<std::vector<Val>> EvalAll(const std::vector<const Expr*>& args);

  // ---- fragment math (fragment_math.cc; docs/dsl.md "Fragment math")
  bool IsFragVal(const Val& v) const { return v.k == Val::K::kVar && TypeOf(v.var).is_frag(); }
  absl::StatusOr<Val> FragEw(ir::FragEwOp op, const std::vector<Val>& args, Loc loc,
                             const std::string& what);
  // The shape operand of an elementwise op: its first accumulator, else its
  // first row fragment.
  absl::StatusOr<int> FragEwShape(const std::vector<Val>& args, const std::string& what);
  // `v` as an accumulator whose warps (groups) each own whole rows (WN = 1).
  absl::StatusOr<int> RowAcc(const Val& v, const std::string& what);
  // The accumulator a row builtin's first argument names (evaluated into *x).
  absl::StatusOr<int> RowAccArg(const BuiltinCall& c, Val* x);
  absl::StatusOr<Val> Fma(const BuiltinCall& c);
  absl::StatusOr<Val> RowReduce(const BuiltinCall& c);
  absl::StatusOr<Val> RowCoord(const BuiltinCall& c);
  absl::StatusOr<Val> RowFill(const BuiltinCall& c);
  absl::StatusOr<Val> ToOperand(const BuiltinCall& c);

  // ---- scalar builtins (builtins_scalar.cc)
  absl::StatusOr<Val> MisplacedGrid(const BuiltinCall& c);
  absl::StatusOr<Val> MisplacedRange(const BuiltinCall& c);
  absl::StatusOr<Val> SignatureOnly(const BuiltinCall& c);
  absl::StatusOr<Val> Cdiv(const BuiltinCall& c);
  absl::StatusOr<Val> MinMax(const BuiltinCall& c);
  absl::StatusOr<Val> Math(const BuiltinCall& c);
  absl::StatusOr<Val> Select(const BuiltinCall& c);
  absl::StatusOr<Val> ThreadIndex(const BuiltinCall& c);
  absl::StatusOr<Val> WarpSize(const BuiltinCall& c);
  absl::StatusOr<Val> GridIndex(const BuiltinCall& c);
  // A kSpecial op reading `s` (of dimension `dim`, or -1).
  Val Special(ir::SpecialOp s, int64_t dim, Loc loc);

  // ---- layouts and buffers (builtins_layout.cc)
  absl::StatusOr<Val> MakeSwizzle(const BuiltinCall& c);
  absl::StatusOr<Val> MakeLayout(const BuiltinCall& c);
  absl::StatusOr<Val> ThreadLayout(const BuiltinCall& c);
  absl::StatusOr<Val> Alloc(const BuiltinCall& c);
  // The layout of a shared(...) buffer: `lay` (row-major) or layout=, with swizzle=.
  absl::StatusOr<ir::Layout> SharedLayout(const BuiltinCall& c, ir::Layout lay);
  // Adds a buffer's bytes to the block's shared or the thread's local budget.
  absl::Status ChargeBuffer(bool shared, int64_t bytes, Loc loc);

  // ---- memory (builtins_memory.cc)
  absl::StatusOr<Val> Copy(const BuiltinCall& c);
  absl::StatusOr<Val> ThreadCopy(const BuiltinCall& c);
  absl::Status CheckCopyShapes(const BuiltinCall& c, const ir::Type& st, const ir::Type& dt,
                               const ir::Layout& tl);
  absl::Status CheckAsyncCopy(const BuiltinCall& c, const ir::Type& st, const ir::Type& dt,
                              const ir::Layout& tl);
  absl::StatusOr<Val> CommitGroup(const BuiltinCall& c);
  absl::StatusOr<Val> WaitGroup(const BuiltinCall& c);
  absl::StatusOr<Val> BufferLoad(const BuiltinCall& c);

  // ---- MMA fragments (builtins_fragment.cc)
  absl::StatusOr<Val> Fragment(const BuiltinCall& c);
  // The instruction fragment(..., mma=kind) names; a generic wgmma kind
  // becomes the widest instruction for the warp group's columns.
  absl::StatusOr<const MmaInfo*> FragmentMma(const BuiltinCall& c, DType dtype,
                                             const std::vector<int64_t>& shape, std::string* kind);
  // warps= / warpgroups= / first_warpgroup= of a fragment of `mi`.
  absl::Status FragmentWarps(const BuiltinCall& c, const MmaInfo* mi, std::vector<int64_t>* warps,
                             int64_t* first);
  // The source view, accumulator and operand="A"|"B" of load_fragment,
  // ldmatrix and wgmma_operand (`what` names the source in diagnostics).
  struct OperandArgs {
    int src = -1, acc = -1;
    std::string operand;
  };
  absl::StatusOr<OperandArgs> OperandSource(const BuiltinCall& c, const char* what);
  absl::StatusOr<Val> LoadFragment(const BuiltinCall& c);
  absl::StatusOr<Val> Mma(const BuiltinCall& c);
  absl::StatusOr<Val> Store(const BuiltinCall& c);
  // store(acc, dst, at=(i, j)): the dst-shaped sub-tile (i, j) of a wgmma
  // accumulator, aligned to its warp groups' parts.
  absl::StatusOr<Val> StoreFragmentPart(int acc, int dst, const Expr& de, const Expr& at, Loc loc);
  // The accumulator and A and B operand vars of mma()/wgmma() arguments.
  absl::StatusOr<std::vector<int>> MmaOperands(const BuiltinCall& c);

  // ---- Hopper: warp-group MMA (builtins_wgmma.cc)
  absl::StatusOr<Val> WgmmaOperand(const BuiltinCall& c);
  absl::StatusOr<Val> Wgmma(const BuiltinCall& c);
  absl::StatusOr<Val> WgmmaCommit(const BuiltinCall& c);
  absl::StatusOr<Val> WgmmaWait(const BuiltinCall& c);

  // ---- Hopper: mbarriers, TMA, barriers, registers (builtins_hopper.cc)
  // A TMA's global side, written T.tile((r, c), (i, j)) of a tensor parameter:
  // the tensor map is per (tensor, box), the coordinates are the tile indices.
  struct TmaTile {
    int tensor = -1, view = -1, coord0 = -1, coord1 = -1;
    int64_t box0 = 0, box1 = 0;
  };
  absl::StatusOr<TmaTile> TmaTensorTile(const Expr& se, const char* what, const char* hint);
  // The shared side of a TMA: a shared view of the tile's shape and dtype.
  absl::Status TmaSharedSide(const TmaTile& tt, int view, Loc loc, const char* what,
                             const char* hint);
  // `bars[i]` (or a one-barrier array `bars`) -> (barrier array var, index var).
  absl::StatusOr<std::pair<int, int>> BarrierArg(const Expr& e);
  absl::StatusOr<Val> WarpgroupId(const BuiltinCall& c);
  absl::StatusOr<Val> Mbarrier(const BuiltinCall& c);
  absl::StatusOr<Val> MbarrierOp(const BuiltinCall& c);
  absl::StatusOr<Val> TmaLoad(const BuiltinCall& c);
  absl::StatusOr<Val> TmaStore(const BuiltinCall& c);
  absl::StatusOr<Val> TmaStoreCommit(const BuiltinCall& c);
  absl::StatusOr<Val> TmaStoreWait(const BuiltinCall& c);
  absl::StatusOr<Val> WarpgroupBarrier(const BuiltinCall& c);
  absl::StatusOr<Val> NamedBarrier(const BuiltinCall& c);
  absl::StatusOr<Val> FenceProxyAsync(const BuiltinCall& c);
  absl::StatusOr<Val> SetMaxNReg(const BuiltinCall& c);

  // ---- collectives (builtins_collective.cc)
  absl::StatusOr<Val> Shfl(const BuiltinCall& c);
  absl::StatusOr<Val> Reduce(const BuiltinCall& c);
  absl::StatusOr<Val> Barrier(const BuiltinCall& c);

  // ---- AMD scheduling hints (builtins_hint.cc)
  absl::StatusOr<Val> Hint(const BuiltinCall& c);

  // ---- tags (builtins_tag.cc)
  absl::StatusOr<Val> TagLambda(const BuiltinCall& c);
  absl::StatusOr<Val> AssertTagEq(const BuiltinCall& c);
  absl::StatusOr<Val> ResetTags(const BuiltinCall& c);
  // A view or fragment whose tags a tag builtin reads or binds.
  absl::StatusOr<int> Tagged(const Expr& x, const char* what);
  absl::Status LowerLambda(const Expr& lam, int rank, ir::Op* op, int want_tensor_rank,
                           int* tensor_index);
  // The yields of a lambda's body: a tensor element's coordinates (data tag)
  // or one custom tag value.
  absl::StatusOr<std::vector<int>> LambdaYields(const Expr& body, int want_tensor_rank,
                                                int* tensor_index);

  // ---- statements (statements.cc)
  absl::Status Stmts(const std::vector<StmtPtr>& body);
  absl::Status Statement(const Stmt& s);
  absl::Status ExprStatement(const Stmt& s);
  absl::Status Return(const Stmt& s);
  absl::Status Assign(const Expr& target, Val v, Loc loc);
  absl::Status AssignName(const std::string& name, Val v, Loc loc);
  // The first assignment of a run-time value to `name`.
  absl::Status DefineName(const std::string& name, const Val& v, Loc loc);
  absl::Status For(const Stmt& s);
  absl::Status While(const Stmt& s);
  absl::Status If(const Stmt& s);

  // ---- signatures (signatures.cc)
  absl::Status KernelHeader();
  absl::Status BindConstParam(const Param& p);
  // A --const override's text as a value of the default's kind.
  absl::StatusOr<Val> ConstOverride(const Param& p, const std::string& text, const Val& def);
  absl::Status BindScalarParam(const Param& p, DType dt);
  absl::Status BindTensorParam(const Param& p);
  // A tensor annotation's extent or stride: "M", "M*K", "2*N" or a constant.
  absl::StatusOr<ir::SymInt> TensorExtent(const Expr& x, bool allow_product);
  // The index of dimension `n`, declared on first use.
  absl::StatusOr<int> Dim(const std::string& n, Loc loc);
  absl::Status KernelDecorator();
  absl::Status DeviceHeader();
  absl::Status Grid(const Stmt& s);

  ModuleCtx* m_;
  const FuncDef& def_;
  ir::Function* f_;
  ir::Block* cur_ = nullptr;
  std::map<std::string, Val> env_;
  std::set<std::string> readonly_;  // params, dims, consts
  std::set<std::string> loop_vars_;
  std::map<std::string, AssignInfo> assigns_;
  std::map<std::string, int> dim_index_;  // kernel dims by name
  bool in_launch_ = false;
  int depth_ = 0;
  int64_t shared_bytes_ = 0;
  int64_t local_bytes_ = 0;
};

}  // namespace argus::dsl::sema

#endif  // ARGUS_DSL_SEMA_LOWERING_H_
