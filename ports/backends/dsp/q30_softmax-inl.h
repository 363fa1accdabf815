// The DSP port's integer softmax steps shared by its int8 and int16 tables
// (dsp_i8.cc, dsp_i16.cc): exp2_q30 in 32-bit words and the Q0.15
// probabilities, the same integers as the scalar port's (forward_i8.cc,
// int8_fixed.h). Included inside the __ARM_FEATURE_DSP guard.
#ifndef TINYATTN_DSP_Q30_SOFTMAX_INL_H_
#define TINYATTN_DSP_Q30_SOFTMAX_INL_H_

#include <cstddef>
#include <cstdint>

#include "backends/int8_fixed.h"

namespace tinyattn {
namespace dsp {
namespace {

// ---------------------------------------------------------------- exp2_q30

// SMMULR: (a b + 2^31) >> 32, which is rounding_rshift(a b, 32) for a b >= 0
// (GCC 12 has no intrinsic for it and builds it from SMULL and 64-bit adds).
inline int32_t smmulr(int32_t a, int32_t b) {
  int32_t r;
  __asm__("smmulr %0, %1, %2" : "=r"(r) : "r"(a), "r"(b));
  return r;
}
// SMMLAR: c + smmulr(a, b) in one instruction (c 2^32 enters the same sum).
inline int32_t smmlar(int32_t a, int32_t b, int32_t c) {
  int32_t r;
  __asm__("smmlar %0, %1, %2, %3" : "=r"(r) : "r"(a), "r"(b), "r"(c));
  return r;
}

// exp2_q30(u) for u in [INT32_MIN, 0] in 32-bit arithmetic, step for step
// mve_i8.cc's exp2_q30_lanes (which says why each rounding is the same):
// u = -n + f / 2^26, i = f >> 21, r = f mod 2^21. smmulr(4 z, 2^30 / 3) is
// smmulr(z, 4 (2^30 / 3)), the same product.
inline int32_t exp2_q30_word(int32_t u, int32_t one) {
  const uint32_t n = static_cast<uint32_t>(-(u >> 26));  // in [0, 32]
  const uint32_t uu = static_cast<uint32_t>(u);
  const uint32_t i = (uu << 6) >> 27;
  const int32_t r6 = static_cast<int32_t>((uu << 11) >> 5);
  const int32_t z = smmulr(r6, kLn2Q30);
  const int32_t t1 = smmlar(z, 4 * kThirdQ30, one);
  const int32_t t2 = smmlar(z * 2, t1, one);
  const int32_t d3 = smmulr(z * 4, t2);
  const int32_t tab = kExp2TableQ30[i];
  const uint32_t val2 = static_cast<uint32_t>(smmlar(d3 * 4, tab, tab)) << 1;  // 2 val, val in [2^30, 2^31)
  // rounding_rshift(val, n) = (floor(2 val / 2^n) + 1) / 2; n = 32 gives 0
  // (a register shift by 32 clears).
  uint32_t sh;
  __asm__("lsr %0, %1, %2" : "=r"(sh) : "r"(val2), "r"(n));
  return static_cast<int32_t>((sh + 1) >> 1);
}

// ---------------------------------------------------------------- probabilities

// The scalar port's quotients (int8_fixed.h: a per-row reciprocal estimate
// est, p or p - 1, and one exact test), the test as the sign of
// Q = (est + 1) s - (e 2^15 + floor(s/2)) - 1 = est s + c - e 2^15,
// c = s - floor(s/2) - 1: Q < 0 exactly when p = est + 1.
void probabilities(const int32_t* e, size_t n, int64_t sum, int32_t* p) {
  const ReciprocalQ15 q = reciprocal_q15(sum);
  if (!q.exact) return reciprocal_divide(q, e, n, p);
  const uint64_t c = q.s - q.half - 1;
  for (size_t j = 0; j < n; ++j) {
    const uint32_t ej = static_cast<uint32_t>(e[j]);
    const uint32_t hi = static_cast<uint32_t>((static_cast<uint64_t>(ej) * q.r) >> 32);
    const uint32_t est = (hi + q.round) >> q.sh;
    const uint64_t qq = static_cast<uint64_t>(est) * q.s + c - (static_cast<uint64_t>(ej) << 15);
    // cppcheck-suppress shiftTooManyBitsSigned ; arithmetic (ASR) with GCC and clang
    p[j] = static_cast<int32_t>(est - static_cast<uint32_t>(static_cast<int32_t>(qq >> 32) >> 31));
  }
}

}  // namespace
}  // namespace dsp
}  // namespace tinyattn

#endif  // TINYATTN_DSP_Q30_SOFTMAX_INL_H_
