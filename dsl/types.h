// dsl/types.h: scalar types, memory spaces, swizzles and exact rounding.
//
// DType is the element type of every scalar and tensor in the DSL. RoundTo()
// rounds a double to a float type with round-to-nearest-even (f32, f16, bf16,
// e4m3 saturating to +-448, e5m2 overflowing to inf); WrapInt() wraps an
// integer to an int type's width. These are the interpreter's arithmetic and
// the definition codegen must match.
//
// Thread safety: pure functions and plain data.
#ifndef ARGUS_DSL_TYPES_H_
#define ARGUS_DSL_TYPES_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace argus::dsl {

enum class DType : uint8_t { kBool, kI32, kI64, kU32, kF16, kBF16, kF32, kE4M3, kE5M2 };

const char* DTypeName(DType t);
std::optional<DType> DTypeFromName(std::string_view name);  // accepts "fp8" = e4m3
int DTypeBytes(DType t);
inline bool IsFloat(DType t) { return t >= DType::kF16; }
inline bool IsInt(DType t) { return t == DType::kI32 || t == DType::kI64 || t == DType::kU32; }
// Float precedence for promotion: f32 3, f16/bf16 2, fp8 1.
int FloatRank(DType t);

double RoundTo(DType t, double x);    // floats only
int64_t WrapInt(DType t, int64_t x);  // ints and bool
// Converts a value of any type to `to` (float->int truncates toward zero and
// saturates at the type's range; NaN -> 0).
double ConvertToFloat(DType to, double x);
int64_t ConvertToInt(DType to, double x);

enum class Space : uint8_t { kGlobal, kShared, kLocal };
const char* SpaceName(Space s);

// CuTe Swizzle<B, M, S>: o ^ ((o >> S) & (((1 << B) - 1) << M)), applied to an
// element offset. b == 0 means identity.
struct Swizzle {
  int b = 0, m = 0, s = 0;
  bool active() const { return b > 0; }
  int64_t Apply(int64_t o) const {
    if (b <= 0) return o;
    int64_t mask = ((int64_t{1} << b) - 1) << m;
    return o ^ ((o >> s) & mask);
  }
};

}  // namespace argus::dsl

#endif  // ARGUS_DSL_TYPES_H_
