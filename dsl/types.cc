#include "dsl/types.h"

#include <cmath>
#include <limits>

namespace argus::dsl {

const char* DTypeName(DType t) {
  switch (t) {
    case DType::kBool:
      return "bool";
    case DType::kI32:
      return "i32";
    case DType::kI64:
      return "i64";
    case DType::kU32:
      return "u32";
    case DType::kF16:
      return "f16";
    case DType::kBF16:
      return "bf16";
    case DType::kF32:
      return "f32";
    case DType::kE4M3:
      return "e4m3";
    case DType::kE5M2:
      return "e5m2";
  }
  return "?";
}

std::optional<DType> DTypeFromName(std::string_view n) {
  static const std::pair<const char*, DType> kNames[] = {
      {"bool", DType::kBool}, {"i32", DType::kI32},   {"i64", DType::kI64}, {"u32", DType::kU32},
      {"f16", DType::kF16},   {"bf16", DType::kBF16}, {"f32", DType::kF32}, {"e4m3", DType::kE4M3},
      {"e5m2", DType::kE5M2}, {"fp8", DType::kE4M3}};
  for (const auto& [name, t] : kNames) {
    if (n == name) return t;
  }
  return std::nullopt;
}

int DTypeBytes(DType t) {
  switch (t) {
    case DType::kBool:
      return 1;
    case DType::kI32:
    case DType::kU32:
    case DType::kF32:
      return 4;
    case DType::kI64:
      return 8;
    case DType::kF16:
    case DType::kBF16:
      return 2;
    case DType::kE4M3:
    case DType::kE5M2:
      return 1;
  }
  return 4;
}

int FloatRank(DType t) {
  switch (t) {
    case DType::kF32:
      return 3;
    case DType::kF16:
    case DType::kBF16:
      return 2;
    case DType::kE4M3:
    case DType::kE5M2:
      return 1;
    default:
      return 0;
  }
}

namespace {

// Rounds to a binary format with `mbits` explicit mantissa bits and minimum
// normal exponent `emin` (value 2^emin), max finite `maxv`.
double RoundFormat(double x, int mbits, int emin, double maxv, bool saturate) {
  if (std::isnan(x)) return x;
  if (std::isinf(x)) return saturate ? std::copysign(maxv, x) : x;
  if (x == 0) return x;
  int e;
  std::frexp(x, &e);  // |x| = m * 2^e, m in [0.5, 1): exponent of leading bit is e-1
  int lead = e - 1;
  if (lead < emin) lead = emin;
  double quantum = std::ldexp(1.0, lead - mbits);
  double r = std::nearbyint(x / quantum) * quantum;
  if (std::fabs(r) > maxv) {
    return saturate ? std::copysign(maxv, x) : std::copysign(INFINITY, x);
  }
  if (r == 0) return std::copysign(0.0, x);
  return r;
}

}  // namespace

double RoundTo(DType t, double x) {
  switch (t) {
    case DType::kF32:
      return static_cast<double>(static_cast<float>(x));
    case DType::kBF16:
      return RoundFormat(x, 7, -126, 3.38953138925153547590470800371487866880e38, false);
    case DType::kF16:
      return RoundFormat(x, 10, -14, 65504.0, false);
    case DType::kE4M3:
      return RoundFormat(x, 3, -6, 448.0, true);
    case DType::kE5M2:
      return RoundFormat(x, 2, -14, 57344.0, false);
    default:
      return x;
  }
}

int64_t WrapInt(DType t, int64_t x) {
  switch (t) {
    case DType::kBool:
      return x != 0;
    case DType::kI32:
      return static_cast<int32_t>(static_cast<uint32_t>(x));
    case DType::kU32:
      return static_cast<uint32_t>(x);
    default:
      return x;
  }
}

double ConvertToFloat(DType to, double x) { return RoundTo(to, x); }

int64_t ConvertToInt(DType to, double x) {
  if (std::isnan(x)) return 0;
  if (to == DType::kBool) return x != 0;
  double lo, hi;
  switch (to) {
    case DType::kI32:
      lo = -2147483648.0;
      hi = 2147483647.0;
      break;
    case DType::kU32:
      lo = 0;
      hi = 4294967295.0;
      break;
    default:
      lo = -9.2233720368547758e18;
      hi = 9.2233720368547748e18;
      break;
  }
  double v = std::trunc(x);
  if (v < lo) v = lo;
  if (v > hi) v = hi;
  return static_cast<int64_t>(v);
}

const char* SpaceName(Space s) {
  switch (s) {
    case Space::kGlobal:
      return "global";
    case Space::kShared:
      return "shared";
    case Space::kLocal:
      return "local";
  }
  return "?";
}

}  // namespace argus::dsl
