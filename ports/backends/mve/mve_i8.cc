// The Helium (MVE) int8 kernels: the integers of the scalar table
// (scalar_i8.cc), computed sixteen int8 or four int32 lanes at a time.
//
//  - scores: VMLADAVA.S8 dot products of raw int8 values, four keys per
//    pass; the zero points come in algebraically:
//      sum (q - zq)(k - zk) = sum q k + sum k (-zq) - zk sum q + dk zq zk,
//    with sum q once per row (the last two terms start each sum) and
//    sum k (-zq) as a second VMLADAVA into the same sum when zq != 0. All of
//    it is modular int32 arithmetic whose final value fits, so it is exact.
//    Back-to-back keys of Dk up to 64 (the driver's) take scores_packed.
//  - exp_row: the logit difference apply(logit, s) - max_logit in modular
//    int32 lanes (exact where it fits; lanes where it cannot are found from
//    the score gap and saturate to INT32_MIN, where 2^u is 0 anyway), fused
//    with exp2_q30 for rows without masked keys; the scalar 64-bit code only
//    for unusual plans. exp2_q30 runs four lanes at a time: every
//    rounding_rshift of a product there has non-negative operands, so it is
//    a rounding high multiply (VRMULH) of suitably pre-shifted factors, and
//    the final shift by n is VRSHL.
//  - probabilities: a per-row 32-bit reciprocal gives each quotient or one
//    less (VMULH); the exact comparison that decides is rewritten so that it
//    runs in uint32 lanes (no 64-bit work per key, no 64-bit division per row).
//  - weighted_sum: int16 weights times byte gathers of a V column over eight
//    keys (VMLADAVA.S16), four columns per pass; rows with a weight of 2^15
//    use int32 accumulators over 16 columns, widening byte loads (VLDRB.S32)
//    times a broadcast weight (VMLA.S32). The zero point is the initial value
//    -zv * sum p.
//  - requantize: VMULH gives the high word of acc * multiplier; with a shift
//    above 32 only a negative product with a zero low word rounds
//    differently from VRSHL (ties away from zero), and that is corrected.
// Loops run whole vectors unpredicated and finish with one tail-predicated
// step (vctp, zeroing loads, predicated stores), so nothing outside the given
// ranges is read or written (GCC 12 wraps every predicate of a predicated
// loop in extra VMRS/VMSR moves).
#include "mve.h"
#include "backends/int8_fixed.h"
#include "port.h"

#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 1)

#include <arm_mve.h>

#include <climits>

