// IEEE 754 binary16 ("half") storage and conversions.
//
// tinyattn::half is storage only: the fp16 path widens to fp32 for its
// arithmetic, except for the opt-in native fp16 products (see forward_f16.h). Conversions follow IEEE 754:
//  * half -> float is exact (every half, subnormals included, is a float);
//  * float -> half rounds to nearest, ties to even; values >= 65520 in
//    magnitude become +-inf; values below 2^-25 become +-0 (2^-25 itself is
//    a tie and goes to the even neighbour, 0); subnormal halves are produced;
//  * NaN stays NaN (quieted, sign kept; the payload is not specified because
//    hardware converters differ in it).
// Hardware is used where the build has it (x86 F16C, detected at run time
// when not enabled at compile time; Arm __fp16 with the IEEE format, which the
// compiler lowers to VCVTB/FCVT or to its own runtime). The software path is
// used elsewhere and is tested against the hardware one and against an exact
// double-based reference on every half and a dense sweep of floats.
#pragma once

#include <cstddef>
#include <cstdint>

namespace tinyattn {

struct half {
  uint16_t bits = 0;

  static constexpr half from_bits(uint16_t b) {
    half h;
    h.bits = b;
    return h;
  }
  friend constexpr bool operator==(half a, half b) { return a.bits == b.bits; }
  friend constexpr bool operator!=(half a, half b) { return a.bits != b.bits; }
};
static_assert(sizeof(half) == 2 && alignof(half) == 2, "half must be two bytes, like uint16_t");

// The portable conversions (integer bit manipulation only, no FPU needed).
float half_to_float_soft(half h);
half float_to_half_soft(float f);

// The conversions this build uses: hardware where present, else the software ones.
// Both give identical results for every non-NaN input.
float to_float(half h);
half to_half(float f);
void to_float(const half* in, float* out, size_t n);
void to_half(const float* in, half* out, size_t n);

// Which converter to_float/to_half use: "f16c", "arm-fp16" or "software".
const char* half_conversion_name();

}  // namespace tinyattn
