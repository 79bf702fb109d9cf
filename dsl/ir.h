// dsl/ir.h: the tile IR — what the checker produces and the interpreter,
// verifier and codegen consume.
//
// A Module holds device Functions and kernel Functions. A Function owns a table
// of Vars (typed, named, mutable per-thread registers: scalars, views,
// fragments) and a structured body: a Block is a list of Ops; kFor / kIf /
// kWhile own nested Blocks, so control flow is always structured. Each Op
// names its result Var (or -1) and operand Vars by index into Function::vars,
// and carries its source location. Compile-time constants are folded before
// the IR is built: only kConst ops hold literal values; shapes, thread
// layouts, shared-memory layouts and swizzles are attributes.
//
// Views (Type::kView) are windows onto memory: memory space, dtype, shape
// (static extents, or -1 where only known at run time) — their strides and
// offset are run-time values derived through kTile/kIndex/kSlice/... from a
// kernel parameter, a kAllocShared or a kAllocLocal, whose layouts are fully
// described by attributes (TensorParam::shape/stride, Op::layout).
//
// The textual dump (Dump) is stable: golden tests compare it.
//
// Thread safety: plain data; immutable once built, then safe to share.
#ifndef ARGUS_DSL_IR_H_
#define ARGUS_DSL_IR_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "dsl/mma.h"
#include "dsl/source.h"
#include "dsl/types.h"

namespace argus::dsl::ir {

// ---- Types ------------------------------------------------------------------

enum class TypeKind : uint8_t { kVoid, kScalar, kView, kFragment, kBarrier };

struct FragType {
  const MmaInfo* mma = nullptr;
  FragRole role = FragRole::kAcc;
  int rows = 0, cols = 0;  // the logical tile this fragment holds
  int bm = 0, bn = 0;      // the accumulator tile it belongs to
  int wm = 1, wn = 1;      // warps (warp groups for wgmma)
  int first = 0;           // first warp (group) of the block holding it
  // wgmma A from registers (to_operand of a wgmma accumulator) rather than a
  // shared-memory descriptor.
  bool regs = false;
  // wgmma A/B operands are shared-memory descriptors (a view, no registers)
  // unless `regs`.
  bool is_desc() const {
    return mma && mma->wgmma && (role == FragRole::kA || role == FragRole::kB) && !regs;
  }
  FragGeom Geom() const;
};

struct Type {
  TypeKind kind = TypeKind::kVoid;
  DType dtype = DType::kI32;     // scalar type / element type
  Space space = Space::kGlobal;  // kView
  std::vector<int64_t> shape;    // kView: extents, -1 = dynamic; kBarrier: {count}
  FragType frag;                 // kFragment

