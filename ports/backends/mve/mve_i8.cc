// The Helium (MVE) int8 kernels: the integers of the scalar table
// (scalar_i8.cc), computed sixteen int8 or four int32 lanes at a time.
//
//  - scores: VMLADAVA.S8 dot products of raw int8 values; the zero points
//    come in afterwards, algebraically:
//      sum (q - zq)(k - zk) = sum q k - zq sum k - zk sum q + dk zq zk,
//    with sum q once per row and sum k (VADDVA.S8) only when zq != 0. All
//    of it is modular int32 arithmetic whose final value fits, so it is exact.
//  - exp_row: the 64-bit logit apply() per key in scalar code (SMLAL and the
//    Helium long shift ASRL), saturated to int32 (every u <= INT32_MIN gives
//    0, as the masked keys do); then exp2_q30 four lanes at a time: every
//    rounding_rshift of a product there has non-negative operands, so it is
//    a rounding high multiply (VRMULH) of suitably pre-shifted factors, and
//    the final shift by n is VRSHL.
//  - probabilities: a per-row 32-bit reciprocal gives each quotient to
//    within one; an exact 64-bit remainder test fixes it, so there is no
//    64-bit division per key.
//  - weighted_sum: int32 accumulators over 16 columns at a time, widening
//    byte loads (VLDRB.S32) times a broadcast weight (VMLA.S32); the zero
//    point is the initial value -zv * sum p.
//  - requantize: VMULH gives the high word of acc * multiplier; with a shift
//    above 32 only a negative product with a zero low word rounds
//    differently from VRSHL (ties away from zero), and that is corrected.
// Tails use tail predication (vctp), so nothing outside the given ranges is
// read or written.
#include "mve.h"

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

// Dot products q . k_j (and sum k_j when kSumK) of four keys over dk bytes.
template <bool kSumK>
inline void dot4(const int8_t* q, const int8_t* k0, size_t ldk, size_t dk, int32_t d[4], int32_t sk[4]) {
  const int8_t* k1 = k0 + ldk;
  const int8_t* k2 = k1 + ldk;
  const int8_t* k3 = k2 + ldk;
  int32_t d0 = 0, d1 = 0, d2 = 0, d3 = 0, s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  size_t c = 0;
  for (; c + 16 <= dk; c += 16) {
    const int8x16_t qv = vld1q_s8(q + c);
    const int8x16_t a = vld1q_s8(k0 + c), b = vld1q_s8(k1 + c), e = vld1q_s8(k2 + c), f = vld1q_s8(k3 + c);
    d0 = vmladavaq_s8(d0, qv, a);
    d1 = vmladavaq_s8(d1, qv, b);
    d2 = vmladavaq_s8(d2, qv, e);
    d3 = vmladavaq_s8(d3, qv, f);
    if (kSumK) {
      s0 = vaddvaq_s8(s0, a);
      s1 = vaddvaq_s8(s1, b);
      s2 = vaddvaq_s8(s2, e);
      s3 = vaddvaq_s8(s3, f);
    }
  }
  if (c < dk) {  // zeroing loads: the lanes past dk add nothing
    const mve_pred16_t p = tail8(dk, c);
    const int8x16_t qv = vld1q_z_s8(q + c, p);
    const int8x16_t a = vld1q_z_s8(k0 + c, p), b = vld1q_z_s8(k1 + c, p), e = vld1q_z_s8(k2 + c, p),
                    f = vld1q_z_s8(k3 + c, p);
    d0 = vmladavaq_s8(d0, qv, a);
    d1 = vmladavaq_s8(d1, qv, b);
    d2 = vmladavaq_s8(d2, qv, e);
    d3 = vmladavaq_s8(d3, qv, f);
    if (kSumK) {
      s0 = vaddvaq_s8(s0, a);
      s1 = vaddvaq_s8(s1, b);
      s2 = vaddvaq_s8(s2, e);
      s3 = vaddvaq_s8(s3, f);
    }
  }
  d[0] = d0;
  d[1] = d1;
  d[2] = d2;
  d[3] = d3;
  sk[0] = s0;
  sk[1] = s1;
  sk[2] = s2;
  sk[3] = s3;
}

template <bool kSumK>
inline void dot1(const int8_t* q, const int8_t* k0, size_t dk, int32_t* d, int32_t* sk) {
  int32_t d0 = 0, s0 = 0;
  for (size_t c = 0; c < dk; c += 16) {
    const mve_pred16_t p = tail8(dk, c);
    const int8x16_t a = vld1q_z_s8(k0 + c, p);
    d0 = vmladavaq_s8(d0, vld1q_z_s8(q + c, p), a);
    if (kSumK) s0 = vaddvaq_s8(s0, a);
  }
  *d = d0;
  *sk = s0;
}

