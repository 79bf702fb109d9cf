// The kView family: allocations and views. A view is (offset, shape, stride)
// registers; these ops only compute new ones, no memory moves.
#include "codegen/emit/emitter.h"

namespace argus::codegen::emit {

absl::Status Emitter::ViewOp(const ir::Op& op) {
  switch (op.code) {
    case OpCode::kAllocShared:
    case OpCode::kAllocLocal:
      return Alloc(op);
    case OpCode::kTile:
      return Tile(op);
    case OpCode::kIndex:
      return Index(op);
    case OpCode::kSlice:
      return Slice(op);
    case OpCode::kTranspose: {
      ViewVals vv = LoadView(op.operands[0]);
      std::swap(vv.shape[0], vv.shape[1]);
      std::swap(vv.stride[0], vv.stride[1]);
      StoreView(op.result, vv);
      return absl::OkStatus();
    }
    case OpCode::kReshape:
      return Reshape(op);
    case OpCode::kExtent: {
      ViewVals vv = LoadView(op.operands[0]);
      Set(op.result, b_.CreateTrunc(vv.shape[op.ints[0]], b_.getInt32Ty()));
      return absl::OkStatus();
    }
    default:
      return NotLowered(op);
  }
}

// The allocation's own layout; its storage is bound by the kernel driver.
absl::Status Emitter::Alloc(const ir::Op& op) {
  ViewVals vv;
  vv.off = C64(0);
  for (size_t d = 0; d < op.layout.shape.size(); ++d) {
    vv.shape.push_back(C64(op.layout.shape[d]));
    vv.stride.push_back(C64(op.layout.stride[d]));
  }
  StoreView(op.result, vv);
  return absl::OkStatus();
}

absl::Status Emitter::Tile(const ir::Op& op) {
  ViewVals vv = LoadView(op.operands[0]);
  for (size_t d = 0; d < vv.shape.size(); ++d) {
    Value* c = b_.CreateSExt(Get(op.operands[1 + d]), b_.getInt64Ty());
    vv.off = b_.CreateAdd(vv.off, b_.CreateMul(b_.CreateMul(c, C64(op.ints[d])), vv.stride[d]));
    vv.shape[d] = C64(op.ints[d]);
  }
  StoreView(op.result, vv);
  return absl::OkStatus();
}

absl::Status Emitter::Index(const ir::Op& op) {
  ViewVals vv = LoadView(op.operands[0]);
  int d = static_cast<int>(op.ints[0]);
  Value* i = b_.CreateSExt(Get(op.operands[1]), b_.getInt64Ty());
  vv.off = b_.CreateAdd(vv.off, b_.CreateMul(i, vv.stride[d]));
  vv.shape.erase(vv.shape.begin() + d);
  vv.stride.erase(vv.stride.begin() + d);
  StoreView(op.result, vv);
  return absl::OkStatus();
}

absl::Status Emitter::Slice(const ir::Op& op) {
  ViewVals vv = LoadView(op.operands[0]);
  int d = static_cast<int>(op.ints[0]);
  int64_t step = op.ints[1];
  Value* lo = b_.CreateSExt(Get(op.operands[1]), b_.getInt64Ty());
  Value* hi = b_.CreateSExt(Get(op.operands[2]), b_.getInt64Ty());
  hi = b_.CreateBinaryIntrinsic(I::smax, hi, lo);
  vv.off = b_.CreateAdd(vv.off, b_.CreateMul(lo, vv.stride[d]));
  vv.shape[d] = b_.CreateUDiv(b_.CreateAdd(b_.CreateSub(hi, lo), C64(step - 1)), C64(step));
  vv.stride[d] = b_.CreateMul(vv.stride[d], C64(step));
  StoreView(op.result, vv);
  return absl::OkStatus();
}

// A reshape views the operand's storage row-major with the new shape.
absl::Status Emitter::Reshape(const ir::Op& op) {
  ViewVals vv = LoadView(op.operands[0]);
  vv.shape.clear();
  vv.stride.assign(op.ints.size(), nullptr);
  int64_t st = 1;
  for (int d = static_cast<int>(op.ints.size()) - 1; d >= 0; --d) {
    vv.stride[d] = C64(st);
    st *= op.ints[d];
  }
  for (int64_t s : op.ints) vv.shape.push_back(C64(s));
  StoreView(op.result, vv);
  return absl::OkStatus();
}

}  // namespace argus::codegen::emit
