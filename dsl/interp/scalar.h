// dsl/interp/scalar.h: scalar semantics — conversions, rounding and the
// arithmetic of the scalar op family — and that family's handler.
//
// Everything here is inline: scalar ops are most of the instructions the
// thread loop runs, and the evaluators also serve the other families
// (reductions, stores, argument binding). Integers wrap to their type;
// floats round to nearest even in their type, narrow types computing in f32
// as the hardware does.
//
// Thread safety: pure functions; ExecScalar touches only its thread.
#ifndef ARGUS_DSL_INTERP_SCALAR_H_
#define ARGUS_DSL_INTERP_SCALAR_H_

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "absl/base/attributes.h"
#include "dsl/interp/machine.h"
#include "dsl/types.h"

namespace argus::dsl::interp {

inline Slot Convert(Slot v, DType from, DType to) {
  Slot r;
  bool ff = IsFloat(from), ft = IsFloat(to);
  if (ff && ft)
    r.f = from == to ? v.f : RoundTo(to, v.f);
  else if (!ff && ft)
    r.f = RoundTo(to, static_cast<double>(v.i));
  else if (ff && !ft)
    r.i = ConvertToInt(to, v.f);
  else
    r.i = WrapInt(to, v.i);
  return r;
}

inline double Round(DType t, double x) {
  return t == DType::kF32 ? static_cast<double>(static_cast<float>(x)) : RoundTo(t, x);
}

inline double FloatBinary(uint8_t sub, double x, double y) {
  switch (static_cast<ir::BinOp>(sub)) {
    case ir::BinOp::kAdd:
      return x + y;
    case ir::BinOp::kSub:
      return x - y;
    case ir::BinOp::kMul:
      return x * y;
    case ir::BinOp::kDiv:
      return x / y;
    case ir::BinOp::kMin:
      return std::fmin(x, y);
    case ir::BinOp::kMax:
      return std::fmax(x, y);
    default:
      return 0;
  }
}

// x op y in the integer type dt (wrapping, shifts past the width saturate);
// false for a division by zero.
inline bool IntBinary(uint8_t sub, DType dt, int64_t x, int64_t y, int64_t* out) {
  const int bits = dt == DType::kI64 ? 64 : 32;
  const auto ux = static_cast<uint64_t>(x), uy = static_cast<uint64_t>(y);
  int64_t r = 0;
  switch (static_cast<ir::BinOp>(sub)) {
    case ir::BinOp::kAdd:
      r = static_cast<int64_t>(ux + uy);
      break;
    case ir::BinOp::kSub:
      r = static_cast<int64_t>(ux - uy);
      break;
    case ir::BinOp::kMul:
      r = static_cast<int64_t>(ux * uy);
      break;
    case ir::BinOp::kFloorDiv:
    case ir::BinOp::kMod: {
      if (y == 0) return false;
      ir::FloorDivMod d = ir::FloorDivide(x, y);
      r = sub == static_cast<uint8_t>(ir::BinOp::kFloorDiv) ? d.quot : d.rem;
      break;
    }
    case ir::BinOp::kShl:
      r = (y < 0 || y >= bits) ? 0 : static_cast<int64_t>(ux << y);
      break;
    case ir::BinOp::kShr:
      r = (y < 0 || y >= bits) ? (x < 0 ? -1 : 0) : (x >> y);
      break;
    case ir::BinOp::kAnd:
      r = x & y;
      break;
    case ir::BinOp::kOr:
      r = x | y;
      break;
    case ir::BinOp::kXor:
      r = x ^ y;
      break;
    case ir::BinOp::kMin:
      r = std::min(x, y);
      break;
    case ir::BinOp::kMax:
      r = std::max(x, y);
      break;
    case ir::BinOp::kDiv:
      r = 0;
      break;
  }
  *out = WrapInt(dt, r);
  return true;
}

inline Slot Unary(uint8_t sub, DType dt, Slot x) {
  Slot r{0};
  switch (static_cast<ir::UnaryOp>(sub)) {
    case ir::UnaryOp::kNeg:
      if (IsFloat(dt))
        r.f = -x.f;
      else
        r.i = WrapInt(dt, -x.i);
      break;
    case ir::UnaryOp::kNot:
      r.i = !x.i;
      break;
    case ir::UnaryOp::kBitNot:
      r.i = WrapInt(dt, ~x.i);
      break;
  }
  return r;
}

inline Slot Math(uint8_t sub, DType dt, Slot x) {
  Slot out;
  if (!IsFloat(dt)) {  // abs
    out.i = WrapInt(dt, x.i < 0 ? -x.i : x.i);
    return out;
  }
  double r = 0;
  switch (static_cast<ir::MathOp>(sub)) {
    case ir::MathOp::kExp:
      r = std::exp(x.f);
      break;
    case ir::MathOp::kExp2:
      r = std::exp2(x.f);
      break;
    case ir::MathOp::kLog:
      r = std::log(x.f);
      break;
    case ir::MathOp::kSqrt:
      r = std::sqrt(x.f);
      break;
    case ir::MathOp::kRsqrt:
      r = 1.0 / std::sqrt(x.f);
      break;
    case ir::MathOp::kAbs:
      r = std::fabs(x.f);
      break;
  }
  if (dt != DType::kF32) r = static_cast<float>(r);  // narrow types compute in f32
  out.f = Round(dt, r);
  return out;
}

inline int64_t Machine::Special(const Thread& t, ir::SpecialOp op, int64_t dim) const {
  switch (op) {
    case ir::SpecialOp::kThreadId:
      return t.tid;
    case ir::SpecialOp::kBlockId:
      return block_[dim];
    case ir::SpecialOp::kGridDim:
      return grid_[dim];
    case ir::SpecialOp::kWarpId:
      return t.warp;
    case ir::SpecialOp::kLaneId:
      return t.lane;
    case ir::SpecialOp::kWarpSize:
      return k_.warp_size;
    case ir::SpecialOp::kWarpGroupId:
      return t.tid / 128;
  }
  return 0;
}

ABSL_ATTRIBUTE_ALWAYS_INLINE inline absl::Status Machine::ExecScalar(Thread& t, const Insn& in,
                                                                     Slot* s) {
  switch (in.code) {
    case Bc::kConst:
      s[in.dst] = in.k;
      break;
    case Bc::kMov:
      s[in.dst] = s[in.a];
      break;
    case Bc::kMovView:
      t.views[in.dst] = t.views[in.a];
      break;
    case Bc::kMovFrag:
      if (t.frag_pending[in.a] > 0) return AccBusy(t, in.op, in.a);
      t.frags[in.dst] = t.frags[in.a];
      break;
    case Bc::kBinaryF:
      s[in.dst].f = Round(in.dt, FloatBinary(in.sub, s[in.a].f, s[in.b].f));
      break;
    case Bc::kBinary:
      if (!IntBinary(in.sub, in.dt, s[in.a].i, s[in.b].i, &s[in.dst].i))
        return Err(t, in.op, "integer division by zero");
      break;
    case Bc::kUnary:
      s[in.dst] = Unary(in.sub, in.dt, s[in.a]);
      break;
    case Bc::kCompare:
      s[in.dst].i = IsFloat(in.dt2)
                        ? ir::ApplyCmp(static_cast<ir::CmpOp>(in.sub), s[in.a].f, s[in.b].f)
                        : ir::ApplyCmp(static_cast<ir::CmpOp>(in.sub), s[in.a].i, s[in.b].i);
      break;
    case Bc::kSelect:
      s[in.dst] = s[in.a].i ? s[in.b] : s[in.c];
      break;
    case Bc::kCast:
      s[in.dst] = Convert(s[in.a], in.dt2, in.dt);
      break;
    case Bc::kMath:
      s[in.dst] = Math(in.sub, in.dt, s[in.a]);
      break;
    case Bc::kSpecial:
      s[in.dst].i = Special(t, static_cast<ir::SpecialOp>(in.sub), in.imm);
      break;
    default:
      break;
  }
  return absl::OkStatus();
}

}  // namespace argus::dsl::interp

#endif  // ARGUS_DSL_INTERP_SCALAR_H_
