// The Helium int8 softmax: exp_row (logits and the fixed-point exp) and
// probabilities (q30_softmax-inl.h, with the exp, shared with the int16
// table). Included by mve_i8.cc (one translation unit), after the helpers it
// defines (tail32, u32).
#ifndef TINYATTN_MVE_I8_SOFTMAX_INL_H_
#define TINYATTN_MVE_I8_SOFTMAX_INL_H_

#include <arm_mve.h>

#include <climits>

#include "q30_softmax-inl.h"

namespace tinyattn {
namespace mve {
namespace {

// Pass 1 of exp_row in scalar code, for any logit and max_logit.
void scalar_logits(const int32_t* s, size_t n, FixedMultiplier logit, int64_t max_logit, int32_t* e) {
  // Pass 1: u_j = apply(logit, s_j) - max_logit, saturated below at INT32_MIN (2^u
  // rounds to 0 from there on); INT32_MIN also for a masked key. With
  // x = s m (|x| < 2^62) and h = 2^(shift-1):
  //   apply(logit, s) = (x + h - [s < 0]) >> shift     (the -1: ties away from zero)
  // and, when |max_logit| <= 2^(61 - shift), max_logit * 2^shift joins the
  // constant: u = (x + h - max_logit 2^shift - [s < 0]) >> shift, no
  // overflow. SQSHLL by 32 saturates u * 2^32 to int64, so its high word is u
  // saturated to int32.
  const int32_t m = logit.multiplier, shift = logit.shift;
  const int64_t half = int64_t{1} << (shift - 1);  // shift >= 2 (validate())
  const int64_t limit = shift <= 61 ? int64_t{1} << (61 - shift) : 0;  // shift <= 62
  if (max_logit <= limit && max_logit >= -limit) {
    const int64_t base = half - static_cast<int64_t>(static_cast<uint64_t>(max_logit) << shift);
    for (size_t j = 0; j < n; ++j) {
      const int32_t sj = s[j];
      // cppcheck-suppress shiftTooManyBitsSigned ; GCC shifts arithmetically: -[s < 0] in one ADDS/ADC pair
      const int64_t u = asrl(base + int64_t{sj} * m + (sj >> 31), shift);
      e[j] = sj == INT32_MIN ? INT32_MIN : static_cast<int32_t>(sqshll(u, 32) >> 32);
    }
  } else {
    for (size_t j = 0; j < n; ++j) {
      const int32_t sj = s[j];
      const int64_t u = asrl(int64_t{sj} * m + half + (sj < 0 ? -1 : 0), shift) - max_logit;
      const int32_t v = u < INT32_MIN ? INT32_MIN : static_cast<int32_t>(u);
      e[j] = sj == INT32_MIN ? INT32_MIN : v;
    }
  }
}

// apply(logit, s) - max_logit modulo 2^32, four lanes, for a logit shift in
// [8, 62] (m = the multiplier). With x = s m = hi 2^32 + lo (VMULH, VMUL):
//  - shift <= 32: apply = (x + 2^(shift-1) - [s < 0]) >> shift
//      = hi 2^(32-shift) + ((lo + c) >> shift), c = 2^(shift-1) - [s < 0] >= 0,
//    where (lo + c) >> 1 is VHADD (no carry out of 32 bits);
//  - shift = 32 + k: apply = (hi + 2^(k-1) - [s < 0 and lo == 0]) >> k, VRSHL
//    by -k (requantize's tie correction).
// Exact whenever the true difference fits int32.
template <bool kHighShift>
inline uint32x4_t logit_diff_lanes(int32x4_t sv, int32x4_t mv, int32_t m, int32_t shift, uint32_t c_half,
                                   uint32_t hi_scale, uint32_t max_lo) {
  const int32x4_t hi = vmulhq_s32(sv, mv);
  const int32x4_t lo = vmulq_n_s32(sv, m);
  uint32x4_t a;
  if (!kHighShift) {
    const uint32x4_t c = vreinterpretq_u32_s32(vaddq_n_s32(vshrq_n_s32(sv, 31), static_cast<int32_t>(c_half)));
    const uint32x4_t t = vshlq_r_u32(vhaddq_u32(vreinterpretq_u32_s32(lo), c), 1 - shift);
    a = vmlaq_n_u32(t, vreinterpretq_u32_s32(hi), hi_scale);
  } else {
    const int32x4_t tie = vreinterpretq_s32_u32(
        vshrq_n_u32(vreinterpretq_u32_s32(vbicq_s32(sv, vorrq_s32(lo, vnegq_s32(lo)))), 31));
    a = vreinterpretq_u32_s32(vrshlq_n_s32(vsubq_s32(hi, tie), 32 - shift));
  }
  return vsubq_n_u32(a, max_lo);
}

// Pass 1 of exp_row in lanes, when max_logit = apply(logit, smax) for the
// largest score smax. u = apply(s) - max_logit lies within 1 of
// -P, P = (smax - s) m / 2^shift. For d = smax - s (any kept key: d < 2^32),
// H = VMULH.U32(d, m) = floor(d m / 2^32) against thr = (2^31 - 2^25) / 2^(32-shift):
// H < thr gives P < 2^31 - 2^25, so u fits int32 and the modular difference
// is exact; H >= thr gives u <= -2^31 + 2^25 + 1, where exp2_q30 is 0 as at
// INT32_MIN, so the lane saturates to INT32_MIN (as does a masked key). For
// shift > 32, P < 2^30 always.
template <bool kHighShift>
void logit_lanes(const int32_t* s, size_t n, int32_t m, int32_t shift, int32_t smax, int64_t max_logit, int32_t* e) {
  const int32x4_t mv = vdupq_n_s32(m);
  const uint32_t c_half = uint32_t{1} << ((shift - 1) & 31);
  const uint32_t hi_scale = shift <= 32 ? uint32_t{1} << ((32 - shift) & 31) : 0;
  const uint32_t max_lo = static_cast<uint32_t>(static_cast<uint64_t>(max_logit));
  const uint32x4_t thr = vdupq_n_u32(shift <= 32 ? (uint32_t{1} << (shift - 1)) - (uint32_t{1} << (shift - 7))
                                                 : 0xffffffffu);
  const uint32x4_t smax_v = vdupq_n_u32(u32(smax));
  const int32x4_t saturated = vdupq_n_s32(INT32_MIN);
  auto lanes = [&](int32x4_t sv) {
    const uint32x4_t u = logit_diff_lanes<kHighShift>(sv, mv, m, shift, c_half, hi_scale, max_lo);
    const uint32x4_t h = vmulhq_u32(vsubq_u32(smax_v, vreinterpretq_u32_s32(sv)), vreinterpretq_u32_s32(mv));
    const mve_pred16_t keep = vcmpneq_m_n_s32(sv, INT32_MIN, vcmphiq_u32(thr, h));
    return vpselq_s32(vreinterpretq_s32_u32(u), saturated, keep);
  };
  size_t j = 0;
  for (; j + 4 <= n; j += 4) vst1q_s32(e + j, lanes(vld1q_s32(s + j)));
  if (j < n) {
    const mve_pred16_t p = tail32(n, j);
    vstrwq_p_s32(e + j, lanes(vld1q_z_s32(s + j, p)), p);
  }
}

// exp_row in one pass for a logit shift in [8, 30] and |max_logit| <=
// 2^(61 - shift), masked keys included, without the row's largest score:
// with x = s m = hi 2^32 + lo (hi = VRMULH(s, m), lo in [-2^31, 2^31) the
// low word as signed), e = [s < 0] and G = 2^(shift-1) - max_logit 2^shift
// = GH 2^32 + F (F even, in [-2^31 + 2, 2^31 + 2)),
//   u = apply(logit, s) - max_logit = floor((x + 2^(shift-1) - e - max_logit 2^shift) / 2^shift)
//     = (hi + GH) 2^(32-shift) + floor((lo - e + F) / 2^shift),
// where floor((lo - e) / 2) is VHADD(lo, s >> 31), F / 2 joins it exactly
// (F even) and the rest is an arithmetic shift by shift - 1. The first term
// by a saturating shift and the sum by a saturating add: a lane whose u is
// below INT32_MIN, or within 2^(32-shift) <= 2^24 of it, ends below
// -31 2^26, where exp2_q30 is 0 as at INT32_MIN; otherwise it is exact.
struct LogitSplit {
  int32_t gh, f_half;
};

inline bool logit_split(int32_t shift, int64_t max_logit, LogitSplit* out) {
  if (shift < 8 || shift > 30) return false;
  const int64_t limit = int64_t{1} << (61 - shift);
  if (max_logit > limit || max_logit < -limit) return false;
  const int64_t g =
      (int64_t{1} << (shift - 1)) - static_cast<int64_t>(static_cast<uint64_t>(max_logit) << shift);
  int64_t f = static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(g)));
  if (f < INT32_MIN + 2) f += int64_t{1} << 32;
  out->gh = static_cast<int32_t>((g - f) >> 32);
  out->f_half = static_cast<int32_t>(f / 2);
  return true;
}

int64_t exp_row_split(const int32_t* s, size_t n, int32_t m, int32_t shift, LogitSplit ls, int32_t* e) {
  const int32x4_t mv = vdupq_n_s32(m);
  const int32_t minus_sh1 = 1 - shift, up = 32 - shift;
  int32_t ln2 = kLn2Q30, third2 = 2 * kThirdQ30;
  asm("" : "+r"(ln2), "+r"(third2));  // in registers (exp2_q30_lanes)
  auto lanes = [&](int32x4_t sv) {
    const int32x4_t lo = vmulq_n_s32(sv, m);
    const int32x4_t hi = vrmulhq_s32(sv, mv);
    const int32x4_t t = vshlq_r_s32(vaddq_n_s32(vhaddq_s32(lo, vshrq_n_s32(sv, 31)), ls.f_half), minus_sh1);
    const int32x4_t u = vqaddq_s32(vqshlq_r_s32(vaddq_n_s32(hi, ls.gh), up), t);
    // A masked key (INT32_MIN, the only s whose lowest set bit is the sign
    // bit) gives s & -s = INT32_MIN, any other s a value >= 0 >= u.
    return exp2_q30_lanes(vminq_s32(u, vandq_s32(sv, vnegq_s32(sv))), ln2, third2);
  };
  int64_t sum = 0;
  const int32_t* sp = s;
  int32_t* ep = e;
  for (size_t v = n / 4; v > 0; --v, sp += 4, ep += 4) {
    const int32x4_t ev = lanes(vld1q_s32(sp));
    vst1q_s32(ep, ev);
    sum = vaddlvaq_s32(sum, ev);
  }
  if (n % 4 != 0) {
    const mve_pred16_t p = vctp32q(static_cast<uint32_t>(n % 4));
    const int32x4_t ev = lanes(vld1q_z_s32(sp, p));
    vstrwq_p_s32(ep, ev, p);
    sum = vaddlvaq_p_s32(sum, ev, p);
  }
  return sum;
}

int64_t exp_row(const int32_t* s, size_t n, FixedMultiplier logit, int64_t max_logit, int32_t* e) {
  const int32_t m = logit.multiplier, shift = logit.shift;
  LogitSplit ls;
  if (logit_split(shift, max_logit, &ls)) return exp_row_split(s, n, m, shift, ls, e);
  // The largest score: when its logit is max_logit (the driver's case), pass 1
  // runs in lanes (logit_lanes).
  int32_t smax = INT32_MIN;
  {
    size_t j = 0;
    for (; j + 4 <= n; j += 4) smax = vmaxvq_s32(smax, vld1q_s32(s + j));
    if (j < n) {
      const mve_pred16_t p = tail32(n, j);
      smax = vmaxvq_p_s32(smax, vld1q_z_s32(s + j, p), p);
    }
  }
  // apply(logit, smax) inline: (x + 2^(shift-1) - [x < 0]) >> shift, |x| < 2^62 (no overflow).
  const int64_t smax_logit =
      asrl(int64_t{smax} * m + (int64_t{1} << (shift - 1)) + (smax < 0 ? -1 : 0), shift);
  const bool lanes_ok = shift >= 8 && smax != INT32_MIN && smax_logit == max_logit;
  if (lanes_ok) {
    if (shift <= 32)
      logit_lanes<false>(s, n, m, shift, smax, max_logit, e);
    else
      logit_lanes<true>(s, n, m, shift, smax, max_logit, e);
  } else {
    scalar_logits(s, n, logit, max_logit, e);
  }
  // Pass 2: the exp, four lanes at a time (e may be s: same index in, same out).
  int64_t sum = 0;
  size_t j = 0;
  for (; j + 4 <= n; j += 4) {
    const int32x4_t ev = exp2_q30_lanes(vld1q_s32(e + j));
    vst1q_s32(e + j, ev);
    sum = vaddlvaq_s32(sum, ev);
  }
  if (j < n) {
    const mve_pred16_t p = tail32(n, j);
    const int32x4_t ev = exp2_q30_lanes(vld1q_z_s32(e + j, p));
    vstrwq_p_s32(e + j, ev, p);
    sum = vaddlvaq_p_s32(sum, ev, p);
  }
  return sum;
}

}  // namespace
}  // namespace mve
}  // namespace tinyattn

#endif  // TINYATTN_MVE_I8_SOFTMAX_INL_H_
