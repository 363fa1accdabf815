// The Helium integer softmax steps shared by the int8 and int16 tables
// (i8_softmax-inl.h, mve_i16.cc): exp2_q30 in four lanes and the Q0.15
// probabilities, the same integers as the scalar port's (forward_i8.cc,
// int8_fixed.h). Included after the helpers of the file that includes it
// (tail32).
#ifndef TINYATTN_MVE_Q30_SOFTMAX_INL_H_
#define TINYATTN_MVE_Q30_SOFTMAX_INL_H_

#include <arm_mve.h>

#include <cstddef>
#include <cstdint>

#include "backends/int8_fixed.h"

namespace tinyattn {
namespace mve {
namespace {

// exp2_q30(u) for u in [INT32_MIN, 0], four lanes. With u = -n + f / 2^26:
// n = -(u >> 26) <= 32 and f = u mod 2^26. VRMULH(a, b) = (a b + 2^31) >> 32
// is rounding_rshift(a b, 32) for a b >= 0, and VQRDMULH(a, b) = VRMULH(2a, b)
// (no saturation at these magnitudes), so rounding_rshift(x y, 32 - k) is
// VQRDMULH(x << (k - 1), y) while x << k fits, with y a scalar where it is a
// constant; VQRDMLASH adds a scalar to that.
// ln2 = kLn2Q30 and third2 = 2 kThirdQ30, passed in so that a loop can hold
// them in registers (GCC 12 reloads such constants from the literal pool on
// every iteration).
inline int32x4_t exp2_q30_lanes(int32x4_t u, int32_t ln2, int32_t third2) {
  const int32x4_t minus_n = vshrq_n_s32(u, 26);
  const uint32x4_t uu = vreinterpretq_u32_s32(u);
  const uint32x4_t i = vshrq_n_u32(vshlq_n_u32(uu, 6), 27);  // f >> 21
  // r << 5 (r = f mod 2^21 < 2^21): z = rounding_rshift(r ln2, 26)
  const int32x4_t r5 = vreinterpretq_s32_u32(vshrq_n_u32(vshlq_n_u32(uu, 11), 6));
  const int32x4_t z = vqrdmulhq_n_s32(r5, ln2);                        // < 2^25
  const int32x4_t t1 = vaddq_n_s32(vqrdmulhq_n_s32(z, third2), kOneQ30);  // 1 + z/3
  const int32x4_t t2 = vqrdmlashq_n_s32(z, t1, kOneQ30);                    // 1 + z/2 (1 + z/3)
  const int32x4_t d3 = vqrdmulhq_s32(vshlq_n_s32(z, 1), t2);  // t3 - 1 in Q30, t3 = 1 + z (...), < 2^25
  const int32x4_t tab = vldrwq_gather_shifted_offset_s32(kExp2TableQ30, i);
  // rounding_rshift(tab * t3, 30) = tab + rounding_rshift(tab * d3, 30): tab * 2^30 shifts out exactly.
  const int32x4_t val = vaddq_s32(tab, vqrdmulhq_s32(vshlq_n_s32(d3, 1), tab));  // [2^30, 2^31)
  // rounding_rshift(val, n): VRSHL by -n rounds half up, which is the same for val > 0
  // (n = 32 gives 0, as every n in [32, 62] does for val < 2^31).
  return vrshlq_s32(val, minus_n);
}

inline int32x4_t exp2_q30_lanes(int32x4_t u) { return exp2_q30_lanes(u, kLn2Q30, 2 * kThirdQ30); }

// ---------------------------------------------------------------- probabilities

// With est = floor(estimate) (p or p - 1, int8_fixed.h), p = est + 1 exactly
// when (est + 1) S <= e 2^15 + floor(S/2), i.e. (2 est + 1) S + (S & 1) <= e 2^16.
// Split S = S1 2^16 + S0 (S0 < 2^16); B <= k 2^16 iff ceil(B / 2^16) <= k, so
// the test is Z = (2 est + 1) S1 + t - e <= 0 with
//   t = ceil(((2 est + 1) S0 + (S & 1)) / 2^16) = ((est + 1) S0 + J2) >> 15,
//   J2 = floor((2^16 - 1 + (S & 1) - S0) / 2),
// whose operands stay below 2^32 (est + 1 <= 2^15 + 1). Z = ceil(Y / 2^16)
// for Y = (2 est + 1) S + (S & 1) - e 2^16 in (-2S, 2S): |Z| < 2^31 for
// S < 2^46 - 2^16, so Z in modular uint32 is exact. p = est - (~Z >> 31),
// ~Z = S1 - 1 + 2 S1 est + t - e.
void probabilities(const int32_t* e, size_t n, int64_t sum, int32_t* p) {
  const ReciprocalQ15 q = reciprocal_q15(sum);
  if (!q.exact) return reciprocal_divide(q, e, n, p);
  // One division per row (reciprocal_q15), none per key.
  const uint32_t round = q.round;
  const int32_t minus_sh = -q.sh;
  const uint32x4_t rv = vdupq_n_u32(q.r);
  if (q.s < (uint64_t{1} << 46) - (uint64_t{1} << 16)) {
    const uint32_t s1 = static_cast<uint32_t>(q.s >> 16), s0 = static_cast<uint32_t>(q.s & 0xffffu);
    const uint32_t j3 = s0 + ((0xffffu + static_cast<uint32_t>(q.s & 1u) - s0) >> 1);  // S0 + J2
    const uint32x4_t s0v = vdupq_n_u32(s0), s1x2 = vdupq_n_u32(2 * s1);
    auto lanes = [&](uint32x4_t ev) {
      const uint32x4_t est = vshlq_r_u32(vaddq_n_u32(vmulhq_u32(ev, rv), round), minus_sh);
      const uint32x4_t t = vshrq_n_u32(vmlasq_n_u32(est, s0v, j3), 15);
      const uint32x4_t not_z = vsubq_u32(vaddq_u32(vmlasq_n_u32(est, s1x2, s1 - 1), t), ev);
      return vreinterpretq_s32_u32(
          vsubq_u32(est, vreinterpretq_u32_s32(vshrq_n_s32(vreinterpretq_s32_u32(not_z), 31))));
    };
    size_t j = 0;
    for (; j + 4 <= n; j += 4) vst1q_s32(p + j, lanes(vreinterpretq_u32_s32(vld1q_s32(e + j))));
    if (j < n) {
      const mve_pred16_t pr = tail32(n, j);
      vstrwq_p_s32(p + j, lanes(vreinterpretq_u32_s32(vld1q_z_s32(e + j, pr))), pr);
    }
    return;
  }
  // Sums of 2^46 - 2^16 and above: the exact 64-bit comparison per key.
  // Chunks of kChunk keys (p may be e, so the estimates wait in a buffer).
  constexpr size_t kChunk = 8;  // 32 bytes of stack (the forward's frame bound)
  alignas(16) uint32_t next[kChunk];
  for (size_t j0 = 0, len = 0; j0 < n; j0 += len) {
    len = n - j0 < kChunk ? n - j0 : kChunk;
    // Four lanes: next = floor(estimate) + 1, which is p or p + 1.
    for (size_t j = 0; j < len; j += 4) {
      const uint32x4_t ev = vreinterpretq_u32_s32(vld1q_z_s32(e + j0 + j, tail32(len, j)));
      const uint32x4_t est = vshlq_r_u32(vaddq_n_u32(vmulhq_u32(ev, rv), round), minus_sh);
      vst1q_u32(next + j, vaddq_n_u32(est, 1));
    }
    for (size_t j = 0; j < len; ++j)
      p[j0 + j] = static_cast<int32_t>(reciprocal_fix(q, static_cast<uint32_t>(e[j0 + j]), next[j]));
  }
}

}  // namespace
}  // namespace mve
}  // namespace tinyattn

#endif  // TINYATTN_MVE_Q30_SOFTMAX_INL_H_
