// tanh and log for the drivers, from the library's own exp (tinyattn/exp.h)
// and a short log polynomial: a softcapped call or an lse output then links
// no libm function (newlib's tanhf, expm1f and logf are 1.3 KB on a
// Cortex-M4F), and every target rounds them the same way.
// Accuracy (tests/exp/float_math_test.cc, every float of the ranges below
// against double): tanh_f32 within 3 ULP everywhere; log_f32 within 1 ULP
// for every positive float.
#pragma once

#include <cstdint>
#include <limits>

#include "tinyattn/exp.h"

namespace tinyattn {
namespace detail {

inline float abs_f32(float x) { return bits_to_float(float_to_bits(x) & 0x7FFFFFFFu); }
inline float with_sign_of(float magnitude, float sign) {
  return bits_to_float((float_to_bits(magnitude) & 0x7FFFFFFFu) | (float_to_bits(sign) & 0x80000000u));
}

// tanh(x) = e / (e + 2) with e = expm1(2|x|) = s u + (s - 1) from exp's
// parts: s u is exact and so is s - 1 (s = 2^n, 0 <= n <= 26 here), so e
// rounds once and nothing cancels near 0. Beyond 9 the float result is 1.
inline float tanh_f32(float x) {
  const float a = abs_f32(x);
  float t;
  if (a <= 9.0f) {
    const ExpParts p = exp_parts(2.0f * a);
    const float e = p.s * p.u + (p.s - 1.0f);
    t = e / (e + 2.0f);
  } else {
    t = a == a ? 1.0f : a;  // NaN stays NaN
  }
  return with_sign_of(t, x);
}

// log(x) = k ln2 + log(m), m in [sqrt(1/2), sqrt(2)): with f = m - 1 (exact)
// and s = f / (2 + f), log(1 + f) = f - f^2/2 + s (f^2/2 + R(s^2)), R a
// minimax polynomial of degree 4 in s^2 (|s| <= 0.1716, error below 2^-25).
// 0 gives -inf, a negative x or NaN gives NaN, +inf gives +inf.
inline float log_f32(float x) {
  constexpr float kInfinity = std::numeric_limits<float>::infinity();
  if (!(x > 0.0f)) return x == 0.0f ? -kInfinity : std::numeric_limits<float>::quiet_NaN();
  if (x == kInfinity) return x;
  int32_t k = 0;
  if (x < 0x1p-126f) {  // subnormal: scale into the normal range first
    x *= 0x1p25f;
    k = -25;
  }
  uint32_t bits = float_to_bits(x);
  // Move m's range from [1, 2) to [sqrt(1/2), sqrt(2)): 0x3F3504F3 is sqrt(1/2).
  bits += 0x3F800000u - 0x3F3504F3u;
  k += static_cast<int32_t>(bits >> 23) - 127;
  bits = (bits & 0x007FFFFFu) + 0x3F3504F3u;
  const float f = bits_to_float(bits) - 1.0f;
  const float s = f / (2.0f + f);
  const float z = s * s, w = z * z;
  const float r = z * (0x1.555554p-1f + w * 0x1.23d3dcp-2f) + w * (0x1.999c26p-2f + w * 0x1.f13c4cp-3f);
  const float hf2 = 0.5f * f * f;
  const float kf = static_cast<float>(k);
  // ln2 split so that k * ln2_hi is exact for every k here (|k| <= 150).
  return kf * 0x1.62e3p-1f - ((hf2 - (s * (hf2 + r) + kf * 0x1.2fefa2p-17f)) - f);
}

}  // namespace detail
}  // namespace tinyattn