namespace tinyattn {
namespace mve {

namespace {

const char* simd_target() { return "MVE"; }

// Lanes [0, n - i) of the next 16-byte or 4-word vector (n - i may exceed the vector).
inline mve_pred16_t tail8(size_t n, size_t i) { return vctp8q(static_cast<uint32_t>(n - i)); }
inline mve_pred16_t tail32(size_t n, size_t i) { return vctp32q(static_cast<uint32_t>(n - i)); }
inline uint32_t u32(int32_t x) { return static_cast<uint32_t>(x); }

// ---------------------------------------------------------------- scores

// How the zero point of q enters the dot products.
enum class QZero {
  kNone,    // zq = 0: sum q k alone
  kFolded,  // -zq fits int8: sum q k + sum k (-zq), one more VMLADAVA into the same sum
  kSplit,   // zq = -128: sum k apart (VADDVA), one key at a time
};

// s_j = base + sum_c q_c k_jc (- zq sum_c k_jc) for four keys, modulo 2^32:
// `whole` vectors of 16 bytes, then the rest (dk mod 16 bytes, predicate tail).
// Pointers step with the loop (post-increment loads): fewer live registers
// than base + index.
template <QZero kMode>
inline void dot4(const int8_t* q, const int8_t* k0, size_t ldk, size_t whole, mve_pred16_t tail, bool has_tail,
                 int8x16_t nzq, int32_t base, int32_t* s) {
  const int8_t* k1 = k0 + ldk;
  const int8_t* k2 = k1 + ldk;
  const int8_t* k3 = k2 + ldk;
  int32_t d0 = base, d1 = base, d2 = base, d3 = base;
  for (size_t v = whole; v > 0; --v) {
    const int8x16_t qv = vld1q_s8(q);
    q += 16;
    const int8x16_t a = vld1q_s8(k0), b = vld1q_s8(k1), e = vld1q_s8(k2), f = vld1q_s8(k3);
    k0 += 16;
    k1 += 16;
    k2 += 16;
    k3 += 16;
    d0 = vmladavaq_s8(d0, qv, a);
    d1 = vmladavaq_s8(d1, qv, b);
    d2 = vmladavaq_s8(d2, qv, e);
    d3 = vmladavaq_s8(d3, qv, f);
    if (kMode == QZero::kFolded) {
      d0 = vmladavaq_s8(d0, nzq, a);
      d1 = vmladavaq_s8(d1, nzq, b);
      d2 = vmladavaq_s8(d2, nzq, e);
      d3 = vmladavaq_s8(d3, nzq, f);
    }
  }
  if (has_tail) {  // zeroing loads: the lanes past dk add nothing
    const int8x16_t qv = vld1q_z_s8(q, tail);
    const int8x16_t a = vld1q_z_s8(k0, tail), b = vld1q_z_s8(k1, tail), e = vld1q_z_s8(k2, tail),
                    f = vld1q_z_s8(k3, tail);
    d0 = vmladavaq_s8(d0, qv, a);
    d1 = vmladavaq_s8(d1, qv, b);
    d2 = vmladavaq_s8(d2, qv, e);
    d3 = vmladavaq_s8(d3, qv, f);
    if (kMode == QZero::kFolded) {
      d0 = vmladavaq_s8(d0, nzq, a);
      d1 = vmladavaq_s8(d1, nzq, b);
      d2 = vmladavaq_s8(d2, nzq, e);
      d3 = vmladavaq_s8(d3, nzq, f);
    }
  }
  s[0] = d0;
  s[1] = d1;
  s[2] = d2;
  s[3] = d3;
}

template <QZero kMode>
inline int32_t dot1(const int8_t* q, const int8_t* k0, size_t dk, int8x16_t nzq, int32_t base, int32_t q_zero) {
  int32_t d = base, sk = 0;
  for (size_t c = 0; c < dk; c += 16) {
    const mve_pred16_t p = tail8(dk, c);
    const int8x16_t a = vld1q_z_s8(k0 + c, p);
    d = vmladavaq_s8(d, vld1q_z_s8(q + c, p), a);
    if (kMode == QZero::kFolded) d = vmladavaq_s8(d, nzq, a);
    if (kMode == QZero::kSplit) sk = vaddvaq_s8(sk, a);
  }
  return kMode == QZero::kSplit ? static_cast<int32_t>(u32(d) - u32(q_zero) * u32(sk)) : d;
}

template <QZero kMode>
void score_keys(const int8_t* q, const int8_t* k, size_t ldk, size_t count, size_t dk, int32_t q_zero, int32_t base,
                int32_t* s) {
  // -zq in every lane (kFolded: zq in [-127, 127]).
  const int8x16_t nzq = vdupq_n_s8(static_cast<int8_t>(kMode == QZero::kFolded ? -q_zero : 0));
  size_t j = 0;
  // Four keys per pass: each q vector is loaded once for four dot products
  // (back-to-back keys of Dk up to 64 take scores_packed instead).
  if (kMode != QZero::kSplit) {
    const size_t whole = dk / 16;
    const mve_pred16_t tail = tail8(dk, whole * 16);
    const bool has_tail = dk % 16 != 0;
    for (; j + 4 <= count; j += 4, k += 4 * ldk) dot4<kMode>(q, k, ldk, whole, tail, has_tail, nzq, base, s + j);
  }
  for (; j < count; ++j, k += ldk) s[j] = dot1<kMode>(q, k, dk, nzq, base, q_zero);
}

// scores for keys stored back to back (ldk = dk <= 64, the driver's layout):
// dk = 16 kWhole + rem, rem < 16 only with kTail. One pointer walks the keys
// with post-increment loads (a key's last rem bytes in one zeroing load, so
// nothing past the last key is read), the query's vectors stay in registers,
// the four sums of a pass start at 0 and go to s as one vector (lane moves)
// plus the base, and the running maximum is a vector.
template <QZero kMode, int kWhole, bool kTail>
int32_t scores_packed(const int8_t* q, const int8_t* k, size_t count, size_t dk, int32_t q_zero, int32_t k_zero,
                      int32_t* s) {
  const size_t rem = kTail ? dk - 16 * kWhole : 0;
  const mve_pred16_t tail_p = vctp8q(static_cast<uint32_t>(rem));
  int8x16_t qv[kWhole + (kTail ? 1 : 0)];
  int32_t sum_q = 0;
#pragma GCC unroll 4
  for (int v = 0; v < kWhole; ++v) {
    qv[v] = vld1q_s8(q + 16 * v);
    sum_q = vaddvaq_s8(sum_q, qv[v]);
  }
  if (kTail) {
    qv[kWhole] = vld1q_z_s8(q + 16 * kWhole, tail_p);  // zero lanes: they add nothing
    sum_q = vaddvaq_s8(sum_q, qv[kWhole]);
  }
  const uint32_t width = kTail ? static_cast<uint32_t>(dk) : 16u * kWhole;
  const int32_t base = static_cast<int32_t>(width * u32(q_zero) * u32(k_zero) - u32(k_zero) * u32(sum_q));
  const int8x16_t nzq = vdupq_n_s8(static_cast<int8_t>(kMode == QZero::kFolded ? -q_zero : 0));
  // One key's sum (without the base), modulo 2^32.
  auto dot = [&](const int8_t*& kp) {
    int32_t d = 0;
#pragma GCC unroll 4
    for (int v = 0; v < kWhole; ++v) {
      const int8x16_t a = vld1q_s8(kp);
      kp += 16;
      d = vmladavaq_s8(d, qv[v], a);
      if (kMode == QZero::kFolded) d = vmladavaq_s8(d, nzq, a);
    }
    if (kTail) {
      const int8x16_t a = vld1q_z_s8(kp, tail_p);
      kp += rem;
      d = vmladavaq_s8(d, qv[kWhole], a);
      if (kMode == QZero::kFolded) d = vmladavaq_s8(d, nzq, a);
    }
    return d;
  };
  int32x4_t maxv = vdupq_n_s32(INT32_MIN);
  size_t j = 0;
  for (; j + 4 <= count; j += 4) {
    const int32_t d0 = dot(k), d1 = dot(k), d2 = dot(k), d3 = dot(k);
    int32x4_t sv = vdupq_n_s32(d0);
    sv = vsetq_lane_s32(d1, sv, 1);
    sv = vsetq_lane_s32(d2, sv, 2);
    sv = vsetq_lane_s32(d3, sv, 3);
    sv = vaddq_n_s32(sv, base);
    vst1q_s32(s + j, sv);
    maxv = vmaxq_s32(maxv, sv);
  }
  int32_t max = vmaxvq_s32(INT32_MIN, maxv);
  for (; j < count; ++j) {
    const int32_t sj = static_cast<int32_t>(u32(dot(k)) + u32(base));
    s[j] = sj;
    max = sj > max ? sj : max;
  }
  return max;
}

// scores_packed for the other widths, in frames of their own: inlined into
// scores they would share its register allocation with the usual widths'
// loops, which then spill more.
template <QZero kMode, int kWhole, bool kTail>
__attribute__((noinline)) int32_t scores_packed_apart(const int8_t* q, const int8_t* k, size_t count, size_t dk,
                                                      int32_t q_zero, int32_t k_zero, int32_t* s) {
  return scores_packed<kMode, kWhole, kTail>(q, k, count, dk, q_zero, k_zero, s);
}

int32_t scores(const int8_t* q, const int8_t* k, size_t ldk, size_t count, size_t dk, int32_t q_zero, int32_t k_zero,
               int32_t* s) {
  if (ldk == dk && q_zero != -128) {
    const bool folded = q_zero != 0;
#define TINYATTN_MVE_PACKED(kWhole, kTail)                                                           \
  return folded ? scores_packed<QZero::kFolded, kWhole, kTail>(q, k, count, dk, q_zero, k_zero, s) \
                : scores_packed<QZero::kNone, kWhole, kTail>(q, k, count, dk, q_zero, k_zero, s)
    // The usual widths first (their calls pay no more tests than before).
    if (dk == 16) TINYATTN_MVE_PACKED(1, false);
    if (dk == 32) TINYATTN_MVE_PACKED(2, false);
    if (dk == 64) TINYATTN_MVE_PACKED(4, false);
#undef TINYATTN_MVE_PACKED
#define TINYATTN_MVE_PACKED(kWhole, kTail)                                                                 \
  return folded ? scores_packed_apart<QZero::kFolded, kWhole, kTail>(q, k, count, dk, q_zero, k_zero, s) \
                : scores_packed_apart<QZero::kNone, kWhole, kTail>(q, k, count, dk, q_zero, k_zero, s)
    if (dk < 64) {
      switch (dk / 16 * 2 + (dk % 16 != 0)) {
        case 1: TINYATTN_MVE_PACKED(0, true);
        case 3: TINYATTN_MVE_PACKED(1, true);
        case 5: TINYATTN_MVE_PACKED(2, true);
        case 6: TINYATTN_MVE_PACKED(3, false);
        default: TINYATTN_MVE_PACKED(3, true);
      }
    }
#undef TINYATTN_MVE_PACKED
  }
  int32_t sum_q = 0;
  for (size_t c = 0; c < dk; c += 16) sum_q = vaddvaq_s8(sum_q, vld1q_z_s8(q + c, tail8(dk, c)));
  // dk zq zk - zk sum q, modulo 2^32: every s_j fits int32, so the wrapped sums are exact.
  const int32_t base =
      static_cast<int32_t>(static_cast<uint32_t>(dk) * u32(q_zero) * u32(k_zero) - u32(k_zero) * u32(sum_q));
  if (q_zero == 0)
    score_keys<QZero::kNone>(q, k, ldk, count, dk, q_zero, base, s);
  else if (q_zero != -128)
    score_keys<QZero::kFolded>(q, k, ldk, count, dk, q_zero, base, s);
  else
    score_keys<QZero::kSplit>(q, k, ldk, count, dk, q_zero, base, s);
  // Whole vectors unpredicated, then one predicated step: GCC 12 wraps every
  // predicate of a predicated loop in extra VMRS/VMSR moves.
  int32_t max = INT32_MIN;
  size_t j = 0;
  for (; j + 4 <= count; j += 4) max = vmaxvq_s32(max, vld1q_s32(s + j));
  if (j < count) {
    const mve_pred16_t p = tail32(count, j);
    max = vmaxvq_p_s32(max, vld1q_z_s32(s + j, p), p);
  }
  return max;
}

// ---------------------------------------------------------------- exp_row

// exp2_q30(u) for u in [INT32_MIN, 0], four lanes. With u = -n + f / 2^26:
// n = -(u >> 26) <= 32 and f = u mod 2^26. VRMULH(a, b) = (a b + 2^31) >> 32
// is rounding_rshift(a b, 32) for a b >= 0, so rounding_rshift(x y, 32 - k)
// is VRMULH(x << k, y) while x << k fits.
inline int32x4_t exp2_q30_lanes(int32x4_t u) {
  const int32x4_t minus_n = vshrq_n_s32(u, 26);
  const uint32x4_t uu = vreinterpretq_u32_s32(u);
  const uint32x4_t i = vshrq_n_u32(vshlq_n_u32(uu, 6), 27);  // f >> 21
  // r << 6 (r = f mod 2^21 < 2^21): z = rounding_rshift(r ln2, 26)
  const int32x4_t r6 = vreinterpretq_s32_u32(vshrq_n_u32(vshlq_n_u32(uu, 11), 5));
  const int32x4_t z = vrmulhq_s32(r6, vdupq_n_s32(kLn2Q30));  // < 2^25
  const int32x4_t z2 = vshlq_n_s32(z, 1), z4 = vshlq_n_s32(z, 2);
  const int32x4_t t1 = vaddq_n_s32(vrmulhq_s32(z4, vdupq_n_s32(kThirdQ30)), kOneQ30);  // 1 + z/3
  const int32x4_t t2 = vaddq_n_s32(vrmulhq_s32(z2, t1), kOneQ30);                       // 1 + z/2 (1 + z/3)
  const int32x4_t d3 = vrmulhq_s32(z4, t2);  // t3 - 1 in Q30, t3 = 1 + z (...), < 2^25
  const int32x4_t tab = vldrwq_gather_shifted_offset_s32(kExp2TableQ30, i);
  // rounding_rshift(tab * t3, 30) = tab + rounding_rshift(tab * d3, 30): tab * 2^30 shifts out exactly.
  const int32x4_t val = vaddq_s32(tab, vrmulhq_s32(vshlq_n_s32(d3, 2), tab));  // [2^30, 2^31)
  // rounding_rshift(val, n): VRSHL by -n rounds half up, which is the same for val > 0
  // (n = 32 gives 0, as every n in [32, 62] does for val < 2^31).
  return vrshlq_s32(val, minus_n);
}

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

// exp_row for a row without masked keys when logit_lanes applies: the logit
// and the exp in one pass, and the saturation without predicates: lanes with
// H >= thr take min(u, INT32_MIN), the others min(u, 0) = u (u <= 0).
template <bool kHighShift>
int64_t exp_row_fused(const int32_t* s, size_t n, int32_t m, int32_t shift, int32_t smax, int64_t max_logit,
                      int32_t* e) {
  const int32x4_t mv = vdupq_n_s32(m);
  const uint32_t c_half = uint32_t{1} << ((shift - 1) & 31);
  const uint32_t hi_scale = shift <= 32 ? uint32_t{1} << ((32 - shift) & 31) : 0;
  const uint32_t max_lo = static_cast<uint32_t>(static_cast<uint64_t>(max_logit));
  // thr - 1 (shift <= 32; shift >= 8 so thr >= 126), H < 2^31: thr - 1 - H keeps its sign.
  const uint32_t thr_m1 = shift <= 32 ? (uint32_t{1} << (shift - 1)) - (uint32_t{1} << (shift - 7)) - 1 : 0;
  auto lanes = [&](int32x4_t sv) {
    int32x4_t u = vreinterpretq_s32_u32(logit_diff_lanes<kHighShift>(sv, mv, m, shift, c_half, hi_scale, max_lo));
    if (!kHighShift) {
      const uint32x4_t h = vmulhq_u32(vsubq_u32(vdupq_n_u32(u32(smax)), vreinterpretq_u32_s32(sv)),
                                      vreinterpretq_u32_s32(mv));
      const uint32x4_t sat = vandq_u32(vsubq_u32(vdupq_n_u32(thr_m1), h), vdupq_n_u32(0x80000000u));
      u = vminq_s32(u, vreinterpretq_s32_u32(sat));
    }
    return exp2_q30_lanes(u);
  };
  int64_t sum = 0;
  size_t j = 0;
  for (; j + 4 <= n; j += 4) {
    const int32x4_t ev = lanes(vld1q_s32(s + j));
    vst1q_s32(e + j, ev);
    sum = vaddlvaq_s32(sum, ev);
  }
  if (j < n) {
    const mve_pred16_t p = tail32(n, j);
    const int32x4_t ev = lanes(vld1q_z_s32(s + j, p));
    vstrwq_p_s32(e + j, ev, p);
    sum = vaddlvaq_p_s32(sum, ev, p);
  }
  return sum;
}

int64_t exp_row(const int32_t* s, size_t n, FixedMultiplier logit, int64_t max_logit, int32_t* e) {
  const int32_t m = logit.multiplier, shift = logit.shift;
  // The largest score: when its logit is max_logit (the driver's case), pass 1
  // runs in lanes (logit_lanes).
  int32_t smax = INT32_MIN, smin = INT32_MAX;
  {
    size_t j = 0;
    for (; j + 4 <= n; j += 4) {
      const int32x4_t sv = vld1q_s32(s + j);
      smax = vmaxvq_s32(smax, sv);
      smin = vminvq_s32(smin, sv);
    }
    if (j < n) {
      const mve_pred16_t p = tail32(n, j);
      const int32x4_t sv = vld1q_z_s32(s + j, p);
      smax = vmaxvq_p_s32(smax, sv, p);
      smin = vminvq_p_s32(smin, sv, p);
    }
  }
  // apply(logit, smax) inline: (x + 2^(shift-1) - [x < 0]) >> shift, |x| < 2^62 (no overflow).
  const int64_t smax_logit =
      asrl(int64_t{smax} * m + (int64_t{1} << (shift - 1)) + (smax < 0 ? -1 : 0), shift);
  const bool lanes_ok = shift >= 8 && smax != INT32_MIN && smax_logit == max_logit;
  if (lanes_ok && smin != INT32_MIN)  // no masked key
    return shift <= 32 ? exp_row_fused<false>(s, n, m, shift, smax, max_logit, e)
                       : exp_row_fused<true>(s, n, m, shift, smax, max_logit, e);
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

// ---------------------------------------------------------------- weighted_sum

// One weight broadcast against 16 columns (any weights, any ldv).
void weighted_sum_rows(const int32_t* p, const int8_t* v, size_t ldv, size_t count, size_t dv, int32_t v_zero,
                  int32_t* acc) {
  // sum_j p_j (v_jc - zv) = sum_j p_j v_jc - zv sum_j p_j: the accumulators
  // start at -zv sum p (modular; the final sums fit int32).
  int32_t sum_p = 0;
  size_t w = 0;
  for (; w + 4 <= count; w += 4) sum_p = vaddvaq_s32(sum_p, vld1q_s32(p + w));
  if (w < count) sum_p = vaddvaq_s32(sum_p, vld1q_z_s32(p + w, tail32(count, w)));  // zeroed lanes add 0
  const int32_t start = static_cast<int32_t>(0u - u32(v_zero) * u32(sum_p));
  size_t c = 0;
  for (; c + 16 <= dv; c += 16) {
    int32x4_t a0 = vdupq_n_s32(start), a1 = a0, a2 = a0, a3 = a0;
    const int8_t* vc = v + c;
    for (size_t j = 0; j < count; ++j, vc += ldv) {
      const int32_t pj = p[j];
      a0 = vmlaq_n_s32(a0, vldrbq_s32(vc), pj);
      a1 = vmlaq_n_s32(a1, vldrbq_s32(vc + 4), pj);
      a2 = vmlaq_n_s32(a2, vldrbq_s32(vc + 8), pj);
      a3 = vmlaq_n_s32(a3, vldrbq_s32(vc + 12), pj);
    }
    vst1q_s32(acc + c, a0);
    vst1q_s32(acc + c + 4, a1);
    vst1q_s32(acc + c + 8, a2);
    vst1q_s32(acc + c + 12, a3);
  }
  // The last 1..15 columns, four at a time, predicated.
  for (; c < dv; c += 4) {
    const mve_pred16_t pr = tail32(dv, c);
    int32x4_t a = vdupq_n_s32(start);
    const int8_t* vc = v + c;
    for (size_t j = 0; j < count; ++j, vc += ldv) a = vmlaq_n_s32(a, vldrbq_z_s32(vc, pr), p[j]);
    vstrwq_p_s32(acc + c, a, pr);
  }
}

// Keys in the lanes: column c of V is a byte gather (VLDRB.S16 with offsets
// 0..7 ldv) and VMLADAVA.S16 adds eight products p_j v_jc into the column's
// sum, so one column takes two instructions per eight keys instead of one
// VMLA per four columns per key. The eight weights come as int16 straight
// from the int32 array: a halfword gather at byte offsets 0, 4, .., 28 reads
// the low half of each p_j, which is p_j for every p but kProbOne (a row
// whose weight all sits on one key). No buffer, so the kernel's frame stays
// small (the forward's stack bound, docs/hardening.md). A row with a weight
// of 2^15, or a V stride too long for 16-bit offsets, takes
// weighted_sum_rows.
// acc[c] = start + sum_j p_j v[j ldv + c] for c < dv over `groups` groups of
// eight keys, and (kTail) a last group of fewer keys, zeroing gathers under
// `tail` (the keys past the end add nothing, and p is not read there). The
// tail is a template parameter so that the loop without it keeps every
// operand in a register.
template <bool kTail>
void gather_columns(const int32_t* p, const int8_t* v, size_t ldv, size_t groups, mve_pred16_t tail, size_t dv,
                    int32_t start, int32_t* acc) {
  const uint16x8_t o0 = vmulq_n_u16(vidupq_n_u16(0, 1), static_cast<uint16_t>(ldv));
  const uint16x8_t o1 = vaddq_n_u16(o0, 1), o2 = vaddq_n_u16(o0, 2), o3 = vaddq_n_u16(o0, 3);
  const uint16x8_t p_offsets = vidupq_n_u16(0, 4);  // bytes: the low half of p_j, j = 0..7
  const size_t step = 8 * ldv;
  const int16_t* const p16 = reinterpret_cast<const int16_t*>(p);
  const int16_t* const p_end = p16 + 16 * groups;
  // Four columns per pass: each weight vector gathered once for four sums.
  size_t c = 0;
  for (; c + 4 <= dv; c += 4) {
    int32_t a0 = start, a1 = start, a2 = start, a3 = start;
    const int8_t* vc = v + c;
    const int16_t* pg = p16;
    for (; pg != p_end; pg += 16, vc += step) {
      const int16x8_t pw = vldrhq_gather_offset_s16(pg, p_offsets);
      a0 = vmladavaq_s16(a0, pw, vldrbq_gather_offset_s16(vc, o0));
      a1 = vmladavaq_s16(a1, pw, vldrbq_gather_offset_s16(vc, o1));
      a2 = vmladavaq_s16(a2, pw, vldrbq_gather_offset_s16(vc, o2));
      a3 = vmladavaq_s16(a3, pw, vldrbq_gather_offset_s16(vc, o3));
    }
    if (kTail) {
      const int16x8_t pw = vldrhq_gather_offset_z_s16(pg, p_offsets, tail);
      a0 = vmladavaq_s16(a0, pw, vldrbq_gather_offset_z_s16(vc, o0, tail));
      a1 = vmladavaq_s16(a1, pw, vldrbq_gather_offset_z_s16(vc, o1, tail));
      a2 = vmladavaq_s16(a2, pw, vldrbq_gather_offset_z_s16(vc, o2, tail));
      a3 = vmladavaq_s16(a3, pw, vldrbq_gather_offset_z_s16(vc, o3, tail));
    }
    acc[c] = a0;
    acc[c + 1] = a1;
    acc[c + 2] = a2;
    acc[c + 3] = a3;
  }
  for (; c < dv; ++c) {
    int32_t a0 = start;
    const int8_t* vc = v + c;
    const int16_t* pg = p16;
    for (; pg != p_end; pg += 16, vc += step)
      a0 = vmladavaq_s16(a0, vldrhq_gather_offset_s16(pg, p_offsets), vldrbq_gather_offset_s16(vc, o0));
    if (kTail)
      a0 = vmladavaq_s16(a0, vldrhq_gather_offset_z_s16(pg, p_offsets, tail),
                         vldrbq_gather_offset_z_s16(vc, o0, tail));
    acc[c] = a0;
  }
}

void weighted_sum(const int32_t* p, const int8_t* v, size_t ldv, size_t count, size_t dv, int32_t v_zero,
                  int32_t* acc) {
  if (7 * ldv + 3 > 0xffff) return weighted_sum_rows(p, v, ldv, count, dv, v_zero, acc);
  // The sum of the weights (for the zero point) and their maximum.
  int32_t sum_p = 0, max_p = 0;
  size_t j = 0;
  for (; j + 4 <= count; j += 4) {
    const int32x4_t pv = vld1q_s32(p + j);
    sum_p = vaddvaq_s32(sum_p, pv);
    max_p = vmaxvq_s32(max_p, pv);
  }
  if (j < count) {  // zeroed lanes add 0 and do not raise the maximum (p >= 0)
    const int32x4_t pv = vld1q_z_s32(p + j, tail32(count, j));
    sum_p = vaddvaq_s32(sum_p, pv);
    max_p = vmaxvq_s32(max_p, pv);
  }
  if (max_p > 32767) return weighted_sum_rows(p, v, ldv, count, dv, v_zero, acc);
  const int32_t start = static_cast<int32_t>(0u - u32(v_zero) * u32(sum_p));
  const size_t groups = count / 8;
  if (count % 8 == 0) return gather_columns<false>(p, v, ldv, groups, 0, dv, start, acc);
  gather_columns<true>(p, v, ldv, groups, vctp16q(static_cast<uint32_t>(count % 8)), dv, start, acc);
}

// ---------------------------------------------------------------- requantize

void requantize(const int32_t* acc, size_t n, FixedMultiplier output, int32_t y_zero, int8_t* y) {
  const int32_t m = output.multiplier;
  if (output.shift <= 32) {  // not from plan_int8 at any real scale ratio below 2^14
    for (size_t c = 0; c < n; ++c) {
      const int64_t x = y_zero + apply(output, acc[c]);
      y[c] = static_cast<int8_t>(x < -128 ? -128 : (x > 127 ? 127 : x));
    }
    return;
  }
  // x = acc m = H 2^32 + L (0 <= L < 2^32), shift = 32 + k, k >= 1:
  // rounding_rshift(x, shift) = (H + 2^(k-1) - [x < 0 and L == 0]) >> k, and
  // VRSHL by -k adds the 2^(k-1).
  const int32_t minus_k = 32 - output.shift;
  const int32x4_t lo = vdupq_n_s32(-128 - y_zero), hi = vdupq_n_s32(127 - y_zero);
  // Lanes without predicates: [x < 0 and L == 0] is the sign bit of
  // acc & ~(L | -L) (L | -L has the sign bit set exactly when L != 0).
  auto lanes = [&](int32x4_t a) {
    const int32x4_t low = vmulq_n_s32(a, m);
    const int32x4_t tie = vreinterpretq_s32_u32(
        vshrq_n_u32(vreinterpretq_u32_s32(vbicq_s32(a, vorrq_s32(low, vnegq_s32(low)))), 31));
    const int32x4_t h = vsubq_s32(vmulhq_s32(a, vdupq_n_s32(m)), tie);
    // Clamp before adding the zero point: |value| < 2^30, no overflow either way.
    return vaddq_n_s32(vminq_s32(vmaxq_s32(vrshlq_n_s32(h, minus_k), lo), hi), y_zero);
  };
  size_t c = 0;
  for (; c + 4 <= n; c += 4) vstrbq_s32(y + c, lanes(vld1q_s32(acc + c)));
  if (c < n) {
    const mve_pred16_t pr = tail32(n, c);
    vstrbq_p_s32(y + c, lanes(vld1q_z_s32(acc + c, pr)), pr);
  }
}

constexpr KernelsI8 make_table() {
  KernelsI8 t{};
  t.port = "mve";
  t.simd_target = simd_target;
  t.scores = scores;
  t.exp_row = exp_row;
  t.probabilities = probabilities;
  t.weighted_sum = weighted_sum;
  t.requantize = requantize;
  return t;
}
constexpr KernelsI8 kKernelsI8 = make_table();

}  // namespace

const KernelsI8& kernels_i8() { return kKernelsI8; }

}  // namespace mve

template <>
const KernelsI8* port_kernels_i8<Port::kMve>() {
  return &mve::kernels_i8();
}
}  // namespace tinyattn

#endif  // __ARM_FEATURE_MVE & 1
