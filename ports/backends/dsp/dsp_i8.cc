// The Armv7E-M DSP int8 kernels: the integers of the scalar table
// (scalar_i8.cc) with the dual 16-bit multiply-accumulate SMLAD on word loads.
//
//  - scores: q - zq is widened once per row into halfword pairs (q0,q2),
//    (q1,q3) per word, in the order SXTB16 and SXTB16 ROR #8 widen a word
//    of k; two keys per pass share those loads. The zero point of k comes in
//    algebraically: sum (q - zq)(k - zk) = sum (q - zq) k - zk sum (q - zq),
//    the last term starting each sum (modular int32; the final value fits).
//  - weighted_sum: pairs of keys, (p_j, p_j+1) against (v_jc, v_j+1,c): the
//    words of two rows are interleaved by PKHBT/PKHTB and widened by SXTB16,
//    four columns per pass in registers. The zero point is the initial value
//    -zv sum p. p_j = kProbOne = 2^15 does not fit a signed halfword and
//    enters as -2^15: such a key (one holding the whole row) gets 2^16 v_jc
//    added back.
//  - probabilities: the scalar port's (a per-row 32-bit reciprocal and one
//    exact comparison per key, int8_fixed.h): DSP has nothing faster for it.
//  - exp_row: apply() as one 32x32+64-bit SMLAL per key, then the
//    fixed-point exp in 32-bit words with rounding high multiplies (SMMULR),
//    as mve_i8.cc does four lanes at a time.
//  - requantize: one SMULL per value for the shifts above 32 that plan_int8
//    gives, the rounding corrected as in mve_i8.cc, SSAT to clamp.
// Unaligned word loads go through memcpy (one LDR on Armv7E-M).
#include "backends/int8_fixed.h"
#include "backends/scalar/scalar.h"
#include "port.h"

#if defined(__ARM_FEATURE_DSP)

#include <arm_acle.h>

#include <climits>
#include <cstring>