template <bool kSumK>
void scores_rows(const int8_t* q, const int8_t* k, size_t ldk, size_t count, size_t dk, uint32_t base, uint32_t qz,
                 int32_t* s) {
  size_t j = 0;
  int32_t d[4], sk[4];
  // Four keys per pass: each q vector is loaded once for four dot products.
  for (; j + 4 <= count; j += 4) {
    dot4<kSumK>(q, k + j * ldk, ldk, dk, d, sk);
    for (int i = 0; i < 4; ++i) s[j + i] = static_cast<int32_t>(base + u32(d[i]) - (kSumK ? qz * u32(sk[i]) : 0u));
  }
  for (; j < count; ++j) {
    dot1<kSumK>(q, k + j * ldk, dk, d, sk);
    s[j] = static_cast<int32_t>(base + u32(d[0]) - (kSumK ? qz * u32(sk[0]) : 0u));
  }
}

int32_t scores(const int8_t* q, const int8_t* k, size_t ldk, size_t count, size_t dk, int32_t q_zero, int32_t k_zero,
               int32_t* s) {
  int32_t sum_q = 0;
  for (size_t c = 0; c < dk; c += 16) sum_q = vaddvaq_s8(sum_q, vld1q_z_s8(q + c, tail8(dk, c)));
  // dk zq zk - zk sum q, modulo 2^32: every s_j fits int32, so the wrapped sums are exact.
  const uint32_t base = static_cast<uint32_t>(dk) * u32(q_zero) * u32(k_zero) - u32(k_zero) * u32(sum_q);
  if (q_zero == 0)
    scores_rows<false>(q, k, ldk, count, dk, base, 0, s);
  else
    scores_rows<true>(q, k, ldk, count, dk, base, u32(q_zero), s);
  int32_t max = INT32_MIN;
  for (size_t j = 0; j < count; j += 4) {
    const mve_pred16_t p = tail32(count, j);
    max = vmaxvq_p_s32(max, vld1q_z_s32(s + j, p), p);
  }
  return max;
}

// ---------------------------------------------------------------- exp_row

// 2^(i/32) in Q1.30 (forward_i8.cc's table).
alignas(16) constexpr int32_t kExp2Table[32] = {
    1073741824, 1097253708, 1121280436, 1145833280, 1170923762, 1196563654, 1222764986, 1249540052,
    1276901417, 1304861917, 1333434672, 1362633090, 1392470869, 1422962010, 1454120821, 1485961921,
    1518500250, 1551751076, 1585730000, 1620452965, 1655936265, 1692196547, 1729250827, 1767116489,
    1805811301, 1845353420, 1885761398, 1927054196, 1969251188, 2012372174, 2056437387, 2101467502};
constexpr int32_t kLn2Q30 = 744261118;    // ln(2) * 2^30
constexpr int32_t kThirdQ30 = 357913941;  // 2^30 / 3
constexpr int32_t kOneQ30 = 1 << 30;

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
  const int32x4_t tab = vldrwq_gather_shifted_offset_s32(kExp2Table, i);
  // rounding_rshift(tab * t3, 30) = tab + rounding_rshift(tab * d3, 30): tab * 2^30 shifts out exactly.
  const int32x4_t val = vaddq_s32(tab, vrmulhq_s32(vshlq_n_s32(d3, 2), tab));  // [2^30, 2^31)
  // rounding_rshift(val, n): VRSHL by -n rounds half up, which is the same for val > 0
  // (n = 32 gives 0, as every n in [32, 62] does for val < 2^31).
  return vrshlq_s32(val, minus_n);
}

