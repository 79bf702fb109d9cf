// The host side of a launch: the kernel's grid from its `launch` block,
// evaluated for given dims (lower.h).
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "base/status.h"
#include "codegen/lower.h"

namespace argus::codegen {

namespace ir = dsl::ir;
using ir::OpCode;

namespace {

absl::StatusOr<int64_t> GridBinary(const ir::Op& op, int64_t x, int64_t y) {
  switch (static_cast<ir::BinOp>(op.sub)) {
    case ir::BinOp::kAdd:
      return x + y;
    case ir::BinOp::kSub:
      return x - y;
    case ir::BinOp::kMul:
      return x * y;
    case ir::BinOp::kFloorDiv:
    case ir::BinOp::kDiv:
    case ir::BinOp::kMod: {
      if (y == 0) return absl::InvalidArgumentError("division by zero in the grid");
      ir::FloorDivMod d = ir::FloorDivide(x, y);
      return op.sub == static_cast<uint8_t>(ir::BinOp::kMod) ? d.rem : d.quot;
    }
    case ir::BinOp::kMin:
      return std::min(x, y);
    case ir::BinOp::kMax:
      return std::max(x, y);
    default:
      return absl::InvalidArgumentError("unsupported operator in the grid expression");
  }
}

// The value of one launch-block op over the values `v` computed so far.
absl::StatusOr<int64_t> GridValue(const ir::Op& op, const std::vector<int64_t>& v) {
  auto a = [&](int i) { return v[op.operands[i]]; };
  switch (op.code) {
    case OpCode::kConst:
      return op.ints.empty() ? static_cast<int64_t>(op.fval) : op.ints[0];
    case OpCode::kMov:
    case OpCode::kCast:
      return a(0);
    case OpCode::kBinary:
      return GridBinary(op, a(0), a(1));
    case OpCode::kSelect:
      return a(0) ? a(1) : a(2);
    case OpCode::kCompare:
      return static_cast<int64_t>(ir::ApplyCmp(static_cast<ir::CmpOp>(op.sub), a(0), a(1)));
    default:
      return absl::InvalidArgumentError(
          absl::StrCat("grid expression uses ", ir::OpCodeName(op.code)));
  }
}

}  // namespace

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
    ASSIGN_OR_RETURN(int64_t r, GridValue(op, v));
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
