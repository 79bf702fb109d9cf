// Pass 1 of the lowering (which target lacks which construct), the located
// error helper, and the host-side grid evaluation.
#include "absl/strings/str_cat.h"
#include "base/status.h"
#include "codegen/lower.h"
#include "codegen/lower_internal.h"

namespace argus::codegen {

namespace ir = dsl::ir;
using ir::OpCode;

absl::Status LoweringError(const ir::Module& m, dsl::Loc loc, std::string message,
                           std::string hint) {
  if (m.source) {
    dsl::Diagnostic d{loc, std::move(message), std::move(hint)};
    return absl::FailedPreconditionError(dsl::FormatDiagnostic(*m.source, d));
  }
  return absl::FailedPreconditionError(absl::StrCat(loc.line, ":", loc.col, ": ", message,
                                                    hint.empty() ? "" : " (hint: " + hint + ")"));
}

namespace {

bool IsFp8(dsl::DType t) { return t == dsl::DType::kE4M3 || t == dsl::DType::kE5M2; }

class SupportPass {
 public:
  SupportPass(const ir::Module& m, const ir::Function& f, const GpuTarget& t,
              std::vector<std::string>* notes)
      : m_(m), f_(f), t_(t), notes_(notes) {}

  absl::Status Block(const ir::Block& b) {
    for (const ir::Op& op : b) {
      RETURN_IF_ERROR(One(op));
      for (const ir::Block& r : op.regions) RETURN_IF_ERROR(Block(r));
    }
    return absl::OkStatus();
  }

 private:
  absl::Status Lacks(const ir::Op& op, const std::string& what, const std::string& hint) {
    return LoweringError(m_, op.loc, absl::StrCat(what, "; target ", t_.arch, " lacks it"), hint);
  }

  absl::Status One(const ir::Op& op) {
    bool amd = t_.vendor == GpuVendor::kAmd;
    int hw = amd ? 64 : 32;
    if (op.result >= 0 && IsFp8(f_.vars[op.result].type.dtype)) {
      return LoweringError(
          m_, op.loc,
          absl::StrCat("fp8 (e4m3/e5m2) values are not lowered by codegen yet (", t_.arch, ")"),
          "compute in bf16 or f32; the interpreter runs fp8");
    }
    if (amd && ir::Info(op.code).target == ir::OpTarget::kHopper) {
      return Lacks(op, absl::StrCat(ir::OpCodeName(op.code), " is a Hopper (sm_90a) operation"),
                   "write the AMD variant with mfma_* fragments and copy_async");
    }
    switch (op.code) {
      case OpCode::kFragment:
      case OpCode::kLoadFragment:
      case OpCode::kMma: {
        int v = op.code == OpCode::kMma ? op.operands[0] : op.result;
        const dsl::MmaInfo* mi = f_.vars[v].type.frag.mma;
        if (mi && mi->arch != t_.arch) {
          return Lacks(op, absl::StrCat(mi->name, " is a ", mi->arch, " matrix instruction"),
                       amd ? "use mfma_f32_32x32x8_bf16 or mfma_f32_16x16x16_bf16"
                           : "use mma_sync_m16n8k16_bf16");
        }
        break;
      }
      case OpCode::kFragEw:
      case OpCode::kFragRowReduce:
      case OpCode::kFragCoord:
      case OpCode::kFragRowFill:
      case OpCode::kToOperand:
        if (amd) {
          return Lacks(op, absl::StrCat(ir::OpCodeName(op.code), " (fragment math) on ", t_.arch),
                       "fragment math lowers for sm_90a mma.sync fragments; on AMD keep the "
                       "softmax in shared memory (examples/flash_attention.py)");
        }
        break;
      case OpCode::kShfl:
      case OpCode::kWarpReduce:
      case OpCode::kBlockReduce:
        if (f_.warp_size > hw) {
          return Lacks(op, absl::StrCat("a warp collective over ", f_.warp_size, " lanes"),
                       "compile for the kernel's own arch");
        }
        if (hw % f_.warp_size != 0) {
          return Lacks(op, absl::StrCat("warp size ", f_.warp_size), "use a power of two");
        }
        break;
      case OpCode::kCopy:
        if (f_.vars[op.operands[0]].type.rank() > 2) {
          return LoweringError(m_, op.loc, "codegen lowers copies of rank 1 and 2 only",
                               "copy each 2-D slice");
        }
        break;
      case OpCode::kHint:
        if (!amd) {
          notes_->push_back(absl::StrCat(op.loc.line, ":", op.loc.col, ": ", op.name,
                                         " is an AMD scheduling hint; ignored on ", t_.arch));
        }
        break;
      default:
        break;
    }
    return absl::OkStatus();
  }