namespace tinyattn {
namespace dsp {
namespace {

const char* simd_target() { return "DSP"; }

inline uint32_t u32(int32_t x) { return static_cast<uint32_t>(x); }

inline uint32_t load4(const int8_t* p) {
  uint32_t w;
  std::memcpy(&w, p, 4);
  return w;
}

// Bytes 1 and 3 sign-extended to halfwords. GCC 12 has no __ror and does not
// fold a rotation into SXTB16, so the rotated form is written out.
inline uint32_t sxtb16_ror8(uint32_t x) {
  uint32_t r;
  __asm__("sxtb16 %0, %1, ror #8" : "=r"(r) : "r"(x));
  return r;
}
inline uint32_t sxtb16(uint32_t x) { return static_cast<uint32_t>(__sxtb16(static_cast<int32_t>(x))); }

// Low halfword of a, low halfword of b above it (PKHBT a, b, LSL #16).
inline uint32_t pack_low(uint32_t a, uint32_t b) {
  uint32_t r;
  __asm__("pkhbt %0, %1, %2, lsl #16" : "=r"(r) : "r"(a), "r"(b));
  return r;
}
// High halfword of a below the high halfword of b (PKHTB b, a, ASR #16).
inline uint32_t pack_high(uint32_t a, uint32_t b) {
  uint32_t r;
  __asm__("pkhtb %0, %1, %2, asr #16" : "=r"(r) : "r"(b), "r"(a));
  return r;
}

inline int32_t smlad(uint32_t a, uint32_t b, int32_t acc) {
  return __smlad(static_cast<int32_t>(a), static_cast<int32_t>(b), acc);
}

// ---------------------------------------------------------------- scores

// Columns of q widened per pass (the stack buffer holds kQChunk / 2 words).
constexpr size_t kQChunk = 64;

int32_t scores(const int8_t* q, const int8_t* k, size_t ldk, size_t count, size_t dk, int32_t q_zero, int32_t k_zero,
               int32_t* s) {
  int32_t sum_q = 0;  // sum (q - zq), |.| < 2^23
  for (size_t c = 0; c < dk; ++c) sum_q += q[c] - q_zero;
  const int32_t start = static_cast<int32_t>(0u - u32(k_zero) * u32(sum_q));
  const uint32_t zz = (u32(q_zero) & 0xFFFFu) * 0x10001u;
  uint32_t qw[kQChunk / 2];  // (q0,q2), (q1,q3) per word of q, minus zq: in [-255, 255]
  for (size_t c0 = 0; c0 < dk; c0 += kQChunk) {
    const size_t len = dk - c0 < kQChunk ? dk - c0 : kQChunk;
    const size_t words = len / 4, rest = len % 4;  // rest only in the last chunk
    for (size_t w = 0; w < words; ++w) {
      const uint32_t x = load4(q + c0 + 4 * w);
      qw[2 * w] = u32(__ssub16(static_cast<int32_t>(sxtb16(x)), static_cast<int32_t>(zz)));
      qw[2 * w + 1] = u32(__ssub16(static_cast<int32_t>(sxtb16_ror8(x)), static_cast<int32_t>(zz)));
    }
    const int8_t* qr = q + c0 + 4 * words;
    const bool first = c0 == 0;
    size_t j = 0;
    for (; j + 2 <= count; j += 2) {
      const int8_t* k0 = k + j * ldk + c0;
      const int8_t* k1 = k0 + ldk;
      int32_t d0 = first ? start : s[j], d1 = first ? start : s[j + 1];
      const uint32_t* qp = qw;
      for (size_t w = words; w > 0; --w, k0 += 4, k1 += 4, qp += 2) {
        const uint32_t a = load4(k0), b = load4(k1);
        const uint32_t q02 = qp[0], q13 = qp[1];
        d0 = smlad(sxtb16(a), q02, d0);
        d1 = smlad(sxtb16(b), q02, d1);
        d0 = smlad(sxtb16_ror8(a), q13, d0);
        d1 = smlad(sxtb16_ror8(b), q13, d1);
      }
      for (size_t c = 0; c < rest; ++c) {
        d0 += (qr[c] - q_zero) * k0[c];
        d1 += (qr[c] - q_zero) * k1[c];
      }
      s[j] = d0;
      s[j + 1] = d1;
    }
    if (j < count) {
      const int8_t* k0 = k + j * ldk + c0;
      int32_t d0 = first ? start : s[j];
      for (size_t w = 0; w < words; ++w, k0 += 4) {
        const uint32_t a = load4(k0);
        d0 = smlad(sxtb16(a), qw[2 * w], d0);
        d0 = smlad(sxtb16_ror8(a), qw[2 * w + 1], d0);
      }
      for (size_t c = 0; c < rest; ++c) d0 += (qr[c] - q_zero) * k0[c];
      s[j] = d0;
    }
  }
  int32_t max = INT32_MIN;
  for (size_t j = 0; j < count; ++j) max = s[j] > max ? s[j] : max;
  return max;
}

// ---------------------------------------------------------------- exp_row

// SMMULR: (a b + 2^31) >> 32, which is rounding_rshift(a b, 32) for a b >= 0
// (GCC 12 has no intrinsic for it and builds it from SMULL and 64-bit adds).
inline int32_t smmulr(int32_t a, int32_t b) {
  int32_t r;
  __asm__("smmulr %0, %1, %2" : "=r"(r) : "r"(a), "r"(b));
  return r;
}

// exp2_q30(u) for u in [INT32_MIN, 0] in 32-bit arithmetic, step for step
// mve_i8.cc's exp2_q30_lanes (which says why each rounding is the same):
// u = -n + f / 2^26, i = f >> 21, r = f mod 2^21.
inline int32_t exp2_q30_word(int32_t u) {
  const uint32_t n = static_cast<uint32_t>(-(u >> 26));  // in [0, 32]
  const uint32_t uu = u32(u);
  const uint32_t i = (uu << 6) >> 27;
  const int32_t r6 = static_cast<int32_t>((uu << 11) >> 5);
  const int32_t z = smmulr(r6, kLn2Q30);
  const int32_t t1 = smmulr(z * 4, kThirdQ30) + kOneQ30;
  const int32_t t2 = smmulr(z * 2, t1) + kOneQ30;
  const int32_t d3 = smmulr(z * 4, t2);
  const int32_t tab = kExp2TableQ30[i];
  const uint32_t val2 = u32(tab + smmulr(d3 * 4, tab)) << 1;  // 2 val, val in [2^30, 2^31)
  // rounding_rshift(val, n) = (floor(2 val / 2^n) + 1) / 2; n = 32 gives 0.
  return n > 31 ? 0 : static_cast<int32_t>(((val2 >> n) + 1) >> 1);
}

int64_t exp_row(const int32_t* s, size_t n, FixedMultiplier logit, int64_t max_logit, int32_t* e) {
  // u = apply(logit, s) - max_logit = (x + h - max_logit 2^shift - [s < 0]) >> shift
  // with x = s m and h = 2^(shift-1) (mve_i8.cc's pass 1), all of it in one
  // SMLAL when shift < 32 and |max_logit| <= 2^(61 - shift). Otherwise the
  // scalar port's (not from plan_int8 at ordinary scales).
  const int32_t m = logit.multiplier, shift = logit.shift;
  const int64_t limit = int64_t{1} << (61 - (shift < 32 ? shift : 31));
  if (shift >= 32 || max_logit > limit || max_logit < -limit) return scalar::i8::exp_row(s, n, logit, max_logit, e);
  const int64_t start = (int64_t{1} << (shift - 1)) - static_cast<int64_t>(static_cast<uint64_t>(max_logit) << shift);
  // u < INT32_MIN (2^u rounds to 0) exactly when the high word of the sum is
  // below -2^(shift-1).
  const int32_t floor_hi = -(int32_t{1} << (shift - 1));
  int64_t sum = 0;
  for (size_t j = 0; j < n; ++j) {
    const int32_t sj = s[j];
    const uint64_t x = static_cast<uint64_t>(start + int64_t{sj} * m + -static_cast<int32_t>(u32(sj) >> 31));
    const int32_t hi = static_cast<int32_t>(x >> 32);
    const uint32_t lo = static_cast<uint32_t>(x);
    const int32_t u = hi < floor_hi || sj == INT32_MIN
                          ? INT32_MIN
                          : static_cast<int32_t>((lo >> shift) | (u32(hi) << (32 - shift)));
    const int32_t ej = exp2_q30_word(u);
    e[j] = ej;
    sum += ej;
  }
  return sum;
}

// ---------------------------------------------------------------- weighted_sum

// Keys per pass: the stack buffer holds kPChunk / 2 pairs of weights.
constexpr size_t kPChunk = 64;

void weighted_sum(const int32_t* p, const int8_t* v, size_t ldv, size_t count, size_t dv, int32_t v_zero,
                  int32_t* acc) {
  // sum_j p_j (v_jc - zv) = sum_j p_j v_jc - zv sum_j p_j (modular; the final sums fit int32).
  uint32_t sum_p = 0;
  for (size_t j = 0; j < count; ++j) sum_p += u32(p[j]);
  const int32_t start = static_cast<int32_t>(0u - u32(v_zero) * sum_p);
  for (size_t c = 0; c < dv; ++c) acc[c] = start;
  const size_t blocked = dv & ~size_t{3};  // columns done four at a time
  uint32_t pw[kPChunk / 2];
  for (size_t j0 = 0; j0 < count; j0 += kPChunk) {
    const size_t len = count - j0 < kPChunk ? count - j0 : kPChunk;
    const size_t pairs = len / 2;
    const bool odd = len % 2 != 0;
    const int32_t* pj = p + j0;
    bool full = false;  // some p_j == kProbOne
    for (size_t i = 0; i < len; ++i) full |= pj[i] == static_cast<int32_t>(kProbOne);
    for (size_t i = 0; i < pairs; ++i) pw[i] = (u32(pj[2 * i]) & 0xFFFFu) | (u32(pj[2 * i + 1]) << 16);
    // The odd last key pairs with itself at weight 0.
    if (odd) pw[pairs] = u32(pj[len - 1]) & 0xFFFFu;
    const int8_t* vj = v + j0 * ldv;
    const size_t ldv2 = 2 * ldv;
    for (size_t c = 0; c < blocked; c += 4) {
      int32_t a0 = acc[c], a1 = acc[c + 1], a2 = acc[c + 2], a3 = acc[c + 3];
      const int8_t* row = vj + c;
      const uint32_t* pp = pw;
      for (size_t i = pairs; i > 0; --i, row += ldv2) {
        const uint32_t x = load4(row), y = load4(row + ldv);
        const uint32_t w = *pp++;
        const uint32_t lo = pack_low(x, y), hi = pack_high(x, y);  // (x0 x1 y0 y1), (x2 x3 y2 y3)
        a0 = smlad(sxtb16(lo), w, a0);
        a1 = smlad(sxtb16_ror8(lo), w, a1);
        a2 = smlad(sxtb16(hi), w, a2);
        a3 = smlad(sxtb16_ror8(hi), w, a3);
      }
      if (odd) {
        const uint32_t x = load4(row);
        const uint32_t w = *pp;
        const uint32_t lo = pack_low(x, x), hi = pack_high(x, x);
        a0 = smlad(sxtb16(lo), w, a0);
        a1 = smlad(sxtb16_ror8(lo), w, a1);
        a2 = smlad(sxtb16(hi), w, a2);
        a3 = smlad(sxtb16_ror8(hi), w, a3);
      }
      acc[c] = a0;
      acc[c + 1] = a1;
      acc[c + 2] = a2;
      acc[c + 3] = a3;
    }
    // kProbOne entered as -2^15: add 2^16 v back (modular).
    if (full) {
      for (size_t i = 0; i < len; ++i) {
        if (pj[i] != static_cast<int32_t>(kProbOne)) continue;
        const int8_t* vi = vj + i * ldv;
        for (size_t c = 0; c < blocked; ++c) acc[c] = static_cast<int32_t>(u32(acc[c]) + (u32(vi[c]) << 16));
      }
    }
    // The last 0..3 columns, one at a time.
    for (size_t c = blocked; c < dv; ++c) {
      int32_t a = acc[c];
      for (size_t i = 0; i < len; ++i) a = static_cast<int32_t>(u32(a) + u32(pj[i]) * u32(vj[i * ldv + c]));
      acc[c] = a;
    }
  }
}

// ---------------------------------------------------------------- requantize

void requantize(const int32_t* acc, size_t n, FixedMultiplier output, int32_t y_zero, int8_t* y) {
  const int32_t m = output.multiplier;
  if (output.shift <= 32 || m <= 0) {  // not from plan_int8 at any real scale ratio below 2^14
    scalar::i8::requantize(acc, n, output, y_zero, y);
    return;
  }
  // x = acc m = H 2^32 + L (one SMULL), shift = 32 + k, k >= 1:
  // rounding_rshift(x, shift) = (H + 2^(k-1) - [x < 0 and L == 0]) >> k
  // (mve_i8.cc's requantize), then SSAT clamps to int8.
  const int k = output.shift - 32;
  const int32_t half = int32_t{1} << (k - 1);
  for (size_t c = 0; c < n; ++c) {
    const int32_t a = acc[c];
    const int64_t x = int64_t{a} * m;
    const int32_t hi = static_cast<int32_t>(x >> 32);
    const bool tie = a < 0 && static_cast<uint32_t>(x) == 0;
    const int32_t v = (hi + half - (tie ? 1 : 0)) >> k;
    y[c] = static_cast<int8_t>(__ssat(v + y_zero, 8));
  }
}

// The scalar table with the kernels above (probabilities stays the scalar
// port's, as the top of this file says).
constexpr KernelsI8 make_table() {
  KernelsI8 t = scalar::table_i8("dsp");
  t.simd_target = simd_target;
  t.scores = scores;
  t.exp_row = exp_row;
  t.weighted_sum = weighted_sum;
  t.requantize = requantize;
  return t;
}
constexpr KernelsI8 kKernelsI8 = make_table();

}  // namespace
}  // namespace dsp

template <>
const KernelsI8* port_kernels_i8<Port::kDsp>() {
  return &dsp::kKernelsI8;
}

}  // namespace tinyattn

#endif  // __ARM_FEATURE_DSP
