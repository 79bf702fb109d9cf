// Pass 1 of the lowering: which target lacks which construct. Each op is
// checked by its family (ir::Info(op.code).family); Hopper-only ops are the
// table's kHopper rows.
#include "absl/strings/str_cat.h"
#include "base/status.h"
#include "codegen/lower.h"
#include "codegen/lower_internal.h"

namespace argus::codegen {

namespace ir = dsl::ir;
using ir::OpCode;
using ir::OpFamily;

namespace {

bool IsFp8(dsl::DType t) { return t == dsl::DType::kE4M3 || t == dsl::DType::kE5M2; }

class SupportPass {
 public:
  SupportPass(const ir::Module& m, const ir::Function& f, const GpuTarget& t,
              std::vector<std::string>* notes)
      : m_(m), f_(f), t_(t), notes_(notes), amd_(t.vendor == GpuVendor::kAmd) {}

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
    if (op.result >= 0 && IsFp8(f_.vars[op.result].type.dtype)) {
      return LoweringError(
          m_, op.loc,
          absl::StrCat("fp8 (e4m3/e5m2) values are not lowered by codegen yet (", t_.arch, ")"),
          "compute in bf16 or f32; the interpreter runs fp8");
    }
    if (amd_ && ir::Info(op.code).target == ir::OpTarget::kHopper) {
      return Lacks(op, absl::StrCat(ir::OpCodeName(op.code), " is a Hopper (sm_90a) operation"),
                   "write the AMD variant with mfma_* fragments and copy_async");
    }
    switch (ir::Info(op.code).family) {
      case OpFamily::kFragment:
        return Fragment(op);
      case OpFamily::kFragmentMath:
        if (!amd_) return absl::OkStatus();
        return Lacks(op, absl::StrCat(ir::OpCodeName(op.code), " (fragment math) on ", t_.arch),
                     "fragment math lowers for sm_90a mma.sync fragments; on AMD keep the "
                     "softmax in shared memory (examples/flash_attention.py)");
      case OpFamily::kCollective:
        return Collective(op);
      case OpFamily::kMemory:
        if ((op.code == OpCode::kCopy || op.code == OpCode::kThreadCopy) &&
            f_.vars[op.operands[0]].type.rank() > 2) {
          return LoweringError(m_, op.loc, "codegen lowers copies of rank 1 and 2 only",
                               "copy each 2-D slice");
        }
        return absl::OkStatus();
      case OpFamily::kHint:
        if (!amd_) {
          notes_->push_back(absl::StrCat(op.loc.line, ":", op.loc.col, ": ", op.name,
                                         " is an AMD scheduling hint; ignored on ", t_.arch));
        }
        return absl::OkStatus();
      case OpFamily::kScalar:
      case OpFamily::kView:
      case OpFamily::kMbarrier:
      case OpFamily::kTma:
      case OpFamily::kWgmma:
      case OpFamily::kBarrier:
      case OpFamily::kTag:
      case OpFamily::kCall:
      case OpFamily::kControl:
        return absl::OkStatus();
    }
    return absl::OkStatus();
  }

  // The fragment an op makes or works on belongs to one matrix instruction,
  // which must be the target's.
  absl::Status Fragment(const ir::Op& op) {
    int v = op.result >= 0 ? op.result : op.operands[0];
    const dsl::MmaInfo* mi = f_.vars[v].type.frag.mma;
    if (mi && mi->arch != t_.arch) {
      return Lacks(op, absl::StrCat(mi->name, " is a ", mi->arch, " matrix instruction"),
                   amd_ ? "use mfma_f32_32x32x8_bf16 or mfma_f32_16x16x16_bf16"
                        : "use mma_sync_m16n8k16_bf16");
    }
    return absl::OkStatus();
  }

  // Warp collectives need the kernel's warp to fit the hardware's, evenly.
  absl::Status Collective(const ir::Op& op) {
    int hw = amd_ ? 64 : 32;
    if (f_.warp_size > hw) {
      return Lacks(op, absl::StrCat("a warp collective over ", f_.warp_size, " lanes"),
                   "compile for the kernel's own arch");
    }
    if (hw % f_.warp_size != 0) {
      return Lacks(op, absl::StrCat("warp size ", f_.warp_size), "use a power of two");
    }
    return absl::OkStatus();
  }

  const ir::Module& m_;
  const ir::Function& f_;
  const GpuTarget& t_;
  std::vector<std::string>* notes_;
  const bool amd_;
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

}  // namespace argus::codegen
