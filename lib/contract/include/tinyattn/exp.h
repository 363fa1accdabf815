// tinyattn's exp: one algorithm, written in scalar form here and once per SIMD
// technology in ports/, all with the coefficients below, so every port rounds
// the same way and the self-test can check a kernel against this table.
//
//   algorithm  exp(x) = 2^n * (1 + u),  u = r + r^2 * q(r) ~ expm1(r),  n = round(x / ln 2)
//   range red. two-step Cody-Waite: r = x - n*ln2_hi - n*ln2_lo, |r| <= ln2/2
//   polynomial q of degree 4, minimax for (expm1(r) - r) / r^2 in relative
//              error of exp on [-ln2/2, ln2/2] (approximation error 0.05 ULP)
//   rounding   r is exact in u's leading term, so only r^2 * q (< 0.07) and the
//              final 2^n + 2^n * u (2^n * u is exact) round noticeably
//   lanes      fp32, FMA where the target has it
//   accuracy   <= kExpMaxUlp (1.25) ULP against a double-precision exp for every
//              float in [-87.3, 0] (the softmax range); exhaustive sweeps: 0.977
//              ULP without FMA, 1.009 with (tests/exp/exp_accuracy.cc: full sweep
//              opt-in, dense sample in CI)
//   range      x < kExpFlushBelow -> exactly +0 (so masked logits give weight 0);
//              x > kExpOverflowAbove -> +inf; NaN -> NaN
//
// Part of the port contract (lib/contract/include), not of the public API.
#pragma once

#include <cstdint>
#include <cstring>
#include <limits>

namespace tinyattn {

struct ExpCoefficients {
  float log2e;          // 1/ln 2
  float magic;          // 1.5*2^23 + 127: rounds x*log2e to an integer and biases the exponent
  float minus_ln2_hi;   // -ln 2, high part (exact in a few bits)
  float minus_ln2_lo;   // -ln 2, low part
  float c6, c5, c4, c3, c2;  // q(r) = c2 + c3 r + c4 r^2 + c5 r^3 + c6 r^4, c_k ~ 1/k!
  float flush_below;    // inputs below give exactly 0 (2^n would be subnormal)
  float overflow_above; // inputs above give +inf (n stays <= 127 below it)
};

inline constexpr ExpCoefficients kExpCoefficients{
    0x1.715476p+0f,   0x1.8000FEp23f,  -0x1.62E400p-1f, -0x1.7F7D1Cp-20f,
    0x1.6A23C6p-10f,  0x1.123A22p-7f,  0x1.5558F4p-5f,  0x1.555492p-3f,  0x1.FFFFFCp-2f,
    -0x1.5D589Ep6f,   0x1.618p6f,
};

inline constexpr float kExpFlushBelow = kExpCoefficients.flush_below;        // ~ -87.3365
// 88.375, not ln(FLT_MAX) = 88.7228: above ~88.376, n = 128 and 2^n is +inf,
// so s * (1 + r*p) would be inf - inf = NaN. The largest results saturate to +inf.
inline constexpr float kExpOverflowAbove = kExpCoefficients.overflow_above;
// Bound on |exp_poly(x) - exp(x)| / ulp(exp(x)) over every float in [-87.3, 0],
// exp(x) in double. Measured worst: 0.977 ULP (scalar form), 1.009 ULP (every
// step fused), exhaustive sweeps; tests/exp/exp_accuracy.cc holds every port
// to this bound on every target (docs/ports.md lists each target's sweep).
inline constexpr float kExpMaxUlp = 1.25f;

namespace detail {
inline float bits_to_float(uint32_t u) { float f; std::memcpy(&f, &u, sizeof f); return f; }
inline uint32_t float_to_bits(float f) { uint32_t u; std::memcpy(&u, &f, sizeof u); return u; }
}  // namespace detail

// Scalar form of the algorithm: the definition every SIMD port mirrors step by
// step. Written with explicit fmaf-free steps so it rounds the same on every
// compiler; SIMD ports may fuse multiply-adds (the ULP bound covers both).
// expm1(r) for |r| <= ln2/2: the polynomial step of exp_poly.
inline float expm1_reduced(float r, const ExpCoefficients& c = kExpCoefficients) {
  float q = c.c6;
  q = q * r + c.c5;
  q = q * r + c.c4;
  q = q * r + c.c3;
  q = q * r + c.c2;
  return (r * r) * q + r;
}

// exp(x) = s * (1 + u): s = 2^n and u = expm1(r), exp_poly's steps but the last.
struct ExpParts {
  float s, u;
};
inline ExpParts exp_parts(float x, const ExpCoefficients& c = kExpCoefficients) {
  float t = x * c.log2e + c.magic;           // n + magic, rounded to nearest
  const float n = t - c.magic;               // integer-valued
  const float s = detail::bits_to_float(detail::float_to_bits(t) << 23);  // 2^n (biased exponent)
  float r = n * c.minus_ln2_hi + x;
  r = n * c.minus_ln2_lo + r;
  return ExpParts{s, expm1_reduced(r, c)};
}

inline float exp_poly(float x, const ExpCoefficients& c = kExpCoefficients) {
  const ExpParts p = exp_parts(x, c);
  float e = p.s * p.u + p.s;                 // s * (1 + u); s * u is exact
  if (x < c.flush_below) e = 0.0f;
  if (x > c.overflow_above) e = std::numeric_limits<float>::infinity();
  return e;
}

}  // namespace tinyattn