  const ir::Module& m_;
  const ir::Function& f_;
  const GpuTarget& t_;
  std::vector<std::string>* notes_;
};

}  // namespace

absl::Status CheckTargetSupport(const ir::Module& m, const ir::Function& k, const GpuTarget& t,
                                std::vector<std::string>* notes) {
  if (t.arch != "sm_90a" && t.arch != "gfx942") {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown target '", t.arch, "' (use sm_90a or gfx942)"));
  }
  if (k.warp_size > (t.vendor == GpuVendor::kAmd ? 64 : 32) || k.threads > 1024) {
    // Warp-level MMA layouts of a 64-lane kernel cannot run on 32-lane warps.
    for (const ir::Var& v : k.vars) {
      if (v.type.is_frag())
        return LoweringError(m, k.loc,
                             absl::StrCat("kernel ", k.name, " uses ", k.warp_size,
                                          "-lane warps; target ", t.arch, " lacks them"),
                             "compile for the kernel's own arch");
    }
  }
  for (const ir::Function& f : m.functions) {
    if (f.is_kernel && &f != &k) continue;
    SupportPass p(m, f, t, notes);
    RETURN_IF_ERROR(p.Block(f.body));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::array<int, 3>> EvalGrid(const ir::Function& k,
                                            const std::map<std::string, int64_t>& dims) {
  std::vector<int64_t> v(k.vars.size(), 0);
  for (size_t i = 0; i < k.dims.size(); ++i) {
    auto it = dims.find(k.dims[i]);
    if (it == dims.end())
      return absl::InvalidArgumentError(absl::StrCat("missing --dims ", k.dims[i], "=..."));
    v[k.dim_vars[i]] = it->second;
  }
  for (const ir::Op& op : k.launch) {
    auto a = [&](int i) { return v[op.operands[i]]; };
    int64_t r = 0;
    switch (op.code) {
      case OpCode::kConst:
        r = op.ints.empty() ? static_cast<int64_t>(op.fval) : op.ints[0];
        break;
      case OpCode::kMov:
      case OpCode::kCast:
        r = a(0);
        break;
      case OpCode::kBinary: {
        int64_t x = a(0), y = a(1);
        switch (static_cast<ir::BinOp>(op.sub)) {
          case ir::BinOp::kAdd:
            r = x + y;
            break;
          case ir::BinOp::kSub:
            r = x - y;
            break;
          case ir::BinOp::kMul:
            r = x * y;
            break;
          case ir::BinOp::kFloorDiv:
          case ir::BinOp::kDiv:
          case ir::BinOp::kMod: {
            if (y == 0) return absl::InvalidArgumentError("division by zero in the grid");
            ir::FloorDivMod d = ir::FloorDivide(x, y);
            r = op.sub == static_cast<uint8_t>(ir::BinOp::kMod) ? d.rem : d.quot;
            break;
          }
          case ir::BinOp::kMin:
            r = std::min(x, y);
            break;
          case ir::BinOp::kMax:
            r = std::max(x, y);
            break;
          default:
            return absl::InvalidArgumentError("unsupported operator in the grid expression");
        }
        break;
      }
      case OpCode::kSelect:
        r = a(0) ? a(1) : a(2);
        break;
      case OpCode::kCompare: {
        int64_t x = a(0), y = a(1);
        r = ir::ApplyCmp(static_cast<ir::CmpOp>(op.sub), x, y);
        break;
      }
      default:
        return absl::InvalidArgumentError(
            absl::StrCat("grid expression uses ", ir::OpCodeName(op.code)));
    }
    if (op.result >= 0) v[op.result] = r;
  }
  std::array<int, 3> g{1, 1, 1};
  for (size_t d = 0; d < k.grid.size() && d < 3; ++d) {
    int64_t x = v[k.grid[d]];
    if (x < 0 || x > (int64_t{1} << 31) - 1)
      return absl::InvalidArgumentError(absl::StrCat("grid dim ", d, " = ", x, " out of range"));
    g[d] = static_cast<int>(x);
  }
  return g;
}

}  // namespace argus::codegen