int64_t exp_row(const int32_t* s, size_t n, FixedMultiplier logit, int64_t max_logit, int32_t* e) {
  // Pass 1: u_j = apply(logit, s_j) - max_logit, saturated below at INT32_MIN (2^u
  // rounds to 0 from there on); INT32_MIN also for a masked key. |s m| < 2^62 and
  // the half below 2^62, so the rounding sum fits int64; (s >> 31) takes one
  // from a negative product: ties away from zero.
  const int32_t m = logit.multiplier, shift = logit.shift;
  const int64_t half = int64_t{1} << (shift - 1);  // shift >= 2 (validate())
  for (size_t j = 0; j < n; ++j) {
    const int32_t sj = s[j];
    const int64_t x = int64_t{sj} * m + half + (sj >> 31);
    const int64_t u = asrl(x, shift) - max_logit;
    const int32_t v = u < INT32_MIN ? INT32_MIN : static_cast<int32_t>(u);
    e[j] = sj == INT32_MIN ? INT32_MIN : v;
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

inline int bit_length(uint64_t x) { return 64 - __builtin_clzll(x); }

void probabilities(const int32_t* e, size_t n, int64_t sum, int32_t* p) {
  const uint64_t s = static_cast<uint64_t>(sum);
  const uint64_t half = s / 2;
  const int b = bit_length(s);  // 2^(b-1) <= s < 2^b
  // Outside [2^23, 2^46) (sums below the largest e = 2^30 of exp_row, or rows
  // of over 2^16 keys), the division itself.
  if (b < 24 || b > 46) {
    for (size_t j = 0; j < n; ++j)
      p[j] = static_cast<int32_t>((static_cast<uint64_t>(e[j]) * kProbOne + half) / s);
    return;
  }
  // r ~ 2^(b+31) / s in [2^31, 2^32) from the top 32 bits of s, so
  // e * r / 2^(b+16) ~ e * 2^15 / s to within 2^-14 (e <= s); one 64-bit division per row.
  const int t = b > 32 ? b - 32 : 0;
  const int bt = b - t;  // bit length of s >> t, at most 32
  const uint32_t st = static_cast<uint32_t>(s >> t);
  const uint32_t r = static_cast<uint32_t>(((uint64_t{1} << (bt + 31)) - 1) / st);
  const int sh = b - 16;                           // in [8, 30]
  const uint32_t round = uint32_t{1} << (sh - 1);  // + 1/2: floor(s/2)/s, to within 1/s
  const uint32_t s_lo = static_cast<uint32_t>(s), s_hi = static_cast<uint32_t>(s >> 32);
  for (size_t j = 0; j < n; ++j) {
    const uint32_t ej = static_cast<uint32_t>(e[j]);
    const uint32_t hi = static_cast<uint32_t>((static_cast<uint64_t>(ej) * r) >> 32);
    uint32_t qt = (hi + round) >> sh;  // the quotient, or one off either way
    // The exact remainder (e 2^15 + floor(s/2)) - qt s: |qt s| < 2^63.
    const uint64_t num = (static_cast<uint64_t>(ej) << 15) + half;
    const uint64_t prod = static_cast<uint64_t>(qt) * s_lo + (static_cast<uint64_t>(qt * s_hi) << 32);
    const int64_t rem = static_cast<int64_t>(num - prod);
    if (rem < 0)
      --qt;
    else if (static_cast<uint64_t>(rem) >= s)
      ++qt;
    p[j] = static_cast<int32_t>(qt);
  }
}

// ---------------------------------------------------------------- weighted_sum

void weighted_sum(const int32_t* p, const int8_t* v, size_t ldv, size_t count, size_t dv, int32_t v_zero,
                  int32_t* acc) {
  // sum_j p_j (v_jc - zv) = sum_j p_j v_jc - zv sum_j p_j: the accumulators
  // start at -zv sum p (modular; the final sums fit int32).
  int32_t sum_p = 0;
  for (size_t j = 0; j < count; j += 4) {
    const mve_pred16_t pr = tail32(count, j);
    sum_p = vaddvaq_p_s32(sum_p, vld1q_z_s32(p + j, pr), pr);
  }
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
  for (size_t c = 0; c < n; c += 4) {
    const mve_pred16_t pr = tail32(n, c);
    const int32x4_t a = vld1q_z_s32(acc + c, pr);
    int32x4_t h = vmulhq_s32(a, vdupq_n_s32(m));
    const mve_pred16_t tie = vcmpeqq_m_n_s32(vmulq_n_s32(a, m), 0, vcmpltq_n_s32(a, 0));
    h = vsubq_m_n_s32(h, h, 1, tie);
    // Clamp before adding the zero point: |value| < 2^30, no overflow either way.
    const int32x4_t r = vminq_s32(vmaxq_s32(vrshlq_n_s32(h, minus_k), lo), hi);
    vstrbq_p_s32(y + c, vaddq_n_s32(r, y_zero), pr);
  }
}

constexpr KernelsI8 kKernelsI8{"mve", simd_target, scores, exp_row, probabilities, weighted_sum, requantize};

}  // namespace

const KernelsI8& kernels_i8() { return kKernelsI8; }

}  // namespace mve
}  // namespace tinyattn

#endif  // __ARM_FEATURE_MVE & 1