  static Type Void() { return Type{}; }
  static Type Scalar(DType t) {
    Type ty;
    ty.kind = TypeKind::kScalar;
    ty.dtype = t;
    return ty;
  }
  static Type View(Space s, DType t, std::vector<int64_t> shape) {
    Type ty;
    ty.kind = TypeKind::kView;
    ty.space = s;
    ty.dtype = t;
    ty.shape = std::move(shape);
    return ty;
  }
  bool is_scalar() const { return kind == TypeKind::kScalar; }
  bool is_view() const { return kind == TypeKind::kView; }
  bool is_frag() const { return kind == TypeKind::kFragment; }
  bool is_barrier() const { return kind == TypeKind::kBarrier; }
  int rank() const { return static_cast<int>(shape.size()); }
  bool operator==(const Type& o) const;
  std::string ToString() const;
};

// ---- Layouts ----------------------------------------------------------------

// A CuTe-style layout of static shape:stride (in elements), with an optional
// swizzle on the resulting offset. Used for shared buffers, local arrays and
// thread layouts (where stride is row-major and `vec` elements per thread).
struct Layout {
  std::vector<int64_t> shape;
  std::vector<int64_t> stride;
  Swizzle swizzle;
  int64_t vec = 1;         // thread layouts only
  int64_t Size() const;    // product of shape
  int64_t Cosize() const;  // 1 + max offset
  std::string ToString() const;
};

// A symbolic extent or stride of a global tensor: coeff * prod(dims[syms]).
struct SymInt {
  int64_t coeff = 1;
  std::vector<int> syms;  // indices into Function::dims
};

// ---- Ops --------------------------------------------------------------------

// The op set (dsl/ops.def holds each op's spelling, family, target, scope and
// traits; the operand conventions follow).
//
// Scalars (result: scalar):
//   kConst     ints[0] (int types/bool) or fval (floats)
//   kMov       operands [src]; result may be any type (copies views/fragments too)
//   kBinary    sub: BinOp; operands [a, b]; both of the result's dtype
//   kUnary     sub: UnaryOp; operands [a]
//   kCompare   sub: CmpOp; operands [a, b] (same dtype); result bool
//   kSelect    operands [cond, a, b]
//   kCast      operands [a]; result dtype
//   kMath      sub: MathOp; operands [a] (or [a, b] for min/max)
//   kSpecial   sub: SpecialOp (thread_id, block_id(ints[0]), ...)
// Views and memory:
//   kAllocShared  layout; result view
//   kAllocLocal   layout; result view
//   kTile         operands [src, coord...]; ints: tile shape; sub 1: a TMA box (may pass the edge)
//   kIndex        operands [src, i]; ints[0]: dim dropped
//   kSlice        operands [src, lo, hi]; ints[0]: dim, ints[1]: step
//   kTranspose    operands [src] (rank 2)
//   kReshape      operands [src]; ints: new shape
//   kExtent       operands [view]; ints[0]: dim; result i32
//   kLoad         operands [view, idx...]; result scalar of view dtype
//   kStore        operands [view, value, idx...]
//   kBufferLoad   like kLoad, out-of-bounds reads give 0 (AMD buffer_load)
//   kCopy         operands [src, dst]; layout: thread layout; ints[0]: 1 = async;
//                 name: "copy" | "copy_async" | "cp_async"
//   kThreadCopy   operands [src, dst]: each thread copies the whole (small,
//                 constant-shape) tile by itself, 16/8/4-byte accesses where
//                 aligned; layout: all-1 shape, vec = the last dim's extent
//   kCommitGroup
//   kWaitGroup    ints[0]: groups allowed in flight
// Fragments:
//   kFragment       result: zeroed accumulator; name: mma kind
//   kLoadFragment   operands [src, acc]; result fragment (role A/B); name:
//                   "load_fragment"|"ldmatrix"
//   kMma            operands [acc, a, b]; acc += a @ b; name: op spelling
//   kStoreFragment  operands [acc, dst] or [acc, dst, i, j]: the (h, w) = dst-shaped
//                   sub-tile (i, j) of acc; each thread writes the elements it holds
// Elementwise fragment math (docs/dsl.md "Fragment math"). Fragment values of
// any dtype are held as f32 per element (i32 index fragments are exact below
// 2^24, bool fragments are 0/1):
//   kFragEw         sub: FragEwOp; operands: 1..3 fragments or scalars (scalars
//                   broadcast); result: fragment of the operands' geometry
//   kFragRowReduce  sub: ReduceKind; operands [acc]; result row fragment; warp-collective
//   kFragCoord      ints[0]: 0 = row_index, 1 = col_index; operands [acc]; result i32
//   kFragRowFill    operands [acc, value]; result row fragment holding value
//   kToOperand      operands [acc]; result A operand fragment (its dtype: the type)
// Hopper (sm_90a). A barrier operand pair is [barrier array var, index var]:
//   kMbarrier          result: barrier array (kBarrier); ints [count, arrivals]; implies
//                      a block barrier after initialization
//   kMbarArrive        operands [bars, i]
//   kMbarArriveTx      operands [bars, i, nbytes (i32)]: expect_tx + arrive
//   kMbarWait          operands [bars, i, parity (i32)]
//   kTmaLoad           operands [src view, dst view, bars, i, coord0, coord1]; ints
//                      [tensor param index, box0, box1]; coords are tile indices
//   kFenceProxyAsync   fence.proxy.async.shared::cta
//   kSetMaxNReg        ints [registers]
//   kWgmmaOperand      operands [src view, acc]; result: descriptor fragment (role A/B)
//   kWgmma             operands [acc, a, b]: async acc += a @ b (warp-group collective)
//   kWgmmaCommit       warp-group collective
//   kWgmmaWait         ints [groups allowed in flight]; warp-group collective
//   kTmaStore          operands [src view (shared), dst view (global tile), coord0, coord1];
//                      ints [tensor param index, box0, box1]; coords are tile indices;
//                      sub 1: reduce="add" (cp.reduce.async.bulk.tensor ... .add), f32 only
//   kTmaStoreCommit    cp.async.bulk.commit_group (the issuing thread's bulk stores)
//   kTmaStoreWait      ints [groups allowed in flight]: cp.async.bulk.wait_group.read
//   kWarpgroupBarrier  bar.sync 1 + warpgroup_id(), 128: the executing warp group only
//   kNamedBarrier      operands [id (i32)]; ints [threads, 1 = sync (bar.sync) / 0 = arrive
//                      (bar.arrive)]: hardware barrier `id` completes once `threads` threads
//                      arrived or synced on it; only sync waits for that
// Warp and block collectives:
//   kShfl         sub: ShflKind; operands [x, arg]
//   kWarpReduce   sub: ReduceKind; operands [x]
//   kBlockReduce  sub: ReduceKind; operands [x]
//   kBarrier
//   kHint  name: s_waitcnt | sched_group_barrier | s_setprio; ints: args
//          (s_waitcnt: [vmcnt, lgkmcnt], -1 = not given)
// Tags (checked by the verifier; no-ops at run time). The lambda is regions[0]
// with params `region_params`, ending in a kYield:
//   kTag          operands [buf]; name: tag name; yield [value]
//   kAssertTag    operands [x]; name: "" (data tag: yield coords of tensor
//                 param ints[0]) or custom tag name (yield [value])
//   kAssertTagEq  operands [a, b]
//   kResetTags    operands [buf]
//   kYield        operands: the lambda's results
// Calls:
//   kCall    name: callee; ints[0]: function index; operands: args
//   kReturn  operands: [] or [value]
// Structured control flow:
//   kFor    result: induction var; operands [lo, hi]; ints[0]: step; regions[0]: body
//   kIf     operands [cond]; regions[0]: then, regions[1]: else
//   kWhile  regions[0]: cond block, operands[0]: its bool var; regions[1]: body
enum class OpCode : uint8_t {
#define ARGUS_OP(Code, Spelling, Family, Target, Scope, Traits) k##Code,
#include "dsl/ops.def"
#undef ARGUS_OP
};
inline constexpr int kNumOpCodes = 0
#define ARGUS_OP(Code, Spelling, Family, Target, Scope, Traits) +1
#include "dsl/ops.def"
#undef ARGUS_OP
    ;

// Which handler file of each consumer owns an op.
enum class OpFamily : uint8_t {
  kScalar,        // scalar arithmetic and thread/block indices
  kView,          // allocations and views (no memory traffic)
  kMemory,        // loads, stores, block copies, cp.async groups
  kFragment,      // mma fragments: make, load, multiply, store
  kFragmentMath,  // elementwise and row-wise math on fragments
  kMbarrier,      // Hopper transaction barriers
  kTma,           // Hopper tensor memory accelerator loads/stores and proxy fence
  kWgmma,         // Hopper warp-group mma and register reallocation
  kBarrier,       // block, warp-group and named barriers
  kCollective,    // shuffles and warp/block reductions
  kHint,          // AMD scheduling hints
  kTag,           // data-flow tags (verifier only)
  kCall,          // device function calls and returns
  kControl,       // structured control flow
};
// The targets an op lowers for.
enum class OpTarget : uint8_t { kAny, kHopper };
// Who executes an op together.
enum class OpScope : uint8_t { kThread, kWarp, kWarpGroup, kBlock };
// Trait bits (OpInfo::traits), in a namespace of their own so that the short
// names do not leak into ir::.
namespace op_trait {
enum : uint8_t {
  kNone = 0,
  kNoRuntime = 1 << 0,  // verifier only: no code, no interpreter effect
  kSync = 1 << 1,       // takes effect once every thread of its scope reached it
};
}  // namespace op_trait

struct OpInfo {
  const char* spelling;
  OpFamily family;
  OpTarget target;
  OpScope scope;
  uint8_t traits;
  bool Has(uint8_t trait) const { return (traits & trait) != 0; }
};

// The table row of `c` (dsl/ops.def).
const OpInfo& Info(OpCode c);
const char* OpFamilyName(OpFamily f);

enum class BinOp : uint8_t {
  kAdd,
  kSub,
  kMul,
  kDiv,
  kFloorDiv,
  kMod,
  kShl,
  kShr,
  kAnd,
  kOr,
  kXor,
  kMin,
  kMax
};
// kFragEw functions. Binary ones take [a, b]; kExp2 [a]; kSelect [cond, a, b];
// kFma [a, b, c] (a * b + c rounded once).
enum class FragEwOp : uint8_t {
  kAdd,
  kSub,
  kMul,
  kDiv,
  kMax,
  kMin,
  kExp2,
  kLt,
  kLe,
  kGt,
  kGe,
  kEq,
  kNe,
  kSelect,
  kFma
};
enum class UnaryOp : uint8_t { kNeg, kNot, kBitNot };
enum class CmpOp : uint8_t { kLt, kLe, kGt, kGe, kEq, kNe };
// Python's integer // and % (the DSL's semantics): the remainder takes the
// divisor's sign. y must not be 0. INT64_MIN // -1 wraps to INT64_MIN with
// remainder 0 instead of trapping.
struct FloorDivMod {
  int64_t quot, rem;
};
inline FloorDivMod FloorDivide(int64_t x, int64_t y) {
  if (x == INT64_MIN && y == -1) return {x, 0};
  int64_t q = x / y, m = x % y;
  if (m != 0 && ((m < 0) != (y < 0))) {
    --q;
    m += y;
  }
  return {q, m};
}

// The one meaning of a CmpOp, for every evaluator (checker constant folding,
// interpreter, codegen folding, the verifier's Z3 terms): applies it with the
// type's own operators.
template <class T>
auto ApplyCmp(CmpOp op, const T& x, const T& y) -> decltype(x < y) {
  switch (op) {
    case CmpOp::kLt:
      return x < y;
    case CmpOp::kLe:
      return x <= y;
    case CmpOp::kGt:
      return x > y;
    case CmpOp::kGe:
      return x >= y;
    case CmpOp::kEq:
      return x == y;
    case CmpOp::kNe:
      break;
  }
  return x != y;
}
enum class MathOp : uint8_t { kExp, kExp2, kLog, kSqrt, kRsqrt, kAbs };
enum class SpecialOp : uint8_t {
  kThreadId,
  kBlockId,
  kGridDim,
  kWarpId,
  kLaneId,
  kWarpSize,
  kWarpGroupId
};
enum class ShflKind : uint8_t { kXor, kDown, kIdx };
enum class ReduceKind : uint8_t { kSum, kMax };

// The op's spelling in the IR dump (Info(c).spelling).
const char* OpCodeName(OpCode c);

struct Op;
using Block = std::vector<Op>;

struct Op {
  OpCode code;
  uint8_t sub = 0;
  Loc loc;
  int result = -1;
  std::vector<int> operands;
  std::vector<int64_t> ints;
  double fval = 0;
  std::string name;
  Layout layout;
  std::vector<int> region_params;
  std::vector<Block> regions;
};

// ---- Functions and modules ---------------------------------------------------

struct Var {
  std::string name;  // source name, or "" for temporaries
  Type type;
};

struct TensorParam {
  std::string name;
  int var;  // the view var bound at entry
  DType dtype;
  std::vector<SymInt> shape;
  std::vector<SymInt> stride;
};

struct ScalarParam {
  std::string name;
  int var;
  DType dtype;
};

struct ConstParam {
  std::string name;
  bool is_float = false;
  int64_t ival = 0;
  double fval = 0;
  bool overridden = false;
};

struct Function {
  std::string name;
  bool is_kernel = false;
  Loc loc;
  std::vector<Var> vars;
  // Kernels.
  int threads = 0;
  std::string arch;
  int warp_size = 32;
  std::vector<std::string> dims;  // symbolic dims in order of appearance
  std::vector<int> dim_vars;      // their i32 vars, bound at entry
  std::vector<TensorParam> tensors;
  std::vector<ScalarParam> scalars;
  std::vector<ConstParam> consts;
  Block launch;           // host-side ops computing the grid
  std::vector<int> grid;  // vars (computed by `launch`), 1-3 entries
  // Device functions.
  std::vector<int> params;  // scalar param vars
  Type ret;                 // kVoid or a scalar
  Block body;

  int AddVar(std::string name, Type type) {
    vars.push_back(Var{std::move(name), std::move(type)});
    return static_cast<int>(vars.size()) - 1;
  }
};

struct Module {
  std::shared_ptr<const SourceFile> source;
  std::vector<Function> functions;  // device functions precede their callers
  const Function* Find(const std::string& name) const;
};

// The stable textual form.
std::string Dump(const Function& f);
std::string Dump(const Module& m);

}  // namespace argus::dsl::ir

#endif  // ARGUS_DSL_IR_H_
